package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README is a newcomer's first screen, not the reference.
func TestREADMEWithinItsBound(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	require.NoError(t, err)
	n := strings.Count(string(b), "\n")
	assert.LessOrEqual(t, n, MaxREADMELines, "README.md is %d lines: the reference goes to package docs and docs/", n)
}

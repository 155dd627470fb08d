package wire

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// payload returns a capture of the repository's shared corpus,
// testdata/providers/<name>.
func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "providers", filepath.FromSlash(name)))
	require.NoError(t, err)
	return b
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's Quick start is this program, from its package clause on:
// what a reader pastes is what compiles here.
func TestREADMEQuickStartIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	section := string(readme)
	start := strings.Index(section, "## Quick start")
	require.GreaterOrEqual(t, start, 0)
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	open := strings.Index(section, "```go\npackage main\n")
	require.GreaterOrEqual(t, open, 0, "a whole program in the Quick start")
	block := section[open+len("```go\n"):]
	block = block[:strings.Index(block, "```")]

	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	program := string(src)
	program = program[strings.Index(program, "package main\n"):]
	assert.Equal(t, program, block)
	assert.LessOrEqual(t, strings.Count(block, "\n"), 45)
}

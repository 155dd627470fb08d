package main

import (
	"os"
	"os/exec"
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

// The Quick start's shell steps, run as written in a fresh module beside
// a copy of this repository's place (../llmhistory), with the program
// written where the steps say: the module builds and runs. go mod tidy
// run before the program exists would drop the require, which is why the
// steps put it after.
func TestREADMEQuickStartStepsInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	section := string(readme)
	section = section[strings.Index(section, "## Quick start"):]
	open := strings.Index(section, "```sh\n")
	require.GreaterOrEqual(t, open, 0, "the steps in a sh block")
	steps := section[open+len("```sh\n"):]
	steps = steps[:strings.Index(steps, "```")]

	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	// The steps name the clone ../llmhistory: make that this repository.
	dir := t.TempDir()
	require.NoError(t, os.Symlink(root, filepath.Join(dir, "llmhistory")))
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)

	cwd := dir
	env := append(os.Environ(), "GOFLAGS=", "GONOSUMDB=*", "GOSUMDB=off", "GOWORK=off")
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(steps), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "# write main.go") {
			require.NoError(t, os.WriteFile(filepath.Join(cwd, "main.go"), src, 0o644))
			continue
		}
		require.False(t, strings.HasPrefix(line, "#"), "a step the test does not know: %q", line)
		for _, part := range strings.Split(line, " && ") {
			args := strings.Fields(part)
			switch args[0] {
			case "mkdir":
				require.NoError(t, os.MkdirAll(filepath.Join(cwd, args[len(args)-1]), 0o755))
			case "cd":
				cwd = filepath.Join(cwd, args[1])
			case "go":
				if len(args) > 1 && args[1] == "run" {
					// The program calls OpenAI: without a key the call
					// fails with auth and is recorded; it must build.
					args = []string{"go", "build", "-o", filepath.Join(dir, "quickstart"), "."}
				}
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir, cmd.Env = cwd, env
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s:\n%s", part, out)
				ran++
			default:
				t.Fatalf("a step the test does not know: %q", part)
			}
		}
	}
	assert.GreaterOrEqual(t, ran, 4, "go mod init, edit, tidy and run")
	gomod, err := os.ReadFile(filepath.Join(cwd, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "github.com/llmhistory/llmhistory v0.0.0", "the require survives tidy")
	assert.FileExists(t, filepath.Join(dir, "quickstart"))
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs the command line with captured output.
func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

func TestUsage(t *testing.T) {
	code, _, stderr := runCmd(t, "")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "usage: llmhistory <command>")

	code, stdout, _ := runCmd(t, "", "--help")
	assert.Equal(t, exitOK, code)
	for name := range commands {
		assert.Contains(t, stdout, name)
	}

	code, _, stderr = runCmd(t, "", "frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
}

func TestEverySubcommandHasHelp(t *testing.T) {
	for name := range commands {
		code, stdout, stderr := runCmd(t, "", name, "-h")
		assert.Equal(t, exitOK, code, name)
		assert.Contains(t, stdout, "usage: llmhistory "+name, name)
		assert.Empty(t, stderr, name)
		code, _, stderr = runCmd(t, "", name, "--no-such-flag")
		assert.Equal(t, exitUsage, code, name)
		assert.Contains(t, stderr, "flag provided but not defined", name)
	}
}

// Flags may follow the file names, as people type them; an unknown flag
// gets one line that says what is wrong and where the flags are, not the
// whole help.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	a := writeHistory(t, dir, "a.jsonl", 3, "")
	out := filepath.Join(dir, "r.html")
	code, _, stderr := runCmd(t, "", "report", a, "--format", "html", "-o", out)
	require.Equal(t, exitOK, code, stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), "<!DOCTYPE html>")

	code, _, stderr = runCmd(t, "", "report", a, "--frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "llmhistory report: flag provided but not defined: -frobnicate (llmhistory report -h lists the flags)\n", stderr)

	// After "--", everything is an argument, even what looks like a flag.
	code, _, stderr = runCmd(t, "", "report", "-o", out, "--", "-not-a-flag.jsonl")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "-not-a-flag.jsonl")
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

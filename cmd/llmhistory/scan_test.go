package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestScan(t *testing.T) {
	dir := t.TempDir()
	rb := writeFile(t, dir, "tool.rb", "x = 1\nrecent = conversation_history\n  .select { |r| r[:speaker] == \"user\" }\n  .last(3)\n")
	py := writeFile(t, dir, "clean.py", "print('hello')\n")
	md := writeFile(t, dir, "answer.md", "Here you go:\n\n```python\nn = len(conversation_history)\n```\n")

	code, stdout, stderr := runCmd(t, "", "scan", rb, py, md)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, rb+": history access, tags filter,slice, language ruby")
	assert.Contains(t, stdout, rb+":2-3\tfilter\t.select { |r| r[:speaker] == \"user\" }")
	assert.Contains(t, stdout, py+": no history access")
	assert.Contains(t, stdout, md+": history access, tags count, language python")

	code, stdout, _ = runCmd(t, "memory = chat_log.select { |r| r[:ok] }\n", "scan", "-name", "chat_log", "-lang", "ruby")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "<stdin>: history access, tags filter")

	code, stdout, _ = runCmd(t, "", "scan", "-json", rb, py)
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	var got scanJSON
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &got))
	assert.True(t, got.Access)
	assert.Equal(t, []string{"filter", "slice"}, got.Tags)
	assert.Equal(t, []string{"ruby"}, got.Languages)
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &got))
	assert.False(t, got.Access)
	assert.Equal(t, []string{}, got.Tags)
}

func TestScanBadInput(t *testing.T) {
	dir := t.TempDir()
	ok := writeFile(t, dir, "ok.rb", "conversation_history.count\n")
	code, stdout, stderr := runCmd(t, "", "scan", filepath.Join(dir, "missing.rb"), ok)
	assert.Equal(t, exitFailure, code, "a missing file fails the run")
	assert.Contains(t, stderr, "llmhistory scan: open ")
	assert.Contains(t, stdout, ok+": history access", "the other files are still scanned")

	code, _, stderr = runCmd(t, "", "scan", "-lang", "cobol", ok)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown language "cobol"`)

	code, stdout, _ = runCmd(t, "\xff\xfe conversation_history.map { |r| r } \x00", "scan", "-lang", "rb")
	assert.Equal(t, exitOK, code, "invalid UTF-8 is scanned, not refused")
	assert.Contains(t, stdout, "<stdin>: history access")
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// eraseHistory writes a history of three users, the first of whom
// ("gone-user") typed text no one else did, with a scores file beside
// it; it returns the file's path.
func eraseHistory(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var buf bytes.Buffer
	j := record.NewJSONL(&buf)
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i := range 30 {
		user := []string{"gone-user", "stay-a", "stay-b"}[i%3]
		text := fmt.Sprintf("question %d from %s", i, user)
		if user == "gone-user" {
			text = fmt.Sprintf("my secret axolotl%d plan", i)
		}
		question, answer := record.TextMessage(record.RoleUser, text), record.TextMessage(record.RoleAssistant, "answer to "+text)
		r := record.Record{
			CallID: fmt.Sprintf("call-%02d", i), Timestamp: record.FormatTime(start.Add(time.Duration(i) * time.Hour)),
			Speaker: record.SpeakerUser, MethodName: "openai.chat.completions.create",
			Args: record.AppendMessages(nil, []record.Message{question}), Kwargs: json.RawMessage(`{}`),
			Outcome: record.Outcome{Status: "ok", OK: true}, UserID: user, TraceID: fmt.Sprintf("trace-%s-%d", user, i/9),
			Output: &answer, Version: record.Version,
		}
		require.NoError(t, j.Append(t.Context(), r))
	}
	require.NoError(t, j.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o640))
	var sc bytes.Buffer
	for _, s := range []store.Score{
		{CallID: "call-00", Name: "thumbs", Value: store.Bool(false), Source: store.SourceHuman, Comment: "axolotl was wrong"},
		{TraceID: "trace-gone-user-0", Name: "resolved", Value: store.Bool(true), Source: store.SourceHuman},
		{CallID: "call-01", Name: "thumbs", Value: store.Bool(true), Source: store.SourceHuman},
	} {
		s.Time = start
		sc.Write(append(store.AppendScoreJSON(nil, s), '\n'))
	}
	require.NoError(t, os.WriteFile(store.ScoresPath(path), sc.Bytes(), 0o640))
	return path
}

func TestDeleteUsage(t *testing.T) {
	code, stdout, _ := runCmd(t, "", "delete", "-h")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(stdout, "usage: llmhistory delete"), stdout)
	code, _, stderr := runCmd(t, "", "delete", "x.jsonl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "say what to delete")
	code, _, stderr = runCmd(t, "", "delete", "--user", "u")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "name a store")
	code, _, stderr = runCmd(t, "", "delete", "--before", "last tuesday", "x.jsonl")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--before")
	code, _, stderr = runCmd(t, "", "delete", "--user", "u", filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "missing.jsonl")
}

// A history file: delete says what it will delete, asks, and rewrites the
// file and its scores file without the user's records; every other line
// stays byte for byte.
func TestDeleteFromFile(t *testing.T) {
	path := eraseHistory(t)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	scoresBefore, err := os.ReadFile(store.ScoresPath(path))
	require.NoError(t, err)

	code, stdout, _ := runCmd(t, "n\n", "delete", "--user", "gone-user", path)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, path+": 10 of 30 records match; 2 scores in history.scores.jsonl\n")
	assert.Contains(t, stdout, "Delete 10 records? [y/N] nothing deleted")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "declined: the file is untouched")

	code, stdout, stderr := runCmd(t, "y\n", "delete", "--user", "gone-user", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "deleted 10 records, kept 20; deleted 2 scores")
	assert.Contains(t, stdout, "check: records of the filter left in the file  0 left")
	after, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(after), "axolotl")
	assert.NotContains(t, string(after), "gone-user")
	var want []string
	for _, l := range strings.SplitAfter(string(before), "\n") {
		if l != "" && !strings.Contains(l, "gone-user") {
			want = append(want, l)
		}
	}
	assert.Equal(t, strings.Join(want, ""), string(after), "the other lines, byte for byte")
	scores, err := os.ReadFile(store.ScoresPath(path))
	require.NoError(t, err)
	assert.NotContains(t, string(scores), "axolotl")
	assert.Contains(t, string(scores), `"call-01"`)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the file's mode is kept")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"history.jsonl", "history.scores.jsonl"}, names, "no backup, no temporary file left")
	_ = scoresBefore

	// --backup keeps the old files; --before takes the old records.
	code, stdout, stderr = runCmd(t, "", "delete", "--before", "2026-11-02T15:00:00Z", "--backup", "--yes", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "deleted 4 records, kept 16")
	bak, err := os.ReadFile(path + ".bak")
	require.NoError(t, err)
	assert.Equal(t, after, bak)

	code, stdout, _ = runCmd(t, "", "delete", "--call", "no-such-call", path)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "nothing to delete")
}

// A store, SQLite and PostgreSQL: the receipt, and the text gone from the
// database's files.
func TestDeleteFromStore(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			path := eraseHistory(t)
			url := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
			if backend == "postgres" {
				url = pgtest.Shared(t).NewDatabase(t)
			}
			code, _, stderr := runCmd(t, "", "import", path, "--into", url)
			require.Equal(t, exitOK, code, stderr)
			code, stdout, stderr := runCmd(t, "yes\n", "delete", url, "--user", "gone-user")
			require.Equal(t, exitOK, code, stderr)
			t.Log(stdout)
			assert.Contains(t, stdout, ": 10 of 30 records match\n")
			assert.Contains(t, stdout, "deleted 10 records (4 conversations whole)")
			assert.Contains(t, stdout, "check: records by call ID")
			assert.NotRegexp(t, `check: .* [1-9]\d* left`, stdout)
			code, stdout, stderr = runCmd(t, "", "query", url, "-format", "jsonl")
			require.Equal(t, exitOK, code, stderr)
			assert.NotContains(t, stdout, "axolotl")
			assert.Equal(t, 20, strings.Count(stdout, "\n"))
			if backend == "sqlite" {
				file := sqlitedsn.Path(url)
				for _, f := range []string{file, file + "-wal"} {
					b, err := os.ReadFile(f)
					if os.IsNotExist(err) {
						continue
					}
					require.NoError(t, err)
					assert.False(t, bytes.Contains(b, []byte("axolotl")), f)
					assert.False(t, bytes.Contains(b, []byte("gone-user")), f)
				}
			}
		})
	}
}

// import --retain keeps the rules in the store: query -describe says
// them, and records they bound out are gone once imported.
func TestImportRetain(t *testing.T) {
	path := eraseHistory(t) // records of 2026-11-02: older than 7 days
	url := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	code, _, stderr := runCmd(t, "", "import", path, "--into", url, "--retain", "user:gone-user=7d,all=100y")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "retention (user gone-user 7 days, everything 100 years): 10 records deleted")
	code, stdout, stderr := runCmd(t, "", "query", url, "-describe")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `retention\s+user gone-user 7 days, everything 100 years`, stdout)
	assert.Regexp(t, `records\s+20 in`, stdout)
	code, _, stderr = runCmd(t, "", "import", path, "--into", url, "--retain", "support")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--retain")
}

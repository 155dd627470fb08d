package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
	"github.com/llmhistory/llmhistory/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A history file a real recorder wrote goes into a store with import
// (flags after the files, as "import FILE... --into URL" has them), once
// however often; query gives its records back whole, its conversations
// and its figures; report reads the store as it reads the file.
func TestImportQueryReport(t *testing.T) {
	path, recs := demoHistory(t)
	url := "sqlite:" + filepath.Join(t.TempDir(), "imported.db")
	storeRoundTrip(t, path, recs, url)
}

// The same against PostgreSQL.
func TestImportQueryReportPostgres(t *testing.T) {
	path, recs := demoHistory(t)
	storeRoundTrip(t, path, recs, pgtest.Shared(t).NewDatabase(t))
}

func storeRoundTrip(t *testing.T, path string, recs []record.Record, url string) {
	code, stdout, stderr := runCmd(t, "", "import", path, "--into", url)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, path+": 13 records: 13 written, 0 already there\n", stderr)
	code, _, stderr = runCmd(t, "", "import", "-into", url, path)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, path+": 13 records: 0 written, 13 already there\n", stderr, "importing again doubles nothing")

	// Every record back, whole, newest first.
	code, stdout, stderr = runCmd(t, "", "query", url, "-format", "jsonl")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "llmhistory query: 13 records\n", stderr)
	got, err := record.ReadJSONL(strings.NewReader(stdout))
	require.NoError(t, err)
	require.Len(t, got, 13)
	byID := map[string]record.Record{}
	for _, r := range recs {
		byID[r.CallID] = r
	}
	for i, r := range got {
		want := byID[r.CallID]
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(r)
		assert.JSONEq(t, string(wj), string(gj))
		if i > 0 {
			assert.GreaterOrEqual(t, got[i-1].Timestamp, r.Timestamp, "newest first")
		}
	}

	// Pages.
	code, _, stderr = runCmd(t, "", "query", url, "-n", "4")
	require.Equal(t, exitOK, code, stderr)
	m := regexp.MustCompile(`more with -cursor (\S+)`).FindStringSubmatch(stderr)
	require.NotNil(t, m, stderr)
	code, stdout, _ = runCmd(t, "", "query", url, "-n", "4", "-cursor", m[1], "-format", "jsonl")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 4, strings.Count(stdout, "\n"))

	// Filters, a table.
	code, stdout, stderr = runCmd(t, "", "query", url, "-status", "error")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2, stdout)
	assert.Regexp(t, `^TIME\s+CALL ID\s+TRACE\s+USER\s+MODEL\s+OUTCOME`, lines[0])
	assert.Contains(t, lines[1], "error:not_found")
	code, stdout, _ = runCmd(t, "", "query", url, "-provider", "gemini", "-format", "jsonl", "-no-args")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 3, strings.Count(stdout, "\n"))
	assert.Contains(t, stdout, `"args":[]`)
	code, stdout, _ = runCmd(t, "", "query", url, "-text", "Lisbon", "-format", "jsonl", "-no-args")
	require.Equal(t, exitOK, code)
	assert.Positive(t, strings.Count(stdout, "\n"), "Lisbon is in the conversation")

	// Conversations, figures, one record, what is there.
	code, stdout, _ = runCmd(t, "", "query", url, "-traces", "-format", "jsonl")
	require.Equal(t, exitOK, code)
	calls := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var tr map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &tr), stdout)
		calls[tr["trace_id"].(string)] = tr["calls"].(float64)
	}
	assert.Len(t, calls, 4, "the demo's four conversations")
	assert.EqualValues(t, 9, calls[recs[0].TraceID], "the agent's")

	code, stdout, _ = runCmd(t, "", "query", url, "-group", "provider", "-format", "jsonl")
	require.Equal(t, exitOK, code)
	calls = map[string]float64{}
	sc = bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var g map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &g))
		calls[g["provider"].(string)] = g["calls"].(float64)
		assert.Contains(t, g, "latency_p95_ms")
	}
	assert.Equal(t, map[string]float64{"openai": 8, "gemini": 3, "anthropic": 2}, calls)
	code, stdout, _ = runCmd(t, "", "query", url, "-group", "day,model")
	require.Equal(t, exitOK, code)
	assert.Regexp(t, `^DAY\s+MODEL\s+CALLS\s+ERRORS\s+IN TOKENS\s+OUT TOKENS\s+USD\s+P50 MS\s+P95 MS\n`, stdout)

	code, stdout, _ = runCmd(t, "", "query", url, "-call", recs[3].CallID)
	require.Equal(t, exitOK, code)
	wj, _ := json.Marshal(recs[3])
	assert.JSONEq(t, string(wj), stdout)

	code, stdout, _ = runCmd(t, "", "query", url, "-describe")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "13 in 4 traces")

	// The report of the store is the report of the file.
	code, fromFile, stderr := runCmd(t, "", "report", "-format", "json", path)
	require.Equal(t, exitOK, code, stderr)
	code, fromStore, stderr := runCmd(t, "", "report", "-format", "json", url)
	require.Equal(t, exitOK, code, stderr)
	var a, b report.Report
	require.NoError(t, json.Unmarshal([]byte(fromFile), &a))
	require.NoError(t, json.Unmarshal([]byte(fromStore), &b))
	assert.Equal(t, a.Summary, b.Summary)
	assert.Equal(t, a.Providers, b.Providers)
	assert.Equal(t, a.Spend, b.Spend)
	assert.Equal(t, a.Checklist, b.Checklist)
	require.Len(t, b.Provenance.Inputs, 1)
	assert.EqualValues(t, 13, b.Provenance.Inputs[0].Records)
}

func TestImportAndQueryBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeHistory(t, dir, "h.jsonl", 3, "")
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("not json\n{}\n"), 0o644))
	url := "sqlite:" + filepath.Join(dir, "s.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", good}, exitUsage, "want --into URL"},
		{[]string{"import", good, "--into", "history.db"}, exitUsage, `--into "history.db" is not a store URL`},
		{[]string{"import", "--into", url}, exitUsage, "want at least one FILE"},
		{[]string{"import", filepath.Join(dir, "missing.jsonl"), "--into", url}, exitFailure, "no such file"},
		{[]string{"import", bad, "--into", url}, exitFailure, "not a history file"},
		{[]string{"query", good}, exitUsage, "is not a store URL"},
		{[]string{"query"}, exitUsage, "want exactly one store URL"},
		{[]string{"query", url, "-format", "xml"}, exitUsage, "-format must be table or jsonl"},
		{[]string{"query", url, "-since", "yesterday"}, exitUsage, "neither a time"},
		{[]string{"query", url, "-meta", "tenant"}, exitUsage, "-meta wants KEY=VALUE"},
		{[]string{"query", url, "-traces", "-group", "day"}, exitUsage, "give one"},
		{[]string{"query", "sqlite:" + filepath.Join(dir, "none.db")}, exitFailure, "no such file"},
	} {
		code, _, stderr := runCmd(t, "", c.args...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
	// A store to query: bad groups and cursors are usage errors.
	code, _, stderr := runCmd(t, "", "import", good, "--into", url)
	require.Equal(t, exitOK, code, stderr)
	code, _, stderr = runCmd(t, "", "query", url, "-group", "colour")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown group "colour"`)
	code, _, stderr = runCmd(t, "", "query", url, "-cursor", "zz!")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "bad cursor")
	code, _, stderr = runCmd(t, "", "query", url, "-since", "2026-03-01", "-until", "2026-03-02")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stderr, "3 records")
}

// tail follows a store as records arrive in it, from any writer.
func TestTailStore(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Write(ctx, []record.Record{testRecord(1, true), testRecord(2, true), testRecord(3, false)})
	require.NoError(t, err)

	var out, errb syncBuffer
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan int)
	go func() {
		done <- run(tctx, []string{"tail", "-n", "2", "-poll", "5ms", "-color", "never", url}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	waitFor := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 10*time.Second, 5*time.Millisecond,
			"want %q in:\n%s\n%s", want, out.String(), errb.String())
	}
	waitFor("…00000003")
	assert.Contains(t, out.String(), "…00000002")
	assert.NotContains(t, out.String(), "…00000001", "-n 2 shows the last two")
	_, err = s.Write(ctx, []record.Record{testRecord(4, true), testRecord(5, true)})
	require.NoError(t, err)
	waitFor("…00000005")
	cancel()
	assert.Equal(t, exitOK, <-done, errb.String())
	assert.Equal(t, 1, strings.Count(out.String(), "…00000004"), "each record once:\n%s", out.String())
}

// export reads a store as it reads a file: the demo's records, from the
// SQLite store it writes beside its history file, become the spans of
// the file's.
func TestExportStore(t *testing.T) {
	noOTLP(t)
	path, recs := demoHistory(t)
	url := "sqlite:" + dbBeside(path)
	c := otlpfake.Start(t)
	pointAt(t, c, "http/protobuf")
	code, _, stderr := runCmd(t, "", "export", url)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, url+": 13 records read\n")
	assert.Contains(t, stderr, ": 13 exported, 0 failed, 0 dropped\n")
	otlpfake.WaitFor(t, "a span per record", func() bool { return c.SpanCount() == 13 })
	checkTree(t, c.Spans(t), recs)
}

// The demo writes its records into a SQLite store beside its file too,
// and the query it prints runs.
func TestDemoWritesAStore(t *testing.T) {
	path, recs := demoHistory(t)
	db := dbBeside(path)
	code, stdout, stderr := runCmd(t, "", "query", "sqlite:"+db, "-traces", "-format", "jsonl")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"trace_id":"`+recs[0].TraceID+`"`)
	assert.Contains(t, stdout, `"calls":9`)
	assert.Equal(t, 4, strings.Count(stdout, "\n"), "four conversations")

	// The next run replaces the store as it replaces the file: the two
	// hold the same run.
	code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", path, "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr = runCmd(t, "", "query", "sqlite:"+db, "-traces", "-format", "jsonl")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 4, strings.Count(stdout, "\n"), "the second run's four conversations, not eight:\n%s", stdout)
	assert.NotContains(t, stdout, recs[0].TraceID, "the first run's are gone")

	// A store that holds more than the demo's records is not written.
	mine := filepath.Join(t.TempDir(), "mine.db")
	s, err := store.Open(context.Background(), "sqlite:"+mine)
	require.NoError(t, err)
	_, err = s.Write(context.Background(), []record.Record{testRecord(1, true)})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	before, err := os.ReadFile(mine)
	require.NoError(t, err)
	code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", filepath.Join(filepath.Dir(mine), "mine.jsonl"), "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "holds records the demo did not write")
	after, err := os.ReadFile(mine)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the store is left alone")

	// A file of that name that is not a store is left alone.
	dir := t.TempDir()
	other := filepath.Join(dir, "history.db")
	require.NoError(t, os.WriteFile(other, []byte("my notes, not a database"), 0o644))
	code, _, stderr = runCmd(t, "", "demo", "-provider", "fake", "-o", filepath.Join(dir, "history.jsonl"), "-color", "never", "-format", "none")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "is not a llmhistory store")
	data, err := os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, "my notes, not a database", string(data))
}

func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"", "24h", "-1h", "2026-11-23", "2026-11-23T10:00", "2026-11-23T10:00:00Z", "2026-11-23T10:00:00.123+02:00", "yesterday", "1e9h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseWhen(s, now)
		if err != nil {
			return // an error, never a panic
		}
		if d, derr := time.ParseDuration(s); derr == nil {
			assert.Equal(t, now.Add(-d), got, "a duration is back from now")
		}
		if s == "" {
			assert.True(t, got.IsZero())
		}
	})
}

// A store an older llmhistory wrote (schema version 1) is migrated by the
// first command that reads it, once: query answers, where it refused
// ("open it once for writing") before.
func TestReadingMigratesAnOlderStore(t *testing.T) {
	path, _ := demoHistory(t)
	file := filepath.Join(t.TempDir(), "old.db")
	url := "sqlite:" + file
	code, _, stderr := runCmd(t, "", "import", path, "--into", url)
	require.Equal(t, exitOK, code, stderr)
	// Back to version 1's shape: what a version 1 store holds of the same
	// records is the same rows, less the names and the rollups.
	db, err := sql.Open("sqlite", sqlitedsn.DSN(file, 5000, false))
	require.NoError(t, err)
	for _, q := range []string{
		`DROP TABLE rollups`, `DROP TABLE names`, `ALTER TABLE records DROP COLUMN tagset`, `DROP TABLE scores`,
		`CREATE TABLE rollups (hour INTEGER NOT NULL, model TEXT NOT NULL, provider TEXT NOT NULL, method TEXT NOT NULL,
			error_type TEXT NOT NULL, status TEXT NOT NULL, calls INTEGER NOT NULL, errors INTEGER NOT NULL,
			input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, total_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL,
			latency BLOB NOT NULL, PRIMARY KEY (hour, model, provider, method, error_type, status)) WITHOUT ROWID`,
		`DELETE FROM llmhistory_meta WHERE key = 'rollups_sealed'`,
		`UPDATE llmhistory_meta SET value = '1' WHERE key = 'schema_version'`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	code, stdout, stderr := runCmd(t, "", "query", url, "-group", "model")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "gpt-4o-mini")
	s, err := store.OpenWith(context.Background(), url, store.Options{ReadOnly: true})
	require.NoError(t, err, "migrated")
	d, err := s.Describe(context.Background())
	require.NoError(t, err)
	assert.Equal(t, store.SchemaVersion, d.SchemaVersion)
	require.NoError(t, s.Close())
}

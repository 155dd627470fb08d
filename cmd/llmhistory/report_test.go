package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/term"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// writeHistory writes n records with the JSONL sink, as the recorder would,
// plus any raw lines after them.
func writeHistory(t *testing.T, dir, name string, n int, raw string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	sink := record.NewJSONL(f)
	for i := range n {
		r := record.Record{
			CallID:                fmt.Sprintf("%s-%d", name, i),
			Timestamp:             fmt.Sprintf("2026-03-01T10:00:%02dZ", i%60),
			Speaker:               record.SpeakerAgent,
			MethodName:            "openai.chat.completions.create",
			Model:                 "gpt-4o-mini",
			Outcome:               record.Success("chat.completion"),
			TraceID:               "t-" + name,
			DurationMS:            float64(100 + i),
			ProgramSource:         "conversation_history.last(2)",
			HistoryRecordAppended: true,
			HistoryGuidance:       true,
			HistoryAccessDetected: true,
			HistoryQueryPatterns:  []string{"slice"},
		}
		if i%5 == 4 {
			r.Outcome = record.Failure(record.ErrorRateLimit)
			r.Attempts = 3
		}
		require.NoError(t, sink.Append(context.Background(), r))
	}
	require.NoError(t, sink.Close())
	_, err = f.WriteString(raw)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	a := writeHistory(t, dir, "a.jsonl", 10, "")
	b := writeHistory(t, dir, "b.jsonl", 5, "")

	code, stdout, stderr := runCmd(t, "", "report", a, b)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "no progress line when stderr is not a terminal")
	assert.True(t, strings.HasPrefix(stdout, "# LLM call history: evidence report\n"))
	assert.Contains(t, stdout, "15 calls, 3 in error (20.0%).")
	assert.Contains(t, stdout, "21 HTTP attempts in all, retries included.")
	assert.Contains(t, stdout, "| History record appended for every call (100%) | 100% (15 of 15 records) | **met** |")
	assert.Contains(t, stdout, "| slice | 15 | 100% | ` conversation_history.last(2) ` |")
	assert.Contains(t, stdout, "| rate_limit | 3 | 3 | 100% |")

	code, stdout, stderr = runCmd(t, "", "report", "-format", "json", "-top", "1", a, b)
	require.Equal(t, exitOK, code, stderr)
	var got struct {
		Version int `json:"version"`
		Summary struct {
			Records int64 `json:"records"`
			Calls   int64 `json:"calls"`
		} `json:"summary"`
		Traces struct {
			Top []struct {
				TraceID string `json:"trace_id"`
				Records int64  `json:"records"`
			} `json:"top"`
		} `json:"traces"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, 1, got.Version)
	assert.Equal(t, int64(15), got.Summary.Records)
	assert.Equal(t, int64(21), got.Summary.Calls)
	require.Len(t, got.Traces.Top, 1)
	assert.Equal(t, "t-a.jsonl", got.Traces.Top[0].TraceID)

	out := filepath.Join(dir, "report.html")
	code, stdout, stderr = runCmd(t, "", "report", "-format", "html", "-o", out, a)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	page, err := os.ReadFile(out)
	require.NoError(t, err)
	for _, id := range []string{"chart-latency", "chart-patterns", "chart-errors"} {
		assert.Contains(t, string(page), `id="`+id+`"`)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".report.html.*"))
	assert.Empty(t, left, "no temporary file left behind")
}

func TestReportStdin(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(writeHistory(t, dir, "a.jsonl", 3, ""))
	require.NoError(t, err)
	for _, args := range [][]string{{"report"}, {"report", "-"}} {
		code, stdout, stderr := runCmd(t, string(data), args...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "3 calls, ")
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeHistory(t, dir, "good.jsonl", 2, "")
	missing := filepath.Join(dir, "x.jsonl")

	code, stdout, stderr := runCmd(t, "", "report", good, missing)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "llmhistory report: open "+missing+": no such file or directory\n", stderr)
	assert.Empty(t, stdout, "nothing is read when a file cannot be opened")

	code, _, stderr = runCmd(t, "", "report", dir)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "is a directory")

	garbled := writeHistory(t, dir, "garbled.jsonl", 2, "{oops\n")
	torn := writeHistory(t, dir, "torn.jsonl", 2, `{"call_id":"half","timest`)
	code, stdout, stderr = runCmd(t, "", "report", garbled, torn)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stderr, garbled+":3: ")
	assert.Contains(t, stderr, torn+": torn last line")
	assert.Contains(t, stdout, "4 calls, ")
	assert.Contains(t, stdout, "1 line could not be read as records")
	assert.Contains(t, stdout, "garbled.jsonl:3 |")
	assert.Contains(t, stdout, "torn last line: ")

	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	code, stdout, stderr = runCmd(t, "", "report", empty)
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "The input holds no records")

	code, _, stderr = runCmd(t, "", "report", "-format", "pdf", good)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unknown format "pdf"`)

	target := filepath.Join(dir, "no", "such", "dir.md")
	code, _, stderr = runCmd(t, "", "report", "-o", target, good)
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "llmhistory report: write "+target+": no such file or directory\n", stderr, "the file asked for, not a temporary one")
}

// Many garbled lines: the first 20 are shown, the rest summed up.
func TestReportManyGarbled(t *testing.T) {
	dir := t.TempDir()
	path := writeHistory(t, dir, "noise.jsonl", 1, strings.Repeat("noise\n", 50))
	code, stdout, stderr := runCmd(t, "", "report", path)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, 21, strings.Count(stderr, "\n"), stderr)
	assert.Contains(t, stderr, "llmhistory report: 30 more lines that are not records")
	assert.Contains(t, stdout, "Lines that are not records, skipped: 50.")
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		assert.Equal(t, want, group(n))
	}
}

// The progress line shows only for a large input or a long read, updates
// in place, and is wiped before anything else is written.
func TestReportProgressLine(t *testing.T) {
	var tty bytes.Buffer
	p := &progress{size: 100 << 20, line: term.NewLiveStatusLine(&tty)} // as on a terminal
	p.update(report.Progress{Records: 1_500_000, Bytes: 50 << 20, Elapsed: 2 * time.Second})
	assert.Equal(t, "\rllmhistory report: 1,500,000 records, 750,000 records/s, 50%\x1b[K", tty.String())
	p.clear()
	assert.True(t, strings.HasSuffix(tty.String(), "\r\x1b[K"))

	tty.Reset()
	small := &progress{size: 1 << 20, line: term.NewLiveStatusLine(&tty)}
	small.update(report.Progress{Records: 10, Bytes: 1 << 10, Elapsed: 10 * time.Millisecond})
	small.clear()
	assert.Empty(t, tty.String(), "a small, quick input shows nothing")

	notTerm := newProgress(&tty, 100<<20)
	notTerm.update(report.Progress{Records: 10, Bytes: 1 << 10, Elapsed: 5 * time.Second})
	assert.Empty(t, tty.String(), "not a terminal: nothing")
}

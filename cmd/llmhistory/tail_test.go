package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testRecord(i int, ok bool) record.Record {
	r := record.Record{
		CallID:     fmt.Sprintf("01TESTCALL%08d", i),
		Timestamp:  record.FormatTime(time.Date(2026, 11, 22, 10, 0, i, 0, time.UTC)),
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Outcome:    record.Success("chat.completion"),
		TraceID:    "t1",
		Attempts:   1,

		HistoryRecordAppended: true,
	}
	if !ok {
		r.Outcome = record.Failure(record.ErrorRateLimit)
		r.ErrorType = record.ErrorRateLimit
		r.Attempts = 3
	}
	return r
}

func line(r record.Record) string { return string(r.AppendJSON(nil)) + "\n" }

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestTailFollows follows a file through everything a history file lives
// through: a partial line finished later, garbage, truncation, rotation.
func TestTailFollows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	half := line(testRecord(4, true))
	appendFile(t, path, line(testRecord(1, true))+line(testRecord(2, true))+line(testRecord(3, false))+half[:20])

	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"tail", "-n", "2", "-poll", "5ms", "-color", "never", path}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	waitFor := func(buf *syncBuffer, want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(buf.String(), want) }, 5*time.Second, 5*time.Millisecond,
			"want %q in:\n%s", want, buf.String())
	}

	waitFor(&out, "…00000002")
	waitFor(&out, "…00000003")
	assert.NotContains(t, out.String(), "…00000001", "-n 2 shows the last two")
	assert.Contains(t, out.String(), "ERR")
	assert.Contains(t, out.String(), "attempts=3")
	assert.NotContains(t, out.String(), "…00000004", "a partial line waits for its end")

	appendFile(t, path, half[20:]+"this is not json\n"+line(testRecord(5, true)))
	waitFor(&out, "…00000004")
	waitFor(&out, "…00000005")
	waitFor(&errb, `history.jsonl:5: invalid JSON at offset 0: unexpected "this"`)

	require.NoError(t, os.Truncate(path, 0))
	appendFile(t, path, line(testRecord(6, true)))
	waitFor(&errb, "truncated")
	waitFor(&out, "…00000006")

	rotated := filepath.Join(dir, "new.jsonl")
	appendFile(t, rotated, line(testRecord(7, true)))
	require.NoError(t, os.Rename(rotated, path))
	waitFor(&errb, "replaced")
	waitFor(&out, "…00000007")

	cancel()
	assert.Equal(t, exitOK, <-done)
	assert.Equal(t, 1, strings.Count(out.String(), "…00000005"), "each record once:\n%s", out.String())
}

func TestTailNoFollowAndColour(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	appendFile(t, path, line(testRecord(1, true))+line(testRecord(2, false)))
	code, stdout, stderr := runCmd(t, "", "tail", "-f=false", "-color", "always", path)
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 2)
	const red, yellow = "91m", "93m" // tint's bright red and yellow
	assert.NotContains(t, lines[0], red, "a good call is not red")
	assert.Contains(t, lines[1], "\x1b[91mERR", "an error is red")
	assert.Contains(t, lines[1], red+"error=", "the error type is red")
	assert.Contains(t, lines[1], yellow+"attempts=", "retries are highlighted")
}

func TestTailBadInput(t *testing.T) {
	code, _, stderr := runCmd(t, "", "tail", filepath.Join(t.TempDir(), "missing.jsonl"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "llmhistory tail: open ")
	assert.Contains(t, stderr, "no such file or directory")

	code, _, stderr = runCmd(t, "", "tail")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "want exactly one FILE")

	code, _, stderr = runCmd(t, "", "tail", "-color", "sometimes", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "-color must be")
}

// A file written with args_prefix is read, by tail and by export, with
// every record's Args whole, as the recorder's history had them.
func TestTailerJoinsArgsPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	file, err := record.OpenJSONLWith(path, record.JSONLOptions{ArgsPrefix: true})
	require.NoError(t, err)
	history := record.NewMemory(0)
	msgs := []string{`{"role":"system","content":"` + strings.Repeat("Answer briefly. ", 20) + `"}`}
	var want []string
	for i := range 4 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d"}`, i))
		args := "[" + strings.Join(msgs, ",") + "]"
		want = append(want, args)
		r := record.Record{CallID: fmt.Sprintf("c%d", i), Timestamp: record.FormatTime(time.Now()), Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create", TraceID: "t", Args: []byte(args), Outcome: record.Success("chat.completion")}
		require.NoError(t, file.Append(context.Background(), history.Add(r)))
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"answer %d"}`, i))
	}
	require.NoError(t, file.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"args_prefix"`)

	tl := &tailer{cmd: "export", path: path, warn: io.Discard, poll: time.Millisecond}
	require.NoError(t, tl.open())
	defer tl.close()
	var got []string
	require.NoError(t, tl.consume(context.Background(), func(r record.Record) {
		assert.Nil(t, r.ArgsPrefix)
		got = append(got, string(r.Args))
	}))
	tl.flushLast(func(r record.Record) { got = append(got, string(r.Args)) })
	assert.Equal(t, want, got)
}

// tail -n of a large file reads it from its end, as far as its last n
// records: lines before them are never read (a garbled start, which a
// front-to-back read would report, is not), a line that is not a record
// among those read is reported by the byte it starts at, and the line
// being written at the end waits for its newline, then follows.
func TestTailLargeFileReadsFromTheEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	var b strings.Builder
	for b.Len() < 2*readWholeBelow {
		b.WriteString("garbage at the start, never read\n")
	}
	for i := range 2000 {
		b.WriteString(line(testRecord(100+i, true)))
	}
	badAt := b.Len()
	b.WriteString("not a record near the end\n")
	for i := range 3 {
		b.WriteString(line(testRecord(9000+i, true)))
	}
	half := line(testRecord(9999, true))
	b.WriteString(half[:30])
	appendFile(t, path, b.String())

	code, stdout, stderr := runCmd(t, "", "tail", "-n", "3", "-f=false", "-color", "never", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stderr, "neither the garbled start nor the bad line before the last three is read")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3)
	for i, l := range lines {
		assert.Contains(t, l, fmt.Sprintf("…%08d", 9000+i), "oldest first")
	}

	code, stdout, stderr = runCmd(t, "", "tail", "-n", "5", "-f=false", "-color", "never", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fmt.Sprintf("history.jsonl: the line at byte %d: invalid JSON at offset 0: unexpected \"not\"\n", badAt),
		strings.ReplaceAll(stderr, dir+string(filepath.Separator), ""))
	assert.NotContains(t, stderr, "garbage")
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 5)
	assert.Contains(t, lines[0], "…00002098")
	assert.Contains(t, lines[4], "…00009002")

	// Following: the unfinished line, once ended, is the next record.
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"tail", "-n", "1", "-poll", "5ms", "-color", "never", path}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "…00009002") }, 5*time.Second, 5*time.Millisecond)
	appendFile(t, path, half[30:])
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "…00009999") }, 5*time.Second, 5*time.Millisecond, out.String())
	cancel()
	assert.Equal(t, exitOK, <-done)
	assert.Empty(t, errb.String())
}

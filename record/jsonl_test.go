package record_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
)

func TestJSONLRoundTrip(t *testing.T) {
	ctx := context.Background()
	want := []record.Record{fullRecord(), rec("b", ""), {CallID: "c", Depth: record.Int(0)}}
	for i := range want {
		want[i].Normalize()
	}
	var buf bytes.Buffer
	j := record.NewJSONL(&buf)
	for _, r := range want {
		require.NoError(t, j.Append(ctx, r))
	}
	assert.Zero(t, buf.Len(), "buffered until flushed")
	require.NoError(t, j.Close())
	assert.Equal(t, len(want), bytes.Count(buf.Bytes(), []byte("\n")))

	got, err := record.ReadJSONL(&buf)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.ErrorIs(t, j.Append(ctx, rec("late", "")), record.ErrClosed)
	assert.NoError(t, j.Close(), "second Close is a no-op")
}

// lineWriter fails the test if a Write carries anything but whole lines.
type lineWriter struct {
	mu     sync.Mutex
	t      *testing.T
	buf    bytes.Buffer
	writes int
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) == 0 || p[len(p)-1] != '\n' {
		w.t.Errorf("write of %d bytes does not end a line", len(p))
	}
	w.writes++
	return w.buf.Write(p)
}

func TestJSONLWritesWholeLinesOnly(t *testing.T) {
	w := &lineWriter{t: t}
	j := record.NewJSONLWith(w, record.JSONLOptions{BufferSize: 300, FlushInterval: -1})
	ctx := context.Background()
	for i := range 50 {
		r := rec(fmt.Sprint(i), "")
		if i%7 == 0 {
			r.ErrorMessage = strings.Repeat("x", 1000) // longer than the buffer: written alone
		}
		require.NoError(t, j.Append(ctx, r))
	}
	require.NoError(t, j.Close())
	assert.Greater(t, w.writes, 10)
	got, err := record.ReadJSONL(&w.buf)
	require.NoError(t, err)
	assert.Len(t, got, 50)
}

func TestJSONLConcurrentWritersToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	j, err := record.OpenJSONLWith(path, record.JSONLOptions{BufferSize: 4 << 10})
	require.NoError(t, err)
	const writers, each = 32, 200
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r := rec(fmt.Sprintf("%d-%d", w, i), fmt.Sprint(w))
				r.ErrorMessage = strings.Repeat("é", i%300) // lines of many lengths
				assert.NoError(t, j.Append(ctx, r))
			}
		})
	}
	wg.Wait()
	require.NoError(t, j.Close())

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	seen := map[string]bool{}
	for sc.Scan() {
		var r record.Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "every line is a whole record")
		assert.False(t, seen[r.CallID])
		seen[r.CallID] = true
	}
	require.NoError(t, sc.Err())
	assert.Len(t, seen, writers*each)
}

func TestJSONLFlushInterval(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	j := record.NewJSONLWith(w, record.JSONLOptions{FlushInterval: 5 * time.Millisecond})
	defer j.Close()
	require.NoError(t, j.Append(context.Background(), rec("a", "")))
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(buf.String(), `"call_id":"a"`)
	}, 5*time.Second, time.Millisecond, "a buffered line is written without Flush")

	// With the interval off, nothing is written until Flush.
	var off bytes.Buffer
	j2 := record.NewJSONLWith(&off, record.JSONLOptions{FlushInterval: -1})
	require.NoError(t, j2.Append(context.Background(), rec("b", "")))
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, off.Len())
	assert.Positive(t, j2.Stats().Buffered)
	require.NoError(t, j2.Flush())
	assert.Contains(t, off.String(), `"call_id":"b"`)
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

var errDiskFull = errors.New("no space left on device")

// flakyWriter fails while failing is set, optionally after writing part of p.
type flakyWriter struct {
	buf     bytes.Buffer
	failing bool
	partial int
}

func (w *flakyWriter) Write(p []byte) (int, error) {
	if w.failing {
		n := min(w.partial, len(p))
		w.buf.Write(p[:n])
		return n, errDiskFull
	}
	return w.buf.Write(p)
}

func TestJSONLFailingWriterLosesNothingUntilBacklog(t *testing.T) {
	ctx := context.Background()
	w := &flakyWriter{failing: true, partial: 7}
	j := record.NewJSONLWith(w, record.JSONLOptions{BufferSize: 200, MaxBacklog: 2000, FlushInterval: -1})
	var kept, dropped int
	for i := range 40 {
		err := j.Append(ctx, rec(fmt.Sprint(i), ""))
		switch {
		case errors.Is(err, record.ErrBacklog):
			dropped++
			assert.ErrorIs(t, err, errDiskFull, "the cause is kept")
		default:
			kept++
		}
	}
	assert.Positive(t, dropped, "the backlog is bounded")
	assert.Equal(t, uint64(dropped), j.Stats().Dropped)
	require.ErrorIs(t, j.Flush(), errDiskFull)

	w.failing = false // the disk recovers
	require.NoError(t, j.Close())
	got, err := record.ReadJSONL(&w.buf)
	require.NoError(t, err, "partial writes were continued, no torn lines:\n%s", w.buf.String())
	assert.Len(t, got, kept)
	prev := -1
	for _, r := range got {
		var n int
		_, err := fmt.Sscan(r.CallID, &n)
		require.NoError(t, err)
		assert.Greater(t, n, prev, "in order")
		prev = n
	}
}

func TestJSONLHugeLineWhileFailing(t *testing.T) {
	w := &flakyWriter{failing: true, partial: 10}
	j := record.NewJSONLWith(w, record.JSONLOptions{BufferSize: 100, MaxBacklog: 100, FlushInterval: -1})
	r := rec("big", "")
	r.ErrorMessage = strings.Repeat("y", 5000)
	// Part of the line reached the writer: the rest must be kept, or the
	// file would hold a torn line.
	require.ErrorIs(t, j.Append(context.Background(), r), errDiskFull)
	w.failing = false
	require.NoError(t, j.Close())
	got, err := record.ReadJSONL(&w.buf)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, r.ErrorMessage, got[0].ErrorMessage)
}

func TestOpenJSONLRepairsTornTail(t *testing.T) {
	dir := t.TempDir()
	whole := string(rec("a", "").AppendJSON(nil)) + "\n"
	tests := []struct {
		name, content, want string
		cut                 int64
	}{
		{"empty", "", "", 0},
		{"clean", whole, whole, 0},
		{"torn", whole + `{"call_id":"b","meth`, whole, 20},
		{"torn only line", `{"call_`, "", 7},
		{"whole record lacking its newline", whole + strings.TrimSuffix(whole, "\n"), whole + whole, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			cut, err := record.RepairJSONL(path)
			require.NoError(t, err)
			assert.Equal(t, tt.cut, cut)
			b, _ := os.ReadFile(path)
			assert.Equal(t, tt.want, string(b))

			// Opening repairs too, and appends after the repaired tail.
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			j, err := record.OpenJSONL(path)
			require.NoError(t, err)
			require.NoError(t, j.Append(context.Background(), rec("new", "")))
			require.NoError(t, j.Close())
			f, _ := os.Open(path)
			defer f.Close()
			got, err := record.ReadJSONL(f)
			require.NoError(t, err)
			assert.Equal(t, "new", got[len(got)-1].CallID)
		})
	}
	_, err := record.RepairJSONL(filepath.Join(dir, "missing.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = record.OpenJSONL(filepath.Join(dir, "no", "such", "dir.jsonl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestReaderReportsBadLinesAndGoesOn(t *testing.T) {
	a := string(rec("a", "").AppendJSON(nil))
	b := string(rec("b", "").AppendJSON(nil))
	input := a + "\n\n   \n{not json}\n" + b + "\n[1,2]\n" + `{"call_id":"torn","meth`
	r := record.NewReader(strings.NewReader(input))

	got, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, "a", got.CallID)

	_, err = r.Read()
	var le *record.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 4, le.Line, "blank lines count")
	assert.Contains(t, err.Error(), "line 4")

	got, err = r.Read()
	require.NoError(t, err)
	assert.Equal(t, "b", got.CallID)

	_, err = r.Read()
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 6, le.Line)

	_, err = r.Read()
	assert.Equal(t, io.EOF, err, "a torn final line is not an error")
	assert.True(t, r.Torn())
	_, err = r.Read()
	assert.Equal(t, io.EOF, err)

	all, err := record.ReadJSONL(strings.NewReader(input))
	assert.Equal(t, []string{"a", "b"}, ids(all), "valid records survive")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 4")
	assert.Contains(t, err.Error(), "line 6")
}

func TestReaderFinalLineWithoutNewline(t *testing.T) {
	got, err := record.ReadJSONL(strings.NewReader(string(rec("a", "").AppendJSON(nil))))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, ids(got))
	got, err = record.ReadJSONL(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestReaderLongLines(t *testing.T) {
	big := rec("big", "")
	big.ErrorMessage = strings.Repeat("z", 300<<10) // several bufio buffers
	line := string(big.AppendJSON(nil))
	input := line + "\n" + line + "\n" + string(rec("after", "").AppendJSON(nil)) + "\n"

	got, err := record.ReadJSONL(strings.NewReader(input))
	require.NoError(t, err)
	assert.Equal(t, []string{"big", "big", "after"}, ids(got))

	r := record.NewReader(strings.NewReader(input))
	r.MaxLine = 100 << 10
	_, err = r.Read()
	require.ErrorIs(t, err, record.ErrLineTooLong)
	_, err = r.Read()
	require.ErrorIs(t, err, record.ErrLineTooLong)
	after, err := r.Read()
	require.NoError(t, err)
	assert.Equal(t, "after", after.CallID)
	assert.Equal(t, 3, r.Line())
}

func TestReaderFailingSource(t *testing.T) {
	a := string(rec("a", "").AppendJSON(nil)) + "\n"
	boom := errors.New("disk read failed")
	src := io.MultiReader(strings.NewReader(a), iotest.ErrReader(boom))
	got, err := record.ReadJSONL(src)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, []string{"a"}, ids(got), "records before the failure are kept")

	r := record.NewReader(io.MultiReader(strings.NewReader(a), iotest.ErrReader(boom)))
	_, err = r.Read()
	require.NoError(t, err)
	_, err = r.Read()
	assert.ErrorIs(t, err, boom)
	_, err = r.Read()
	assert.ErrorIs(t, err, boom, "sticky")
}

func TestReadJSONLCapsErrorList(t *testing.T) {
	input := strings.Repeat("garbage\n", 100)
	got, err := record.ReadJSONL(strings.NewReader(input))
	assert.Empty(t, got)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "80 more lines that are not records")
	assert.Less(t, len(err.Error()), 5000)
}

func FuzzReadJSONL(f *testing.F) {
	f.Add([]byte(string(fullRecord().AppendJSON(nil)) + "\n"))
	f.Add([]byte("{}\n\n{\"call_id\":1}\n[\n" + `{"call_id":"x","args":{"a":1},"kwargs":[1]}`))
	f.Add([]byte(`{"call_id":"a","version":9}` + "\n\xff\xfe\n{\"args\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameWithoutArgs(t, data)
		got, _ := record.ReadJSONL(bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		if len(got) > lines {
			t.Fatalf("%d records from %d lines", len(got), lines)
		}
		for _, r := range got {
			line := r.AppendJSON(nil)
			if !json.Valid(line) || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("re-encoded record is not one valid line: %q", line)
			}
			if _, err := record.DecodeLine(line); err != nil {
				t.Fatalf("a record read is not a record once written: %v\n%s", err, line)
			}
			var back record.Record
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatalf("re-encoded record does not decode: %v", err)
			}
			if !bytes.Equal(back.AppendJSON(nil), line) {
				t.Fatalf("encoding is not stable:\n%s\n%s", line, back.AppendJSON(nil))
			}
		}
	})
}

func TestReaderRefusesNullLines(t *testing.T) {
	got, err := record.ReadJSONL(strings.NewReader("null\n" + string(rec("a", "").AppendJSON(nil)) + "\n"))
	assert.Equal(t, []string{"a"}, ids(got))
	var le *record.LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 1, le.Line)
}

package middleware_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// A recorder whose sinks keep nothing of a record (none, or the JSONL,
// Slog and Memory sinks of package record) and that has no redactor
// builds each record's Args in a pool buffer that a later call reuses:
// the history must keep copies (the whole Args of a record that starts a
// conversation, what a turn adds to the one before), a failure held for
// a retry that never comes must keep its own, a retried call is one
// record with the Args its attempts sent, and a sink's queue must hold
// the buffer until its sink has written the record (the JSONL file's
// writer is slow, so that its queue lags behind the calls). A sink of
// yours may keep the records it is given: with one, nothing is lent.
// Four goroutines call at once, so that the records of one line of calls
// come between those of another; every record is checked against what
// was sent after all the calls, when every buffer has been reused many
// times.
func TestLentArgsOutliveTheNextCall(t *testing.T) {
	history := func(rec *middleware.Recorder) []record.Record { return rec.History().Records() }
	t.Run("history only", func(t *testing.T) {
		rec := middleware.NewRecorder()
		checkArgs(t, callsLendingArgs(t, rec), history(rec))
	})
	for _, sync := range []bool{false, true} {
		name := "JSONL, Slog and Memory sinks, queued"
		opts := []middleware.Option{}
		if sync {
			name = "JSONL, Slog and Memory sinks, on the worker"
			opts = append(opts, middleware.WithSyncSinks())
		}
		t.Run(name, func(t *testing.T) {
			file := &slowWriter{}
			mem := record.NewMemory(1000)
			rec := middleware.NewRecorder(append(opts,
				middleware.WithSink(record.NewJSONLWith(file, record.JSONLOptions{BufferSize: 1, ArgsPrefix: true})),
				middleware.WithSink(record.NewSlog(slog.New(slog.DiscardHandler))),
				middleware.WithSink(mem))...)
			sent := callsLendingArgs(t, rec)
			checkArgs(t, sent, history(rec))
			written, err := record.ReadJSONL(bytes.NewReader(file.bytes()))
			require.NoError(t, err)
			checkArgs(t, sent, written)
			checkArgs(t, sent, mem.Records())
		})
	}
	t.Run("a full queue", func(t *testing.T) {
		// The JSONL file's queue drops what it has no room for: those
		// records give their hold on the buffer back at once.
		file := &slowWriter{delay: 2 * time.Millisecond}
		rec := middleware.NewRecorder(middleware.WithSinkQueue(1),
			middleware.WithSink(record.NewJSONLWith(file, record.JSONLOptions{BufferSize: 1})),
			middleware.WithLogger(slog.New(slog.DiscardHandler)))
		sent := callsLendingArgs(t, rec)
		checkArgs(t, sent, history(rec))
		assert.Positive(t, rec.Stats().Dropped, "the queue was full")
		written, err := record.ReadJSONL(bytes.NewReader(file.bytes()))
		require.NoError(t, err)
		require.NotEmpty(t, written)
		var want []string
		for _, s := range sent {
			want = append(want, string(chatArgs(t, s)))
		}
		for _, r := range written {
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, r.Args))
			assert.Contains(t, want, compact.String())
		}
	})
	t.Run("a sink of yours", func(t *testing.T) {
		var (
			mu   sync.Mutex
			kept []record.Record
		)
		rec := middleware.NewRecorder(middleware.WithSink(record.SinkFunc(func(_ context.Context, r record.Record) error {
			mu.Lock()
			defer mu.Unlock()
			kept = append(kept, r) // as it is given: a sink may keep a record
			return nil
		})))
		sent := callsLendingArgs(t, rec)
		checkArgs(t, sent, history(rec))
		mu.Lock()
		defer mu.Unlock()
		checkArgs(t, sent, kept)
	})
}

// slowWriter is a file that takes a while to write to.
type slowWriter struct {
	delay time.Duration // default 200 µs
	mu    sync.Mutex
	buf   bytes.Buffer
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(cmp.Or(w.delay, 200*time.Microsecond))
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *slowWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// checkArgs checks that records hold, between them, the Args sent.
func checkArgs(t *testing.T, sent []string, records []record.Record) {
	t.Helper()
	var got []string
	for _, r := range records {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, r.Args), "record %s", r.CallID)
		got = append(got, compact.String())
		if bytes.Contains(r.Args, []byte("retry me")) {
			assert.Equal(t, 2, r.Attempts, "a retried call is one record")
		}
	}
	want := make([]string, len(sent))
	for i, s := range sent {
		want[i] = string(chatArgs(t, s))
	}
	assert.ElementsMatch(t, want, got)
}

// chatArgs are the chat messages sent (a JSON array) as a record's Args
// hold them: each read by the OpenAI provider into the message model.
func chatArgs(t testing.TB, sent string) []byte {
	t.Helper()
	var msgs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(sent), &msgs))
	model := make([]record.Message, len(msgs))
	for i, m := range msgs {
		model[i] = openai.ChatMessage(m)
	}
	return record.AppendMessages(nil, model)
}

// callsLendingArgs makes conversations, unrelated calls, held 429s, a
// retried 500 and calls longer than a pool buffer through rec from four
// goroutines, closes rec, and returns the Args each call sent.
func callsLendingArgs(t *testing.T, rec *middleware.Recorder) []string {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[string(body)]++
		first := seen[string(body)] == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case bytes.Contains(body, []byte("rate me")):
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error"}}`)
		case bytes.Contains(body, []byte("retry me")) && first:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"try again","type":"server_error"}}`)
		default:
			io.WriteString(w, `{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
		}
	}))
	defer srv.Close()
	client := rec.Client(nil) // net/http alone: nothing is retried but by the test

	msg := func(role, text string) map[string]string { return map[string]string{"role": role, "content": text} }
	var (
		sentMu sync.Mutex
		sent   []string
	)
	call := func(messages ...map[string]string) {
		args, err := json.Marshal(messages)
		require.NoError(t, err)
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":%s}`, args)
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				// The same request sent again, as genai retries: a new
				// request with the same bytes would be a new call.
				req.Body, err = req.GetBody()
				require.NoError(t, err)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusInternalServerError || attempt > 0 {
				break // a 500 is retried once, with the same body
			}
		}
		sentMu.Lock()
		sent = append(sent, string(args))
		sentMu.Unlock()
	}
	long := strings.Repeat("a long turn that outgrows the pool's 8 KiB buffers. ", 400)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 5 {
				// A conversation: each call extends the one before.
				convo := []map[string]string{msg("system", "be brief"), msg("user", fmt.Sprintf("question %d.%d", g, i))}
				call(convo...)
				convo = append(convo, msg("assistant", "ok"), msg("user", "and then?"))
				call(convo...)
				// Calls that start lines of their own.
				call(msg("user", fmt.Sprintf("unrelated %d.%d", g, i)))
				call(msg("user", fmt.Sprintf("rate me %d.%d", g, i))) // a 429, held for a retry that never comes
				call(msg("user", fmt.Sprintf("retry me %d.%d", g, i)))
				call(msg("user", long), msg("user", fmt.Sprintf("after the long one %d.%d", g, i)))
			}
		})
	}
	wg.Wait()
	require.NoError(t, rec.Close()) // emits the held failures, flushes the sinks
	return sent
}

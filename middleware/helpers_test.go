package middleware_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// chatBody is a small OpenAI-style chat request.
const chatBody = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello"}],"temperature":0.2}`

const chatResponse = `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"Hi!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`

// env is a recorder wired to a memory history, a JSONL buffer and a log
// buffer, with sinks fed synchronously so tests see records at once.
type env struct {
	rec    *middleware.Recorder
	client *http.Client
	mu     sync.Mutex
	jsonl  bytes.Buffer
	logs   bytes.Buffer
}

func (e *env) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.jsonl.Write(p)
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEnv(t *testing.T, opts ...middleware.Option) *env {
	t.Helper()
	e := &env{}
	logs := &lockedBuffer{}
	all := append([]middleware.Option{
		middleware.WithSink(record.NewJSONLWith(e, record.JSONLOptions{FlushInterval: -1, BufferSize: 1})),
		middleware.WithSyncSinks(),
		middleware.WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, opts...)
	e.rec = middleware.NewRecorder(all...)
	e.client = e.rec.Client(nil)
	t.Cleanup(func() {
		e.rec.Close()
		e.logs.WriteString(logs.String())
	})
	return e
}

// records returns what the history holds.
func (e *env) records() []record.Record { return e.rec.History().Records() }

// sinkRecords reads back what the JSONL sink received.
func (e *env) sinkRecords(t *testing.T) []record.Record {
	t.Helper()
	require.NoError(t, e.rec.Flush())
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, err := record.ReadJSONL(bytes.NewReader(e.jsonl.Bytes()))
	require.NoError(t, err)
	return rs
}

func (e *env) sinkText() string {
	_ = e.rec.Flush()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.jsonl.String()
}

func one(t *testing.T, e *env) record.Record {
	t.Helper()
	rs := e.records()
	require.Len(t, rs, 1, "exactly one record")
	return rs[0]
}

// serve returns a test server answering every request with status and body.
func serve(t *testing.T, status int, contentType, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, c *http.Client, ctx context.Context, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// checkGoroutines fails the test if goroutines started during it are
// still running once it ends (give them a moment to wind down).
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Errorf("goroutines: %d before, %d after\n%s", before, now, buf[:n])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// serveFunc returns a test server running h.
func serveFunc(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

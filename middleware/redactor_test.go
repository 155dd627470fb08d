package middleware_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// A redactor runs on the recorder's side, after the call has returned:
// one that never returns (until the test lets it) holds up no call, and
// the record reaches the history and the sinks only once it has run.
func TestRedactorRunsOffTheCallsPath(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello jane@example.com"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	release, entered := make(chan struct{}), make(chan struct{}, 4)
	pii := redact.PII()
	var jsonl bytes.Buffer
	rec := middleware.NewRecorder(middleware.WithOutput(), middleware.WithSink(record.NewJSONL(&jsonl)), middleware.WithRedactor(func(r *record.Record) {
		entered <- struct{}{}
		<-release
		pii(r)
	}))
	defer rec.Close()
	client := rec.Client(nil)

	for range 2 {
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"I am jane@example.com"}]}`))
			if !assert.NoError(t, err) {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Contains(t, string(b), "jane@example.com", "the caller gets the answer as it was")
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the call waited for the redactor")
		}
	}
	<-entered // the first record is with the redactor, which is stuck
	time.Sleep(50 * time.Millisecond)
	assert.Zero(t, rec.Stats().Recorded, "nothing is recorded before the redactor has run")
	close(release)
	require.NoError(t, rec.Flush())
	rs := rec.History().Records()
	require.Len(t, rs, 2)
	for _, r := range rs {
		assert.NotContains(t, string(r.AppendJSON(nil)), "jane@example.com")
		assert.Equal(t, "Hello [EMAIL]", r.Output.Text())
	}
	require.NoError(t, rec.Close())
	assert.NotContains(t, jsonl.String(), "jane@example.com")
	assert.Equal(t, 2, strings.Count(jsonl.String(), "[EMAIL]")/2, "args and output of each record redacted")
}

// BenchmarkRedactor is BenchmarkRecorder's call (a 4 KiB chat request and
// answer, from memory) through a recorder without a redactor and with
// redact.PII: ns/op is what the caller waits, cpu-ns/op what the whole
// process spends, the worker's redaction included.
func BenchmarkRedactor(b *testing.B) {
	for _, call := range []struct {
		name string
		base benchdata.Transport
	}{{"json", benchdata.JSON}, {"stream", benchdata.SSE}} {
		for _, red := range []string{"none", "pii", "pii-keyed"} {
			opts := []middleware.Option{middleware.WithOutput()}
			switch red {
			case "pii":
				opts = append(opts, middleware.WithRedactor(redact.PII()))
			case "pii-keyed":
				opts = append(opts, middleware.WithRedactor(redact.PII(redact.WithKey([]byte("bench")))))
			}
			rec := middleware.NewRecorder(opts...)
			client := &http.Client{Transport: middleware.Chain(call.base, rec.Middleware())}
			b.Run("call="+call.name+"/redactor="+red, func(b *testing.B) {
				buf := make([]byte, 32<<10)
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					if err := benchCall(client, buf); err != nil {
						b.Fatal(err)
					}
				}
				rec.Flush() // the worker's share belongs to these calls
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			rec.Close()
		}
	}
}

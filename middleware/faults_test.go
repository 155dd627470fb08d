package middleware_test

// Faults found by trying the recorder as an adversary would: hostile
// servers, sinks and transports. Each test names the promise it holds.

import (
	"context"
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
	"github.com/llmhistory/llmhistory/record"
)

// guard fails the test when done is not closed in a long while: a bound on
// a wait that must not hang, never a measure of speed.
func guard(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still waiting after 30 s", what)
	}
}

// faultySink is a sink that panics in its Flush or Close, or whose Append
// blocks until released.
type faultySink struct {
	*record.Memory
	flushPanics, closePanics bool
	block                    chan struct{} // Append waits on it when not nil
}

func (s *faultySink) Append(ctx context.Context, r record.Record) error {
	if s.block != nil {
		<-s.block
	}
	return s.Memory.Append(ctx, r)
}

func (s *faultySink) Flush() error {
	if s.flushPanics {
		panic("flush bug")
	}
	return nil
}

func (s *faultySink) Close() error {
	if s.closePanics {
		panic("close bug")
	}
	return nil
}

func callOnce(t *testing.T, client *http.Client, url string) {
	t.Helper()
	resp, err := post(t, client, context.Background(), url, chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// Faults 1 and 2: a sink whose Flush or Close panics costs nobody else.
func TestSinkPanicsInFlushAndClose(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			bad := &faultySink{Memory: record.NewMemory(10), flushPanics: true, closePanics: true}
			good := &flushCloser{Memory: record.NewMemory(10)}
			var logs lockedBuffer
			opts := []middleware.Option{
				middleware.WithSink(bad), middleware.WithSink(good),
				middleware.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
			}
			if sync {
				opts = append(opts, middleware.WithSyncSinks())
			}
			rec := middleware.NewRecorder(opts...)
			srv := serve(t, 200, "application/json", chatResponse)
			callOnce(t, rec.Client(nil), srv.URL)

			var pe *record.PanicError
			require.ErrorAs(t, rec.Flush(), &pe, "the panic comes back as an error; the process lives")
			assert.Equal(t, "Flush", pe.Method)
			assert.Equal(t, 1, good.flushes(), "the other sink is flushed")

			callOnce(t, rec.Client(nil), srv.URL)
			require.ErrorAs(t, rec.Close(), &pe, "Close does not panic in the caller")
			assert.Equal(t, "Close", pe.Method)
			assert.Equal(t, 1, good.closes(), "the sink after the panicking one is closed")
			assert.Equal(t, 2, good.Len(), "and got every record")
			assert.Equal(t, 2, bad.Len())
			assert.GreaterOrEqual(t, rec.Stats().Panics, uint64(2), "counted")
			assert.Contains(t, logs.String(), "flush bug", "logged")
		})
	}
}

type flushCloser struct {
	*record.Memory
	mu             sync.Mutex
	flushed, close int
}

func (f *flushCloser) Flush() error { f.mu.Lock(); f.flushed++; f.mu.Unlock(); return nil }
func (f *flushCloser) Close() error { f.mu.Lock(); f.close++; f.mu.Unlock(); return nil }
func (f *flushCloser) flushes() int { f.mu.Lock(); defer f.mu.Unlock(); return f.flushed }
func (f *flushCloser) closes() int  { f.mu.Lock(); defer f.mu.Unlock(); return f.close }

// Fault 3: a sink that never returns holds neither Close nor Shutdown
// forever, nor the other sinks.
func TestShutdownGivesUpOnAStuckSink(t *testing.T) {
	srv := serve(t, 200, "application/json", chatResponse)

	t.Run("queued sinks", func(t *testing.T) {
		stuck := &faultySink{Memory: record.NewMemory(10), block: make(chan struct{})}
		defer close(stuck.block)
		good := &flushCloser{Memory: record.NewMemory(10)}
		rec := middleware.NewRecorder(middleware.WithSink(stuck), middleware.WithSink(good))
		for range 3 {
			callOnce(t, rec.Client(nil), srv.URL)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := rec.Shutdown(ctx)
		var se *middleware.ShutdownError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, []string{"*middleware_test.faultySink"}, se.Sinks)
		assert.Equal(t, 3, se.Undelivered, "one held in Append, two queued behind it")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "3 records did not reach them")
		assert.Equal(t, 3, good.Len(), "the other sink got every record")
		assert.Equal(t, 1, good.closes())
		assert.Equal(t, err, rec.Close(), "closed, and a later Close says the same")

		// Calls after Shutdown pass through unrecorded.
		callOnce(t, rec.Client(nil), srv.URL)
		assert.Len(t, rec.History().Records(), 3)
	})

	t.Run("sync sinks", func(t *testing.T) {
		stuck := &faultySink{Memory: record.NewMemory(10), block: make(chan struct{})}
		defer close(stuck.block)
		rec := middleware.NewRecorder(middleware.WithSink(stuck), middleware.WithSyncSinks(), middleware.WithCloseTimeout(50*time.Millisecond))
		resp, err := post(t, rec.Client(nil), context.Background(), srv.URL, chatBody)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body) // the record goes to the stuck sink on the worker
		resp.Body.Close()
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			var se *middleware.ShutdownError
			assert.ErrorAs(t, rec.Close(), &se, "Close has its own bound")
		}()
		guard(t, closed, "Close with a stuck sink")
	})
}

// Fault 4: a transport below the recorder that returns nothing at all.
func TestNilResponseWithNilError(t *testing.T) {
	rec := middleware.NewRecorder(middleware.WithDedupWindow(0))
	defer rec.Close()
	broken := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	client := &http.Client{Transport: middleware.Chain(broken, rec.Middleware())}
	_, err := post(t, client, context.Background(), "http://example.invalid/v1/chat/completions", chatBody)
	require.Error(t, err)
	bare := &http.Client{Transport: broken}
	_, want := post(t, bare, context.Background(), "http://example.invalid/v1/chat/completions", chatBody)
	assert.Equal(t, want.Error(), strings.ReplaceAll(err.Error(), "*middleware.transport", "middleware_test.roundTripFunc"),
		"the caller gets http.Client's own error, as without the recorder (naming the outermost transport)")

	rs := rec.History().Records()
	require.Len(t, rs, 1, "one record")
	assert.Equal(t, record.ErrorTransport, rs[0].ErrorType)
	assert.Equal(t, "http: RoundTripper implementation (middleware_test.roundTripFunc) returned a nil *Response with a nil error", rs[0].ErrorMessage,
		"the record names the broken transport")
	assert.Zero(t, rec.Stats().Pending, "the attempt was finished")
	assert.Zero(t, rec.Stats().Panics)
}

// Fault 5: closing an unread error body never waits on the network.
func TestClosingAnUnreadErrorBodyDoesNotRead(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(429)
		io.WriteString(w, `{"error":{"message":"slow`)
		w.(http.Flusher).Flush()
		<-release // the rest never comes while the client waits
	}))
	defer srv.Close()
	defer close(release)

	e := newEnv(t, middleware.WithDedupWindow(0))
	resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	closed := make(chan struct{})
	go func() {
		resp.Body.Close()
		close(closed)
	}()
	guard(t, closed, "Close of an error body the server stalls")
	r := one(t, e)
	assert.Equal(t, record.ErrorRateLimit, r.ErrorType)
}

// Fault 6: an upload without GetBody streams as the transport reads it;
// reading it first deadlocks an upload that waits for the server.
func TestUploadWithoutGetBodyStreams(t *testing.T) {
	firstSeen := make(chan struct{})
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64)
		n, _ := io.ReadAtLeast(r.Body, buf, len(`{"model":"m",`))
		close(firstSeen) // only now does the client write the rest
		rest, _ := io.ReadAll(r.Body)
		got = append(buf[:n:n], rest...)
		io.WriteString(w, chatResponse)
	}))
	defer srv.Close()

	e := newEnv(t)
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, `{"model":"m",`)
		<-firstSeen
		io.WriteString(pw, `"messages":[{"role":"user","content":"hi"}]}`)
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", pr)
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := e.client.Do(req)
		if assert.NoError(t, err) {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	guard(t, done, "an upload that waits for the server")
	want := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	assert.Equal(t, want, string(got), "the server got every byte")
	r := one(t, e)
	assert.JSONEq(t, `[`+`{"role":"user","parts":[{"type":"text","content":"hi"}]}`+`]`, string(r.Args), "captured as the message model reads what was sent")
	assert.Empty(t, r.Truncated)
}

// Fault 6, continued: once read whole, such a body can be sent again by a
// retry inside the recorder.
func TestBodyWithoutGetBodyIsResentOnceRead(t *testing.T) {
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, chatResponse)
	}))
	defer srv.Close()
	rec := middleware.NewRecorder()
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(nil, rec.Middleware(), middleware.Retry(middleware.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}))}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", io.NopCloser(strings.NewReader(chatBody)))
	resp, err := client.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, []string{chatBody, chatBody}, bodies)
	rs := rec.History().Records()
	require.Len(t, rs, 1)
	assert.Equal(t, 2, rs[0].Attempts)
	assert.True(t, rs[0].Outcome.OK)
}

// Fault 7: the hops of one client.Do are one logical call, whatever the
// redirect; a 303 turns the POST into a GET, and the record keeps what the
// caller asked.
func TestRedirectsAreOneRecord(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				switch r.URL.Path {
				case "/v1/chat/completions":
					http.Redirect(w, r, "/v2/chat/completions", code)
				case "/v2/chat/completions":
					http.Redirect(w, r, "/v3/chat/completions", code)
				default:
					io.WriteString(w, chatResponse)
				}
			}))
			defer srv.Close()
			e := newEnv(t)
			callOnce(t, e.client, srv.URL+"/v1/chat/completions")
			r := one(t, e)
			assert.Equal(t, 2, r.Hops)
			assert.Equal(t, 1, r.Attempts)
			assert.True(t, r.Outcome.OK)
			assert.Equal(t, "openai.chat.completions.create", r.MethodName)
			assert.Contains(t, string(r.Args), "Hello", "the caller's messages, even after a hop without a body")
		})
	}
}

// Fault 8: a CRLF-framed stream longer than the capture keeps its end.
func TestLongCRLFStreamKeepsItsUsage(t *testing.T) {
	var b strings.Builder
	chunk := func(s string) { b.WriteString("data: " + s + "\r\n\r\n") }
	chunk(`{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`)
	for i := 0; b.Len() < 64<<10; i++ {
		chunk(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"word%d "}}]}`, i))
	}
	chunk(`{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(`{"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":4321,"total_tokens":4332}}`)
	chunk(`[DONE]`)
	srv := serve(t, 200, "text/event-stream", b.String())

	e := newEnv(t, middleware.WithMaxBody(0, 4<<10))
	callOnce(t, e.client, srv.URL+"/v1/chat/completions")
	r := one(t, e)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "stop", r.Outcome.FinishReason)
	require.NotNil(t, r.Usage)
	assert.Equal(t, 4332, r.Usage.TotalTokens)
}

// Fault 9: a stream whose end is missing is not a success.
func TestStreamEndingInsideAnEventIsIncomplete(t *testing.T) {
	body := `data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n" +
		`data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"lo"`
	srv := serve(t, 200, "text/event-stream", body)
	e := newEnv(t, middleware.WithDedupWindow(0))
	callOnce(t, e.client, srv.URL+"/v1/chat/completions")
	r := one(t, e)
	assert.False(t, r.Outcome.OK)
	assert.Equal(t, record.ErrorIncomplete, r.ErrorType)
}

// Fault 10: a stream cut by http.Client.Timeout is a timeout, every time.
func TestClientTimeoutMidStreamIsAlwaysATimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	e := newEnv(t, middleware.WithDedupWindow(0))
	// Long enough that a loaded machine still gets the headers in time:
	// the cut must come mid-stream, after the first chunk.
	client := e.rec.Client(&http.Client{Timeout: 200 * time.Millisecond})
	const runs = 10
	for range runs {
		resp, err := post(t, client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.Error(t, err, "the client's timeout cut the stream")
		resp.Body.Close()
	}
	types := map[string]int{}
	for _, r := range e.records() {
		types[r.ErrorType]++
	}
	assert.Equal(t, map[string]int{record.ErrorTimeout: runs}, types, "one cause, one type")
}

// Faults 12 and 13: a key in an unknown endpoint's path, and a credential
// the server echoes back whatever its shape, reach no record, sink or log.
func TestCredentialsEchoedOrInThePathAreRedacted(t *testing.T) {
	azureKey := strings.Repeat("0123456789abcdef", 2) // 32 hex digits: not key-shaped
	googleKey := "AIzaSy" + strings.Repeat("Q", 33)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"Access denied: key %s is not valid for path %s","code":"401"}}`, r.Header.Get("Api-Key"), r.URL.Path)
	}))
	defer srv.Close()

	var logs lockedBuffer
	e := newEnv(t, middleware.WithDedupWindow(0), middleware.WithSink(record.NewSlog(slog.New(slog.NewJSONHandler(&logs, nil)))))
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/gateway/"+googleKey+"/rerank", strings.NewReader(`{"query":"q"}`))
	req.Header.Set("Api-Key", azureKey)
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	echoed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(echoed), azureKey, "the caller gets what the server sent")

	r := one(t, e)
	assert.Equal(t, "http.POST /gateway/[REDACTED]/rerank", r.MethodName)
	assert.Contains(t, r.ErrorMessage, "[REDACTED]")
	require.NoError(t, e.rec.Flush())
	for where, text := range map[string]string{
		"record": string(r.AppendJSON(nil)), "jsonl": e.sinkText(), "slog": logs.String(),
	} {
		assert.NotContains(t, text, azureKey, where)
		assert.NotContains(t, text, googleKey, where)
	}
}

// Fault 11's other half lives in providers/gemini; through the recorder,
// a Gemini call blocked for safety in the int encoding is not a success.
func TestGeminiIntEnumsThroughTheRecorder(t *testing.T) {
	srv := serve(t, 200, "application/json", `{"candidates":[{"finishReason":3,"index":0}],"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`)
	e := newEnv(t, middleware.WithDedupWindow(0))
	resp, err := post(t, e.client, context.Background(), srv.URL+"/v1beta/models/gemini-pro:generateContent?%24alt=json%3Benum-encoding%3Dint", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := one(t, e)
	assert.Equal(t, record.ErrorContentFilter, r.ErrorType)
	assert.Equal(t, "SAFETY", r.Outcome.FinishReason)
}

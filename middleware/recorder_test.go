package middleware_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
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

func TestSuccessIsOneRecord(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	ctx := middleware.WithTrace(context.Background(), "conv-1")
	resp, err := post(t, e.client, ctx, srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, chatResponse, string(got))

	r := one(t, e)
	assert.Len(t, r.CallID, 26)
	assert.Equal(t, "openai.chat.completions.create", r.MethodName)
	assert.Equal(t, record.SpeakerUser, r.Speaker)
	assert.Equal(t, "conv-1", r.TraceID)
	require.NotNil(t, r.Depth)
	assert.Equal(t, 0, *r.Depth)
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "chat.completion", HTTPStatus: 200, FinishReason: "stop", ResponseID: "chatcmpl-1"}, r.Outcome)
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, string(r.Args))
	assert.JSONEq(t, `{"model":"gpt-4o-mini","temperature":0.2}`, string(r.Kwargs))
	assert.Equal(t, "gpt-4o-mini-2024-07-18", r.Model)
	assert.Equal(t, &record.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}, r.Usage)
	assert.Equal(t, 1, r.Attempts)
	assert.Positive(t, r.DurationMS)
	assert.True(t, r.HistoryRecordAppended)
	assert.Equal(t, 1, r.ConversationHistorySize)
	assert.NoError(t, r.Validate())

	sunk := e.sinkRecords(t)
	require.Len(t, sunk, 1)
	assert.Equal(t, r, sunk[0], "the sink gets what the history holds")
	assert.Equal(t, middleware.Stats{Recorded: 1, Sinks: []middleware.SinkStats{{Sink: "*record.JSONL", Written: 1}}}, e.rec.Stats())
}

func TestErrorStatusesAreOneRecordEach(t *testing.T) {
	tests := []struct {
		status    int
		body      string
		wantType  string
		retriable bool
		wantMsg   string
	}{
		{400, `{"error":{"message":"bad 'temperature'","type":"invalid_request_error","param":"temperature","code":null}}`, "invalid_request", false, "bad 'temperature'"},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "auth", false, "Incorrect API key provided"},
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, "quota", false, "You exceeded your current quota"},
		{500, `{"error":{"message":"The server had an error","type":"server_error"}}`, "server", true, "The server had an error"},
		{502, "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>", "server", true, "502 Bad Gateway"},
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded", true, "Overloaded"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			e := newEnv(t, middleware.WithDedupWindow(0))
			srv := serve(t, tt.status, "application/json", tt.body)
			resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
			require.NoError(t, err)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.body, string(got), "the caller gets the error body untouched")
			assert.Equal(t, tt.status, resp.StatusCode)

			r := one(t, e)
			assert.Equal(t, "error", r.Outcome.Status)
			assert.False(t, r.Outcome.OK)
			assert.Equal(t, tt.wantType, r.Outcome.ErrorType)
			assert.Equal(t, tt.wantType, r.ErrorType)
			assert.Equal(t, tt.retriable, r.Outcome.Retriable)
			assert.Equal(t, tt.status, r.Outcome.HTTPStatus)
			assert.Equal(t, tt.wantMsg, r.ErrorMessage)
		})
	}
}

func TestErrorBodyClosedUnreadIsRecordedFromItsStatus(t *testing.T) {
	// SDKs that retry close a 429's body without reading it. Close does not
	// read it for them (the server may stall): the status tells the type.
	e := newEnv(t, middleware.WithDedupWindow(0))
	srv := serve(t, 429, "application/json", `{"error":{"message":"quota","code":"insufficient_quota"}}`)
	resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	r := one(t, e)
	assert.Equal(t, record.ErrorRateLimit, r.ErrorType)
	assert.Equal(t, "HTTP 429 Too Many Requests (body closed unread)", r.ErrorMessage)
}

func TestTransportErrorIsOneRecord(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	e := newEnv(t, middleware.WithDedupWindow(0))
	_, err = post(t, e.client, context.Background(), "http://"+addr+"/v1/chat/completions?key=AIzaSyD-canary-canary-canary-canary-canary", chatBody)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AIzaSyD-canary", "the caller's error is untouched")

	r := one(t, e)
	assert.Equal(t, record.ErrorTransport, r.ErrorType)
	assert.True(t, r.Outcome.Retriable)
	assert.Zero(t, r.Outcome.HTTPStatus)
	assert.Contains(t, r.ErrorMessage, "connection refused")
	assert.NotContains(t, r.ErrorMessage, "canary", "the key in the URL is redacted from the record")
}

// sse writes events one by one, flushing each, and waits on gate (if set)
// after the first.
func sseServer(t *testing.T, events int, gate <-chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := range events {
			fmt.Fprintf(w, "data: {\"id\":\"chunk\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			f.Flush()
			if i == 0 && gate != nil {
				select {
				case <-gate:
				case <-r.Context().Done():
					return
				}
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFirstEventArrivesWithoutWaitingForTheRest(t *testing.T) {
	e := newEnv(t)
	gate := make(chan struct{})
	srv := sseServer(t, 3, gate)
	resp, err := post(t, e.client, context.Background(), srv.URL, `{"stream":true}`)
	require.NoError(t, err)
	defer resp.Body.Close()

	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		assert.Contains(t, line, `"t0"`)
	case <-time.After(10 * time.Second):
		t.Fatal("the first event was held back while the server waits to send the rest")
	}
	assert.Empty(t, e.records(), "nothing recorded while the stream is open")
	close(gate)
}

func TestStreamReadToTheEnd(t *testing.T) {
	e := newEnv(t)
	srv := sseServer(t, 5, nil)
	resp, err := post(t, e.client, context.Background(), srv.URL, `{"model":"m","stream":true,"messages":[{"role":"tool","content":"42"}]}`)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	r := one(t, e)
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "stream", r.Outcome.ValueClass)
	assert.Equal(t, record.SpeakerTool, r.Speaker)
}

func TestStreamClosedHalfWayIsIncomplete(t *testing.T) {
	e := newEnv(t)
	gate := make(chan struct{})
	defer close(gate)
	srv := sseServer(t, 3, gate)
	resp, err := post(t, e.client, context.Background(), srv.URL, `{"stream":true}`)
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = io.ReadFull(resp.Body, buf)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	r := one(t, e)
	assert.False(t, r.Outcome.OK)
	assert.Equal(t, record.ErrorIncomplete, r.ErrorType)
	assert.Equal(t, 200, r.Outcome.HTTPStatus)
	assert.Contains(t, r.ErrorMessage, "closed after")
	assert.NoError(t, resp.Body.Close(), "a second Close is harmless")
	assert.Len(t, e.records(), 1)
}

func TestCancelMidStream(t *testing.T) {
	e := newEnv(t)
	gate := make(chan struct{})
	defer close(gate)
	srv := sseServer(t, 3, gate)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, e.client, ctx, srv.URL, `{"stream":true}`)
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "t0")
	cancel()
	_, err = io.ReadAll(resp.Body)
	assert.Error(t, err)

	r := one(t, e)
	assert.Equal(t, "canceled", r.Outcome.Status)
	assert.Equal(t, record.ErrorCanceled, r.ErrorType)
}

func TestDeadlineMidStream(t *testing.T) {
	e := newEnv(t, middleware.WithDedupWindow(0))
	gate := make(chan struct{})
	defer close(gate)
	srv := sseServer(t, 3, gate)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	resp, err := post(t, e.client, ctx, srv.URL, `{"stream":true}`)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err)
	r := one(t, e)
	assert.Equal(t, record.ErrorTimeout, r.ErrorType)
}

func TestBodyNeverClosedIsFinalizedOnClose(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	_ = resp // never read, never closed
	assert.Empty(t, e.records())
	assert.Equal(t, 1, e.rec.Stats().Pending)

	require.NoError(t, e.rec.Close())
	r := one(t, e)
	assert.Equal(t, record.ErrorIncomplete, r.ErrorType)
	assert.Contains(t, r.ErrorMessage, "never closed")
	assert.Zero(t, e.rec.Stats().Pending)
	assert.Len(t, e.sinkRecords(t), 1)
	resp.Body.Close() // late: nothing more is recorded
	assert.Len(t, e.records(), 1)
}

func TestJSONDecoderThatStopsBeforeEOFIsComplete(t *testing.T) {
	// go-openai decodes with json.Decoder, which may never read EOF.
	e := newEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, chatResponse) // chunked: no Content-Length
		w.(http.Flusher).Flush()
	}))
	defer srv.Close()
	resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, jsonDecode(resp.Body, &v))
	resp.Body.Close()
	assert.True(t, one(t, e).Outcome.OK)
}

func TestBytesIdenticalUnderRandomChunking(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range 40 {
		size := rng.IntN(3 << 20) // across the 1 MiB capture cap, too
		if i%4 == 0 {
			size = rng.IntN(200)
		}
		body := make([]byte, size)
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		var chunks []int
		for left := size; left > 0; {
			n := 1 + rng.IntN(min(left, 64<<10))
			chunks = append(chunks, n)
			left -= n
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			off := 0
			for _, n := range chunks {
				w.Write(body[off : off+n])
				w.(http.Flusher).Flush()
				off += n
			}
		}))
		e := newEnv(t)
		resp, err := post(t, e.client, context.Background(), srv.URL, "{}")
		require.NoError(t, err)
		var got bytes.Buffer
		buf := make([]byte, 1+rng.IntN(100<<10))
		for {
			n, err := resp.Body.Read(buf[:1+rng.IntN(len(buf))])
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		resp.Body.Close()
		srv.Close()
		require.True(t, bytes.Equal(body, got.Bytes()), "round %d: %d bytes sent, %d received", i, len(body), got.Len())
		require.Len(t, e.records(), 1)
	}
}

func TestCallerRequestUnchanged(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions?x=1", strings.NewReader(chatBody))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-test-0123456789abcdefghij")
	req.Header.Set("X-Custom", "v")
	before := req.Clone(req.Context())
	beforeHeader := req.Header.Clone()
	getBody := req.GetBody

	resp, err := e.client.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	assert.Equal(t, beforeHeader, req.Header)
	assert.Equal(t, before.URL.String(), req.URL.String())
	assert.Equal(t, before.ContentLength, req.ContentLength)
	assert.Equal(t, before.Context(), req.Context(), "no context swapped in")
	assert.NotNil(t, req.GetBody)
	assert.Equal(t, fmt.Sprintf("%p", getBody), fmt.Sprintf("%p", req.GetBody))
	b, _ := req.GetBody()
	replay, _ := io.ReadAll(b)
	assert.Equal(t, chatBody, string(replay), "GetBody still replays the body")
}

// redirectServer answers its first request on /start with a redirect of
// the given code to /end, and records the body /end receives.
func redirectServer(t *testing.T, code int) (*httptest.Server, *string) {
	var got string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/end", code)
			return
		}
		mu.Lock()
		got = string(b)
		mu.Unlock()
		io.WriteString(w, chatResponse)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestRedirectReplaysTheBody(t *testing.T) {
	for _, code := range []int{307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			e := newEnv(t)
			srv, got := redirectServer(t, code)

			// With GetBody (strings.Reader bodies have one).
			resp, err := post(t, e.client, context.Background(), srv.URL+"/start", chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, chatBody, *got)

			// Without GetBody, http.Client cannot follow the redirect, with or
			// without the recorder: the caller gets the redirect itself.
			for _, c := range []*http.Client{http.DefaultClient, e.client} {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/start", io.NopCloser(strings.NewReader(chatBody)))
				resp, err = c.Do(req)
				require.NoError(t, err)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				assert.Equal(t, code, resp.StatusCode)
			}
			require.NoError(t, e.rec.Close()) // emits the redirect no client followed
			rs := e.records()
			require.Len(t, rs, 2, "the followed redirect and its hop are one record")
			assert.Equal(t, 1, rs[0].Hops)
			assert.Equal(t, 1, rs[0].Attempts, "a hop is not a retry")
			assert.True(t, rs[0].Outcome.OK)
			assert.Equal(t, "chat.completion", rs[0].Outcome.ValueClass)
			assert.Zero(t, rs[1].Hops)
			assert.False(t, rs[1].Outcome.OK, "a redirect is never a success")
			assert.Empty(t, rs[1].Outcome.ValueClass)
			assert.Equal(t, code, rs[1].Outcome.HTTPStatus)
			assert.Contains(t, rs[1].ErrorMessage, "redirect to /end, not followed")
		})
	}
}

func TestLargeRequestBodyStreamsThroughUntouched(t *testing.T) {
	var received []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received, _ = io.ReadAll(r.Body)
		io.WriteString(w, "{}")
	}))
	defer srv.Close()
	e := newEnv(t, middleware.WithMaxBody(1024, 0))
	big := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 10000) + `"}]}`
	for _, getBody := range []bool{true, false} {
		var rd io.Reader = strings.NewReader(big)
		if !getBody {
			rd = io.NopCloser(rd) // hides the type: no GetBody
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, rd)
		resp, err := e.client.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, big, string(received), "getBody=%v", getBody)
	}
	for _, r := range e.records() {
		assert.Equal(t, []string{"args", "kwargs"}, r.Truncated)
		assert.True(t, r.Outcome.OK)
	}
}

func TestConcurrentCallsShareOneRecorder(t *testing.T) {
	checkGoroutines(t)
	srv := serve(t, 200, "application/json", chatResponse)
	logs := &lockedBuffer{}
	jsonl := &lockedBuffer{}
	rec := middleware.NewRecorder(
		middleware.WithHistory(record.NewMemory(5000)),
		middleware.WithSink(record.NewJSONL(jsonl)),
		middleware.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))),
	)
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	client := middleware.NewClient(&http.Client{Transport: transport}, rec.Middleware())
	const calls = 1000
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx := middleware.WithTrace(context.Background(), fmt.Sprint("t", i%10))
			resp, err := post(t, client, ctx, srv.URL, chatBody)
			if !assert.NoError(t, err) {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, chatResponse, string(b))
		})
	}
	wg.Wait()
	require.NoError(t, rec.Close())
	transport.CloseIdleConnections()

	assert.Equal(t, calls, rec.History().Len())
	assert.Equal(t, middleware.Stats{Recorded: calls, Sinks: []middleware.SinkStats{{Sink: "*record.JSONL", Written: calls}}}, rec.Stats())
	ids := map[string]bool{}
	for _, r := range rec.History().Records() {
		assert.False(t, ids[r.CallID], "call IDs are unique")
		ids[r.CallID] = true
	}
	rs, err := record.ReadJSONL(strings.NewReader(jsonl.String()))
	require.NoError(t, err)
	assert.Len(t, rs, calls, "every record reached the sink")
	assert.Equal(t, 100, rec.History().TraceLen("t3"))
	assert.Empty(t, logs.String())
}

func TestCallsAfterClosePassThrough(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	require.NoError(t, e.rec.Close())
	resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, chatResponse, string(b))
	assert.Empty(t, e.records())
}

var errSinkDown = errors.New("sink down")

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// A stream's record holds the time to its first chunk, from the call's
// start; other calls have none.
func TestTimeToFirstChunk(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e := newEnv(t, middleware.WithClock(clock))
	for _, stream := range []bool{true, false} {
		var srv *httptest.Server
		if stream {
			srv = sseServer(t, 5, nil)
		} else {
			srv = serve(t, 200, "application/json", chatResponse)
		}
		resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
		require.NoError(t, err)
		advance(120 * time.Millisecond)
		_, err = resp.Body.Read(make([]byte, 1))
		require.NoError(t, err)
		advance(380 * time.Millisecond)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rs := e.records()
	require.Len(t, rs, 2)
	assert.Equal(t, 120.0, rs[0].TimeToFirstChunkMS, "the stream")
	assert.Equal(t, 500.0, rs[0].DurationMS)
	assert.Zero(t, rs[1].TimeToFirstChunkMS, "not a stream")
}

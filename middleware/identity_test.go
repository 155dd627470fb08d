package middleware_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

func call(t *testing.T, e *env, ctx context.Context, url, body string, header ...string) record.Record {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rs := e.records()
	return rs[len(rs)-1]
}

func TestTraceParentDepth(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	ctx := middleware.WithTrace(context.Background(), "conv")

	top := call(t, e, ctx, srv.URL, chatBody)
	assert.Equal(t, 0, *top.Depth)
	assert.Empty(t, top.ParentCallID)

	child := middleware.WithParent(ctx, top.CallID)
	mid := call(t, e, child, srv.URL, chatBody)
	assert.Equal(t, top.CallID, mid.ParentCallID)
	assert.Equal(t, 1, *mid.Depth)
	assert.Equal(t, "conv", mid.TraceID)

	leaf := call(t, e, middleware.WithParent(child, mid.CallID), srv.URL, chatBody)
	assert.Equal(t, mid.CallID, leaf.ParentCallID)
	assert.Equal(t, 2, *leaf.Depth)
	assert.Equal(t, 3, leaf.ConversationHistorySize)
}

func TestTraceFromTraceparent(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r := call(t, e, context.Background(), srv.URL, chatBody, "Traceparent", tp)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", r.TraceID)
	r = call(t, e, middleware.WithTrace(context.Background(), "explicit"), srv.URL, chatBody, "Traceparent", tp)
	assert.Equal(t, "explicit", r.TraceID, "WithTrace wins")
	assert.False(t, r.TraceInferred, "given, not inferred")
	r = call(t, e, context.Background(), srv.URL, chatBody, "Traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	assert.NotEqual(t, "00000000000000000000000000000000", r.TraceID, "the all-zero trace id is invalid")
	assert.True(t, r.TraceInferred, "so the recorder chose one")
	r = call(t, e, context.Background(), srv.URL, chatBody, "Traceparent", "garbage")
	assert.True(t, r.TraceInferred)
	assert.Len(t, r.TraceID, 32)
}

func TestSpeaker(t *testing.T) {
	e := newEnv(t)
	srv := serve(t, 200, "application/json", chatResponse)
	tests := []struct {
		ctx  context.Context
		body string
		want string
	}{
		{context.Background(), `{"messages":[{"role":"user","content":"hi"}]}`, "user"},
		{context.Background(), `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"calling"},{"role":"tool","content":"42"}]}`, "tool"},
		{context.Background(), `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"and then"}]}`, "agent"},
		{context.Background(), `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]}]}`, "agent"},
		{context.Background(), `{"input":[{"type":"function_call_output","output":"42"}]}`, "tool"},
		{context.Background(), `{"prompt":"no messages"}`, "user"},
		{middleware.WithSpeaker(context.Background(), "agent"), `{"messages":[{"role":"user","content":"hi"}]}`, "agent"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, call(t, e, tt.ctx, srv.URL, tt.body).Speaker, tt.body)
	}
}

func TestCallIDsAreUniqueAndSortByTime(t *testing.T) {
	const n = 10000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = middleware.NewCallID()
	}
	assert.True(t, slices.IsSorted(ids), "IDs made one after another sort in that order")
	sorted := slices.Clone(ids)
	sort.Strings(sorted)
	assert.Len(t, slices.Compact(sorted), n, "unique")
	for _, id := range ids[:10] {
		assert.Len(t, id, 26)
		assert.Regexp(t, `^[0-9A-HJKMNP-TV-Z]{26}$`, id)
	}
	// The first ten characters are the time: a later millisecond sorts later.
	before := middleware.NewCallID()
	time.Sleep(2 * time.Millisecond)
	after := middleware.NewCallID()
	assert.Less(t, before[:10], after[:10])
}

func TestClockOption(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.UTC)
	now := at
	e := newEnv(t, middleware.WithClock(func() time.Time { now = now.Add(250 * time.Millisecond); return now }))
	srv := serve(t, 200, "application/json", chatResponse)
	r := call(t, e, context.Background(), srv.URL, chatBody)
	assert.Equal(t, "2026-01-02T03:04:05.850000Z", r.Timestamp)
	assert.Equal(t, 250.0, r.DurationMS)
}

func TestCallerAcceptEncodingGetsCompressedBytes(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(chatResponse))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(zipped.Bytes())
	}))
	defer srv.Close()
	e := newEnv(t)
	r := call(t, e, context.Background(), srv.URL, chatBody, "Accept-Encoding", "gzip")
	assert.True(t, r.Outcome.OK)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", r.Model, "the capture was decompressed for parsing")

	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewBufferString(chatBody))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, zipped.Bytes(), got, "the caller still gets the compressed bytes")
}

func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) middleware.Middleware {
		return func(next http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				order = append(order, name)
				return next.RoundTrip(r)
			})
		}
	}
	srv := serve(t, 200, "text/plain", "ok")
	client := middleware.NewClient(nil, mw("outer"), nil, mw("inner"))
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, []string{"outer", "inner"}, order)

	base := &http.Client{Timeout: 7 * time.Second}
	wrapped := middleware.NewClient(base, mw("x"))
	assert.Equal(t, 7*time.Second, wrapped.Timeout)
	assert.Nil(t, base.Transport, "the base client is not changed")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package middleware_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

var fast = middleware.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

func overloaded() *scripted {
	return (&scripted{}).
		add(503, `{"error":{"message":"overloaded"}}`, nil).
		add(503, `{"error":{"message":"overloaded"}}`, nil).
		add(200, chatResponse, nil)
}

func TestRetryInsideRecorderIsOneRecord(t *testing.T) {
	for _, getBody := range []bool{true, false} {
		e := newEnv(t)
		s := overloaded()
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Chain(nil, e.rec.Middleware(), middleware.Retry(fast))}
		var body io.Reader = strings.NewReader(chatBody)
		if !getBody {
			body = io.NopCloser(body) // the recorder's replay makes it retriable
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, body)
		resp, err := client.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, chatResponse, string(b))
		require.Equal(t, int32(3), s.n.Load(), "getBody=%v", getBody)
		for range 3 {
			assert.Equal(t, chatBody, <-s.bodies, "every attempt sent the whole body")
		}
		r := one(t, e)
		assert.Equal(t, 3, r.Attempts)
		assert.True(t, r.Outcome.OK)
	}
}

func TestRetryOutsideRecorderIsOneRecord(t *testing.T) {
	e := newEnv(t)
	s := overloaded()
	srv := s.start(t)
	client := &http.Client{Transport: middleware.Chain(nil, middleware.Retry(fast), e.rec.Middleware())}
	resp, err := post(t, client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := one(t, e)
	assert.Equal(t, 3, r.Attempts)
	assert.True(t, r.Outcome.OK)
}

func TestRetryGivesUpAndRecordsTheLastFailure(t *testing.T) {
	e := newEnv(t)
	s := (&scripted{}).add(503, `{"error":{"message":"still overloaded"}}`, nil)
	srv := s.start(t)
	client := &http.Client{Transport: middleware.Chain(nil, e.rec.Middleware(), middleware.Retry(fast))}
	resp, err := post(t, client, context.Background(), srv.URL, chatBody)
	require.NoError(t, err)
	assert.Equal(t, 503, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, `{"error":{"message":"still overloaded"}}`, string(b), "the last response reaches the caller whole")
	assert.Empty(t, e.records(), "a retriable failure waits for a retry from further out")
	require.NoError(t, e.rec.Close())
	r := one(t, e)
	assert.Equal(t, 3, r.Attempts)
	assert.Equal(t, record.ErrorOverloaded, r.ErrorType)
	assert.Equal(t, "still overloaded", r.ErrorMessage)
}

func TestRetryOnlyRetriesRetriable(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		header map[string]string
	}{
		{"bad request", 400, `{"error":{"message":"bad"}}`, nil},
		{"quota is a 429 that waiting will not fix", 429, `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, nil},
		{"x-should-retry false", 503, `{}`, map[string]string{"X-Should-Retry": "false"}},
		{"retry-after too long", 429, `{}`, map[string]string{"Retry-After": "3600"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := (&scripted{}).add(tt.status, tt.body, tt.header).add(200, chatResponse, nil)
			srv := s.start(t)
			client := &http.Client{Transport: middleware.Chain(nil, middleware.Retry(fast))}
			resp, err := post(t, client, context.Background(), srv.URL, chatBody)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.body, string(b))
			assert.Equal(t, int32(1), s.n.Load())
		})
	}
}

func TestRetryHonoursRetryAfterAndDeadlines(t *testing.T) {
	t.Run("retry-after-ms", func(t *testing.T) {
		s := (&scripted{}).add(429, `{}`, map[string]string{"Retry-After-Ms": "300"}).add(200, chatResponse, nil)
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Retry(fast)(http.DefaultTransport)}
		start := time.Now()
		resp, err := post(t, client, context.Background(), srv.URL, chatBody)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode)
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "waited as the provider asked")
	})
	t.Run("retry-after seconds", func(t *testing.T) {
		s := (&scripted{}).add(503, `{}`, map[string]string{"Retry-After": "1"}).add(200, chatResponse, nil)
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Retry(fast)(http.DefaultTransport)}
		start := time.Now()
		resp, err := post(t, client, context.Background(), srv.URL, chatBody)
		require.NoError(t, err)
		resp.Body.Close()
		assert.GreaterOrEqual(t, time.Since(start), time.Second)
	})
	t.Run("deadline too close", func(t *testing.T) {
		s := (&scripted{}).add(429, `{"error":{"message":"later"}}`, map[string]string{"Retry-After": "5"}).add(200, chatResponse, nil)
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Retry(fast)(http.DefaultTransport)}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		resp, err := post(t, client, ctx, srv.URL, chatBody)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, 429, resp.StatusCode, "gave the 429 back rather than wait past the deadline")
		assert.Equal(t, `{"error":{"message":"later"}}`, string(b))
		assert.Equal(t, int32(1), s.n.Load())
	})
	t.Run("canceled while waiting", func(t *testing.T) {
		s := (&scripted{}).add(503, `{}`, nil)
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour})(http.DefaultTransport)}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := post(t, client, ctx, srv.URL, chatBody)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("body that cannot be replayed is not retried", func(t *testing.T) {
		s := (&scripted{}).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		client := &http.Client{Transport: middleware.Retry(fast)(http.DefaultTransport)}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader(chatBody)))
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 503, resp.StatusCode)
		assert.Equal(t, int32(1), s.n.Load())
	})
}

func TestDedupByCallIDAndIdempotencyKey(t *testing.T) {
	t.Run("call id in the context", func(t *testing.T) {
		e := newEnv(t)
		s := (&scripted{}).add(500, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		ctx := middleware.WithCallID(context.Background(), "my-call-1")
		for range 2 {
			// Different bodies: the call ID alone says they are one call.
			resp, err := post(t, e.client, ctx, srv.URL, chatBody+" ")
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		r := one(t, e)
		assert.Equal(t, "my-call-1", r.CallID)
		assert.Equal(t, 2, r.Attempts)
		assert.True(t, r.Outcome.OK)
	})
	t.Run("idempotency key", func(t *testing.T) {
		e := newEnv(t)
		s := (&scripted{}).add(429, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		for i := range 2 {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(chatBody))
			req.Header.Set("Idempotency-Key", "idem-42")
			req = req.WithContext(middleware.WithTrace(context.Background(), []string{"a", "b"}[i])) // different traces
			resp, err := e.client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
		r := one(t, e)
		assert.Equal(t, 2, r.Attempts)
	})
}

func TestDedupHeuristics(t *testing.T) {
	t.Run("the same request sent again after a retriable failure", func(t *testing.T) {
		// genai and go-retryablehttp retry by sending the *http.Request
		// they were given again.
		e := newEnv(t)
		s := (&scripted{}).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(chatBody))
		require.NoError(t, err)
		for range 2 {
			req.Body, _ = req.GetBody()
			resp, err := e.client.Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		r := one(t, e)
		assert.Equal(t, 2, r.Attempts)
		assert.True(t, r.Outcome.OK)
		assert.Zero(t, e.rec.Stats().RetriesGuessed)
	})
	t.Run("a new request with the same bytes, one after the other, is its retry, and counted", func(t *testing.T) {
		// A retry loop that builds its request anew under a bare context
		// (or under one its SDK derives for each request) looks like
		// this, and so does a sequence of identical calls: it is folded,
		// and the stats say on what evidence.
		e := newEnv(t)
		s := (&scripted{}).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		for range 2 {
			resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		r := one(t, e)
		assert.Equal(t, 2, r.Attempts)
		assert.True(t, r.Outcome.OK)
		assert.Equal(t, uint64(1), e.rec.Stats().FoldedBySequence)
		assert.Zero(t, e.rec.Stats().FoldedByContext)
	})
	t.Run("identical calls made at once are never folded", func(t *testing.T) {
		// Two identical calls in flight together both fail; the call
		// after them could retry either, and is a call of its own.
		e := newEnv(t)
		var arrived sync.WaitGroup
		arrived.Add(2)
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			if n.Add(1) <= 2 {
				arrived.Done()
				arrived.Wait()
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{}`)
				return
			}
			io.WriteString(w, chatResponse)
		}))
		defer srv.Close()
		call := func() {
			resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		var wg sync.WaitGroup
		wg.Go(call)
		wg.Go(call)
		wg.Wait()
		call()
		require.NoError(t, e.rec.Close())
		recs := e.records()
		require.Len(t, recs, 3)
		for _, r := range recs {
			assert.Equal(t, 1, r.Attempts)
		}
		assert.Zero(t, e.rec.Stats().FoldedBySequence)
	})
	t.Run("a failure a Retry inside gave up on is not retried by the next identical call", func(t *testing.T) {
		// The policy inside the recorder ended the call: an identical
		// call after it is a call of its own (a batch job's next call).
		rec := middleware.NewRecorder()
		defer rec.Close()
		hc := &http.Client{Transport: middleware.Chain(http.DefaultTransport, rec.Middleware(),
			middleware.Retry(middleware.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))}
		s := (&scripted{}).add(503, `{}`, nil).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		for range 2 {
			resp, err := post(t, hc, context.Background(), srv.URL, chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		require.NoError(t, rec.Close())
		recs := rec.History().Records() // the failure held till Close comes last
		require.Len(t, recs, 2)
		assert.Equal(t, 1, recs[0].Attempts)
		assert.True(t, recs[0].Outcome.OK)
		assert.Equal(t, 2, recs[1].Attempts)
		assert.False(t, recs[1].Outcome.OK)
		assert.Zero(t, rec.Stats().FoldedBySequence)
	})
	t.Run("under the same context it is folded, and counted", func(t *testing.T) {
		// A retry loop keeps its call's context: the second attempt is
		// taken for its retry, and the stats say on what evidence.
		e := newEnv(t)
		s := (&scripted{}).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range 2 {
			resp, err := post(t, e.client, ctx, srv.URL, chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		r := one(t, e)
		assert.Equal(t, 2, r.Attempts)
		assert.Equal(t, uint64(1), e.rec.Stats().FoldedByContext)
	})
	t.Run("two identical successes are two records", func(t *testing.T) {
		e := newEnv(t)
		srv := serve(t, 200, "application/json", chatResponse)
		for range 2 {
			resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
			require.NoError(t, err)
			resp.Body.Close()
		}
		assert.Len(t, e.records(), 2)
	})
	t.Run("a different request is a different call", func(t *testing.T) {
		e := newEnv(t)
		s := (&scripted{}).add(503, `{}`, nil).add(200, chatResponse, nil)
		srv := s.start(t)
		for _, b := range []string{chatBody, `{"other":true}`} {
			resp, err := post(t, e.client, context.Background(), srv.URL, b)
			require.NoError(t, err)
			resp.Body.Close()
		}
		require.NoError(t, e.rec.Close())
		assert.Len(t, e.records(), 2)
	})
	t.Run("a failure never retried is emitted when the window ends", func(t *testing.T) {
		e := newEnv(t, middleware.WithDedupWindow(50*time.Millisecond))
		srv := serve(t, 503, "application/json", `{}`)
		resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
		require.NoError(t, err)
		resp.Body.Close()
		require.NoError(t, e.rec.Flush())
		assert.Equal(t, 1, e.rec.Stats().Pending, "held, waiting for a retry")
		require.Eventually(t, func() bool { return len(e.records()) == 1 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, 1, one(t, e).Attempts)
		assert.Zero(t, e.rec.Stats().Pending)
	})
	t.Run("non-retriable failures are emitted at once", func(t *testing.T) {
		e := newEnv(t)
		srv := serve(t, 401, "application/json", `{}`)
		resp, err := post(t, e.client, context.Background(), srv.URL, chatBody)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Len(t, e.records(), 1)
	})
}

// When Retry cannot send a body again (it has no GetBody, and is longer
// than the recorder's capture, so the recorder cannot replay it either),
// the caller gets the server's own response, as http.Client returns a 307
// it cannot follow: not an error of ours, with the server's message lost.
func TestRetryThatCannotResendGivesTheResponseBack(t *testing.T) {
	const overloaded = `{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error"}}`
	s := (&scripted{}).add(503, overloaded, nil).add(200, chatResponse, nil)
	srv := s.start(t)
	rec := middleware.NewRecorder(middleware.WithMaxBody(1024, 0))
	defer rec.Close()
	hc := &http.Client{Transport: middleware.Chain(http.DefaultTransport, rec.Middleware(),
		middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))}
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("long ", 1000) + `"}]}`
	// A reader http.NewRequest cannot make a GetBody for.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", io.MultiReader(strings.NewReader(body)))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := hc.Do(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, overloaded, string(got))
	assert.Equal(t, int32(1), s.n.Load(), "sent once")

	require.NoError(t, rec.Close())
	r := rec.History().Records()
	require.Len(t, r, 1)
	assert.Equal(t, record.ErrorOverloaded, r[0].ErrorType)
	assert.Contains(t, r[0].ErrorMessage, "overloaded")
}

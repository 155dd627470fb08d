package middleware

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// RetryPolicy configures [Retry]. The zero value is the defaults.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt too; default 3.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry, doubled for each
	// later one; default 500ms. Each delay is jittered to between half and
	// all of its value.
	BaseDelay time.Duration
	// MaxDelay caps one backoff; default 8s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After the policy will wait; a
	// provider asking for longer gets its response back instead. Default 60s.
	MaxRetryAfter time.Duration
	// Classify decides what a failure is. The default reads the error, the
	// status and a JSON error body (see [providers.ClassifyError]), and
	// honours the x-should-retry header. body is at most 64 KiB of an
	// error response.
	Classify func(resp *http.Response, body []byte, err error) (errorType string)
}

// Retry returns a middleware that retries failed attempts whose error type
// is retriable ([record.Retriable]: rate limits, 5xx, overload, timeouts,
// connection failures) with exponential backoff and jitter. It honours
// Retry-After (seconds or a date) and retry-after-ms, never waits past the
// request's context deadline, and retries only when the request body can
// be sent again (no body, or a GetBody that gives it): otherwise the
// caller gets the failed attempt's response as it came, as [http.Client]
// returns a redirect it cannot follow.
//
// Put it inside the recorder, Chain(base, rec.Middleware(), Retry(p)), and
// a call retried three times is one record with attempts 3. Outside the
// recorder, each attempt passes through it, and carries a call ID that
// folds the attempts into one record just the same.
func Retry(p RetryPolicy) Middleware {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 3
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 8 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	if p.Classify == nil {
		p.Classify = defaultClassify
	}
	return func(next http.RoundTripper) http.RoundTripper {
		if next == nil {
			next = http.DefaultTransport
		}
		return &retrier{p: p, next: next}
	}
}

type retrier struct {
	p    RetryPolicy
	next http.RoundTripper
}

func defaultClassify(resp *http.Response, body []byte, err error) string {
	if err != nil {
		t := record.ErrorTypeForError(err)
		if t == record.ErrorUnknown {
			t = record.ErrorTransport
		}
		return t
	}
	if resp.StatusCode < 400 {
		return ""
	}
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		return record.ErrorServer
	case "false":
		return record.ErrorInvalidRequest
	}
	t, _ := providers.ClassifyError(resp.StatusCode, body)
	return t
}

func (t *retrier) RoundTrip(req *http.Request) (*http.Response, error) {
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	ctx := req.Context()
	counter := attemptCounter(ctx)
	if counter == nil && CallIDFrom(ctx) == "" {
		// Outside a recorder: give the attempts one call ID so that a
		// recorder further in folds them into one record.
		ctx = WithCallID(ctx, NewCallID())
	}
	var nextBody io.ReadCloser // the body of the next attempt, taken before the last response is let go
	for attempt := 1; ; attempt++ {
		if counter != nil {
			counter.Add(1)
		}
		areq := req.WithContext(ctx)
		if attempt > 1 {
			areq = req.Clone(ctx)
			if nextBody != nil {
				areq.Body, nextBody = nextBody, nil
			}
		}
		resp, err := t.next.RoundTrip(areq)
		if attempt >= t.p.MaxAttempts || !replayable || ctx.Err() != nil {
			return resp, err
		}
		var errBody []byte
		if err == nil && resp.StatusCode >= 400 {
			errBody, resp = peekBody(resp)
		}
		if !record.Retriable(t.p.Classify(resp, errBody, err)) {
			return resp, err
		}
		delay := t.backoff(attempt)
		if err == nil {
			if after, ok := retryAfter(resp.Header); ok {
				if after > t.p.MaxRetryAfter {
					return resp, nil // the provider wants longer than we wait
				}
				delay = max(delay, after)
			}
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
			return resp, err // the retry could not finish in time
		}
		if req.GetBody != nil {
			// The body again, before the response is let go: when it
			// cannot be had (a recorder's capture of a body without
			// GetBody that was longer than the capture), the caller
			// gets the response, as http.Client returns a redirect it
			// cannot follow.
			b, berr := req.GetBody()
			if berr != nil {
				return resp, err
			}
			nextBody = b
		}
		if resp != nil {
			// Drain a little so the connection can be reused, then let go.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		if err := sleep(ctx, delay); err != nil {
			if nextBody != nil {
				nextBody.Close()
			}
			return nil, err
		}
	}
}

// backoff is the delay before retry number attempt (1-based): BaseDelay
// doubled attempt-1 times, capped, then jittered to [d/2, d].
func (t *retrier) backoff(attempt int) time.Duration {
	d := t.p.BaseDelay << min(attempt-1, 30)
	if d <= 0 || d > t.p.MaxDelay {
		d = t.p.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// peekBody reads up to 64 KiB of an error body and gives back a response
// whose body still yields every byte.
func peekBody(resp *http.Response) ([]byte, *http.Response) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil, resp
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	rest := io.Reader(resp.Body)
	if err != nil {
		rest = io.MultiReader(errReader{err})
	}
	c := *resp
	c.Body = readCloser{io.MultiReader(bytes.NewReader(b), rest), resp.Body}
	return b, &c
}

// retryAfter reads retry-after-ms, then Retry-After in seconds or as an
// HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

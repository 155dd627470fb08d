package replay_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/replay"
)

func TestFaultCutsAStreamAndTheRetryGetsItWhole(t *testing.T) {
	path, want := recordStream(t, "openai/openai_chat_stream.sse")
	c := open(t, path, replay.WithFault(replay.Fault{Interaction: 0, Cut: true, CutAfter: 3}))
	resp := post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	got, err := reads(resp.Body)
	assert.Equal(t, want[:3], got)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	resp = post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	got, err = reads(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the cut did not use the recorded answer up")
	assert.Empty(t, c.Unused())
}

func TestFaultCutsABodyBeforeItsFirstByte(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{body: []byte(`{"a":1}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	readAll(t, post(t, rec.Client(), srv.URL()+"/a", `{}`))
	require.NoError(t, rec.Close())
	c := open(t, path, replay.WithFault(replay.Fault{Cut: true}))
	resp := post(t, c.Client(), "http://x/a", `{}`)
	_, err := io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestFaultAnswersWithAStatus(t *testing.T) {
	path, _ := recordStream(t, "openai/openai_chat_stream.sse")
	body := string(testdata(t, "openai/openai_error_429.json"))
	c := open(t, path, replay.WithFault(replay.Fault{Interaction: 0, Status: 429, Body: body, Header: http.Header{"Retry-After": {"1"}}}))
	resp := post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "429 Too Many Requests", resp.Status)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, int64(len(body)), resp.ContentLength)
	assert.Equal(t, body, readAll(t, resp))

	resp = post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	assert.Equal(t, 200, resp.StatusCode, "then the recorded answer")
	readAll(t, resp)
}

func TestFaultByRequestNeedsNoRecording(t *testing.T) {
	path, _ := recordStream(t, "openai/openai_chat_stream.sse")
	down := errors.New("connection reset by peer")
	c := open(t, path, replay.WithFault(replay.Fault{
		Request: func(r *replay.Request) bool { return r.URL.Path == "/v1/embeddings" },
		Err:     down,
	}))
	req, _ := http.NewRequest(http.MethodPost, "http://x/v1/embeddings", strings.NewReader(`{}`))
	_, err := c.RoundTrip(req)
	assert.Same(t, down, err)
	req, _ = http.NewRequest(http.MethodPost, "http://x/v1/embeddings", strings.NewReader(`{}`))
	_, err = c.RoundTrip(req)
	assert.ErrorIs(t, err, replay.ErrMiss, "a fault applies once")
}

func TestFaultDelays(t *testing.T) {
	path, want := recordStream(t, "openai/openai_chat_stream.sse")
	var s sleeps
	c := open(t, path, replay.WithSleep(s.sleep), replay.WithFault(replay.Fault{Delay: 2 * time.Second, FrameDelay: 50 * time.Millisecond}))
	resp := post(t, c.Client(), "http://x/v1/chat/completions", `{"model":"gpt-4o","stream":true}`)
	got, err := reads(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	wantSleeps := []time.Duration{2 * time.Second}
	for range len(want) - 1 {
		wantSleeps = append(wantSleeps, 50*time.Millisecond)
	}
	assert.Equal(t, wantSleeps, s.got())

	req, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","stream":true}`))
	_, err = c.RoundTrip(req)
	assert.ErrorIs(t, err, replay.ErrMiss, "a delayed answer is used up")
}

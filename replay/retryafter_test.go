package replay_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/replay"
)

// seen keeps the wait headers of every response that passes through it.
type seen struct {
	mu      sync.Mutex
	headers []http.Header
}

func (s *seen) middleware() middleware.Middleware {
	return func(next http.RoundTripper) http.RoundTripper {
		return rtFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if resp != nil {
				s.mu.Lock()
				s.headers = append(s.headers, http.Header{
					"Retry-After":    resp.Header.Values("Retry-After"),
					"Retry-After-Ms": resp.Header.Values("Retry-After-Ms"),
				})
				s.mu.Unlock()
			}
			return resp, err
		})
	}
}

// waitLess makes the recording run quick: the SDK sees a short wait, the
// cassette keeps the provider's (the middleware is outside it).
func waitLess(next http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if resp != nil && resp.Header.Get("Retry-After") != "" {
			resp.Header.Set("Retry-After", "0")
			if resp.Header.Get("Retry-After-Ms") != "" {
				resp.Header.Set("Retry-After-Ms", "1")
			}
		}
		return resp, err
	})
}

// sdkCall is one SDK's chat call, and the option that stops its retries.
type sdkCall struct {
	name      string
	errFile   string
	okFile    string
	header    map[string]string // the provider's 429 headers
	call      func(ctx context.Context, base string, hc *http.Client) error
	noRetries func(ctx context.Context, base string, hc *http.Client) error
}

var waitingSDKs = []sdkCall{
	{
		name: "openai-go", errFile: "openai/openai_error_429.json", okFile: "openai/openai_chat_response.json",
		header: map[string]string{"Retry-After": "20", "Retry-After-Ms": "20000"},
		call: func(ctx context.Context, base string, hc *http.Client) error {
			_, err := openAIGoClient(base, hc).Chat.Completions.New(ctx, openAIGoParams)
			return err
		},
		noRetries: func(ctx context.Context, base string, hc *http.Client) error {
			_, err := openAIGoClient(base, hc).Chat.Completions.New(ctx, openAIGoParams, option.WithMaxRetries(0))
			return err
		},
	},
	{
		name: "Anthropic", errFile: "anthropic_error_429.json", okFile: "anthropic_message.json",
		header: map[string]string{"Retry-After": "20"}, // Anthropic sends seconds only
		call: func(ctx context.Context, base string, hc *http.Client) error {
			_, err := anthropicClient(base, hc).Messages.New(ctx, anthropicParams)
			return err
		},
		noRetries: func(ctx context.Context, base string, hc *http.Client) error {
			_, err := anthropicClient(base, hc).Messages.New(ctx, anthropicParams, anthropicoption.WithMaxRetries(0))
			return err
		},
	},
}

// A recorded 429 asked for 20 s. In a test (ForTest) the replayed 429
// asks for 0, so the SDK's retry path runs at once; New replays it as
// recorded.
func TestReplayedRetriesDoNotSleepInTests(t *testing.T) {
	for _, sdk := range waitingSDKs {
		t.Run(sdk.name, func(t *testing.T) {
			path := cassettePath(t)
			srv := newFake(t, reply{status: 429, body: testdata(t, sdk.errFile), header: sdk.header}, reply{body: testdata(t, sdk.okFile)})
			live := newRun(t, path, replay.ModeRecord, waitLess)
			require.NoError(t, sdk.call(context.Background(), srv.URL(), live.client))
			live.records(t)
			srv.srv.Close()
			require.Len(t, lines(t, path), 2)
			assert.Contains(t, lines(t, path)[0], `"Retry-After":"20"`, "the cassette keeps what the provider sent")

			rec := middleware.NewRecorder()
			var waits seen
			cas := replay.ForTest(t, path)
			client := middleware.NewClient(&http.Client{Transport: noNetwork{t}}, rec.Middleware(), waits.middleware(), cas.Middleware())
			require.NoError(t, sdk.call(context.Background(), "http://provider.invalid", client))
			require.NoError(t, rec.Close())
			require.Len(t, waits.headers, 2)
			assert.Equal(t, "0", waits.headers[0].Get("Retry-After"), "the replayed 429 asks for no wait")
			if _, ok := sdk.header["Retry-After-Ms"]; ok {
				assert.Equal(t, "0", waits.headers[0].Get("Retry-After-Ms"))
			}
			records := rec.History().Records()
			require.Len(t, records, 1)
			assert.Equal(t, 2, records[0].Attempts, "the SDK retried, as it did live")
			assert.Less(t, records[0].DurationMS, 10_000.0, "well under the recorded 20 s wait")

			// New keeps the recorded wait (the SDK is told not to retry,
			// so the test does not wait for it).
			var kept seen
			asRecorded := open(t, path)
			client = middleware.NewClient(&http.Client{Transport: noNetwork{t}}, kept.middleware(), asRecorded.Middleware())
			require.Error(t, sdk.noRetries(context.Background(), "http://provider.invalid", client))
			require.Len(t, kept.headers, 1)
			assert.Equal(t, "20", kept.headers[0].Get("Retry-After"))
			require.NoError(t, asRecorded.Close())
		})
	}
}

// A wait the client would not make was not retried when recorded: the
// replayed 429 keeps it, so the client gives up again, as it did live,
// instead of retrying into a miss.
func TestAWaitTheClientGaveUpOnIsKept(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{status: 429, body: testdata(t, "openai/openai_error_429.json"), header: map[string]string{"Retry-After-Ms": "600000"}})
	live := newRun(t, path, replay.ModeRecord)
	err := waitingSDKs[0].call(context.Background(), srv.URL(), live.client)
	require.ErrorContains(t, err, "429", "openai-go does not wait 10 minutes")
	live.records(t)
	srv.srv.Close()
	require.Len(t, lines(t, path), 1, "and did not retry")

	var waits seen
	cas := replay.ForTest(t, path)
	client := middleware.NewClient(&http.Client{Transport: noNetwork{t}}, waits.middleware(), cas.Middleware())
	err = waitingSDKs[0].call(context.Background(), "http://provider.invalid", client)
	require.Error(t, err)
	var miss *replay.MissError
	assert.NotErrorAs(t, err, &miss, "the same 429 as live, not a miss")
	assert.True(t, strings.Contains(err.Error(), "429"), err.Error())
	require.Len(t, waits.headers, 1)
	assert.Equal(t, "600000", waits.headers[0].Get("Retry-After-Ms"))
}

// WithRetryAfter caps the wait at any value; Retry-After is in whole
// seconds, and a date too far ahead is a wait too.
func TestWithRetryAfterCaps(t *testing.T) {
	path := cassettePath(t)
	future := "Wed, 21 Oct 2099 07:28:00 GMT"
	srv := newFake(t,
		reply{status: 503, body: []byte(`{}`), header: map[string]string{"Retry-After": future, "Retry-After-Ms": "900"}},
		reply{status: 503, body: []byte(`{}`), header: map[string]string{"Retry-After": "1"}},
		reply{body: []byte(`{}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	for range 3 {
		readAll(t, post(t, rec.Client(), srv.URL()+"/v1/chat/completions", `{}`))
	}
	require.NoError(t, rec.Close())

	c := open(t, path, replay.WithRetryAfter(1500*time.Millisecond))
	first := post(t, c.Client(), "http://x/v1/chat/completions", `{}`)
	readAll(t, first)
	assert.Equal(t, "1", first.Header.Get("Retry-After"), "the date, capped at whole seconds")
	assert.Equal(t, "900", first.Header.Get("Retry-After-Ms"), "shorter than the cap: as recorded")
	second := post(t, c.Client(), "http://x/v1/chat/completions", `{}`)
	readAll(t, second)
	assert.Equal(t, "1", second.Header.Get("Retry-After"))
	readAll(t, post(t, c.Client(), "http://x/v1/chat/completions", `{}`))
	require.NoError(t, c.Close())
}

// ForTest's default gives way to WithRetryAfter and WithRecordedSpeed.
func TestForTestShortensWaitsUnlessAsked(t *testing.T) {
	path := cassettePath(t)
	srv := newFake(t, reply{status: 429, body: []byte(`{}`), header: map[string]string{"Retry-After": "20"}}, reply{body: []byte(`{}`)})
	rec := open(t, path, replay.WithMode(replay.ModeRecord))
	for range 2 {
		readAll(t, post(t, rec.Client(), srv.URL()+"/v1/chat/completions", `{}`))
	}
	require.NoError(t, rec.Close())
	for _, tt := range []struct {
		name string
		opts []replay.Option
		want string
	}{
		{"by default", nil, "0"},
		{"WithRetryAfter", []replay.Option{replay.WithRetryAfter(3 * time.Second)}, "3"},
		{"WithRetryAfter negative", []replay.Option{replay.WithRetryAfter(-1)}, "20"},
		{"WithRecordedSpeed", []replay.Option{replay.WithRecordedSpeed()}, "20"},
		{"WithRecordedSpeed and WithRetryAfter", []replay.Option{replay.WithRecordedSpeed(), replay.WithRetryAfter(0)}, "0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := replay.ForTest(t, path, tt.opts...)
			resp := post(t, c.Client(), "http://provider.invalid/v1/chat/completions", `{}`)
			readAll(t, resp)
			assert.Equal(t, tt.want, resp.Header.Get("Retry-After"))
			readAll(t, post(t, c.Client(), "http://provider.invalid/v1/chat/completions", `{}`))
		})
	}
}

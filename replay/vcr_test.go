package replay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/replay"
)

// The two go-vcr v4 options the package lacked: WithPassthrough and
// WithReplayableInteractions.

// An agent test replays the provider and calls its own tool service for
// real, through the same client: the tool's requests pass through, in
// replay as when recording, and never reach the cassette.
func TestPassthroughSendsChosenRequestsToTheNetwork(t *testing.T) {
	var toolHits atomic.Int32
	tools := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		toolHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"city":"Paris","celsius":21}`))
	}))
	defer tools.Close()
	toolHost := mustURL(t, tools.URL).Host
	isTool := func(r *http.Request) bool { return r.URL.Host == toolHost }

	// agent asks the provider through openai-go, then the tool service,
	// through one client.
	agent := func(t *testing.T, base string, cas *replay.Cassette) (string, error) {
		rec := middleware.NewRecorder()
		defer rec.Close()
		hc := middleware.NewClient(nil, rec.Middleware(), cas.Middleware()) // the network behind the cassette
		resp, err := openAIGoClient(base, hc).Chat.Completions.New(context.Background(), openAIGoParams, option.WithMaxRetries(0))
		if err != nil {
			return "", err
		}
		tool, err := hc.Get(tools.URL + "/weather?city=Paris")
		if err != nil {
			return "", err
		}
		return resp.Choices[0].Message.Content + " " + readAll(t, tool), nil
	}

	path := cassettePath(t)
	provider := newFake(t, reply{body: testdata(t, "openai/openai_chat_response.json")})
	live := open(t, path, replay.WithMode(replay.ModeRecord), replay.WithPassthrough(isTool))
	want, err := agent(t, provider.URL(), live)
	require.NoError(t, err)
	require.NoError(t, live.Close())
	provider.srv.Close()
	assert.Len(t, lines(t, path), 1, "the tool's request is not recorded")
	assert.EqualValues(t, 1, toolHits.Load())

	played := open(t, path, replay.WithPassthrough(func(*http.Request) bool { return false }), replay.WithPassthrough(isTool))
	got, err := agent(t, provider.URL(), played) // the provider is closed: only the cassette answers it
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.EqualValues(t, 2, toolHits.Load(), "the tool was called for real in replay")
	assert.Empty(t, played.Unused())
	require.NoError(t, played.Close())

	_, err = agent(t, provider.URL(), open(t, path))
	var miss *replay.MissError
	require.ErrorAs(t, err, &miss, "without it the tool's request is a miss")
	assert.Equal(t, "/weather", miss.Request.URL.Path)

	panicky := open(t, path, replay.WithPassthrough(func(*http.Request) bool { panic("boom") }))
	_, err = agent(t, provider.URL(), panicky)
	assert.ErrorContains(t, err, "panic in a WithPassthrough function: boom")
}

// WithReplayableInteractions gives recorded answers again, in turn, after
// they were all used: a call made more often than when it was recorded is
// answered, and a recorded 429-then-200 stays a retry that succeeds.
func TestReplayableInteractions(t *testing.T) {
	t.Run("one answer, many calls", func(t *testing.T) {
		path := cassettePath(t)
		srv := newFake(t, reply{body: testdata(t, "openai/openai_chat_response.json")})
		live := newRun(t, path, replay.ModeRecord)
		_, err := goOpenAIClient(srv.URL(), live.client).CreateChatCompletion(context.Background(), goOpenAIRequest)
		require.NoError(t, err)
		live.records(t)
		srv.srv.Close()

		once := newRun(t, path, replay.ModeReplay)
		_, err = goOpenAIClient("http://provider.invalid", once.client).CreateChatCompletion(context.Background(), goOpenAIRequest)
		require.NoError(t, err)
		_, err = goOpenAIClient("http://provider.invalid", once.client).CreateChatCompletion(context.Background(), goOpenAIRequest)
		var miss *replay.MissError
		require.ErrorAs(t, err, &miss, "by default an answer is used once")
		assert.True(t, miss.UsedUp)

		cas := open(t, path, replay.WithReplayableInteractions())
		client := middleware.NewClient(&http.Client{Transport: noNetwork{t}}, cas.Middleware())
		for range 3 {
			resp, err := goOpenAIClient("http://provider.invalid", client).CreateChatCompletion(context.Background(), goOpenAIRequest)
			require.NoError(t, err)
			assert.Contains(t, resp.Choices[0].Message.Content, "How can I assist you today?")
		}
		require.NoError(t, cas.Close())
	})

	t.Run("a recorded retry is given in turn", func(t *testing.T) {
		path := cassettePath(t)
		srv := newFake(t, rateLimited(t, "openai/openai_error_429.json", reply{body: testdata(t, "openai/openai_chat_response.json")})...)
		live := newRun(t, path, replay.ModeRecord)
		_, err := openAIGoClient(srv.URL(), live.client).Chat.Completions.New(context.Background(), openAIGoParams)
		require.NoError(t, err)
		live.records(t)
		srv.srv.Close()
		require.Len(t, lines(t, path), 2, "a 429, then a 200")

		attempts := func(opt replay.Option) []int {
			rec := middleware.NewRecorder()
			cas := open(t, path, opt)
			client := middleware.NewClient(&http.Client{Transport: noNetwork{t}}, rec.Middleware(), cas.Middleware())
			for range 3 {
				_, err := openAIGoClient("http://provider.invalid", client).Chat.Completions.New(context.Background(), openAIGoParams)
				require.NoError(t, err)
			}
			require.NoError(t, cas.Close())
			require.NoError(t, rec.Close())
			var out []int
			for _, r := range rec.History().Records() {
				out = append(out, r.Attempts)
			}
			return out
		}
		assert.Equal(t, []int{2, 2, 2}, attempts(replay.WithReplayableInteractions()), "each call rate-limited, then answered, as live")
		assert.Equal(t, []int{2, 1, 1}, attempts(replay.WithRepeatLast()), "WithRepeatLast repeats the 200 alone")
	})
}

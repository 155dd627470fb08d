package middleware_test

import (
	"context"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmhistory/llmhistory/middleware"
)

// An application that retries by hand through genai, under one context
// it keeps, makes one call: one record with 2 attempts, as the same retry
// through net/http is (TestDedupHeuristics). genai builds a new request
// for each call, under the caller's context or, with a timeout set, under
// one it derives for each request: nothing but their order tells the
// attempts apart from two identical calls.
func TestGenaiRetriedByHandIsOneRecord(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		timeout bool // genai's HTTPOptions.Timeout: a context of its own per request
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, false},
		{"a context of the application's", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, false},
		{"a context of the application's, genai's timeout", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := (&scripted{}).
				add(503, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, nil).
				add(200, geminiResponse, nil)
			srv := s.start(t)
			opts := genai.HTTPOptions{BaseURL: srv.URL}
			if tc.timeout {
				d := time.Minute
				opts.Timeout = &d
			}
			client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
				APIKey: "AIzaSyTEST-genai-0123456789abcdefghijklmnop", Backend: genai.BackendGeminiAPI,
				HTTPClient: e.client, HTTPOptions: opts,
			})
			require.NoError(t, err)
			ctx, cancel := tc.ctx()
			defer cancel()
			for range 2 {
				if _, err = client.Models.GenerateContent(ctx, "gemini-2.0-flash", genai.Text("Hello"), nil); err == nil {
					break
				}
			}
			require.NoError(t, err)
			require.Equal(t, int32(2), s.n.Load())
			r := one(t, e)
			assert.Equal(t, 2, r.Attempts)
			assert.True(t, r.Outcome.OK)
			assert.True(t, r.TraceInferred)
		})
	}
}

// A first turn that failed and was sent again belongs to the same
// conversation as its retry, when the two are records of their own (a
// failure that is not retriable, or one emitted before its retry came),
// and the conversation goes on there.
func TestFailedFirstTurnSentAgainIsOneConversation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		options []middleware.Option
	}{
		{"not retriable", 400, `{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error"}}`, nil},
		{"retriable, emitted at once", 500, `{"error":{"message":"oops","type":"server_error"}}`, []middleware.Option{middleware.WithDedupWindow(0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.options...)
			s := (&scripted{}).add(tc.status, tc.body, nil).
				add(200, chatResponse, nil)
			srv := s.start(t)
			client := goOpenAIClient(srv.URL, e.client)
			msgs := []goopenai.ChatCompletionMessage{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "What is the weather like?"}}
			_, err := client.CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
			require.Error(t, err)
			resp, err := client.CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
			require.NoError(t, err)
			msgs = append(msgs, resp.Choices[0].Message, goopenai.ChatCompletionMessage{Role: "user", Content: "And tomorrow?"})
			_, err = client.CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs})
			require.NoError(t, err)
			// Another conversation that begins with the same words, once the
			// failed one was sent again, is a conversation of its own.
			_, err = client.CreateChatCompletion(context.Background(), goopenai.ChatCompletionRequest{Model: "gpt-4o-mini", Messages: msgs[:2]})
			require.NoError(t, err)

			require.NoError(t, e.rec.Close())
			recs := e.records()
			require.Len(t, recs, 4)
			assert.False(t, recs[0].Outcome.OK)
			assert.NotEqual(t, recs[0].TraceID, recs[3].TraceID, "a new conversation")
			for _, r := range recs[:3] {
				assert.Equal(t, 1, r.Attempts)
				assert.True(t, r.TraceInferred)
				assert.Equal(t, recs[0].TraceID, r.TraceID, "one conversation")
			}

		})
	}
}

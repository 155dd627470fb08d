package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
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

package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
)

// A model that answers with code reading the history, in text and in a
// tool call, streamed and not.
const codeAnswer = "Here you go:\\n\\n```ruby\\nrecent = context[:conversation_history].last(3)\\nrecent.map { |r| r[:method_name] }\\n```"

func TestRecordsCarryHistoryTelemetry(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		access      bool
		patterns    []string
	}{
		{"text", "application/json",
			`{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"` + codeAnswer + `"},"finish_reason":"stop"}]}`,
			true, []string{"map", "slice"}},
		{"tool call", "application/json",
			`{"object":"chat.completion","choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"run_python","arguments":"{\"code\":\"h = context[\\\"conversation_history\\\"]\\nprint(len([r for r in h if r[\\\"ok\\\"]]))\"}"}}]},"finish_reason":"tool_calls"}]}`,
			true, []string{"filter", "count"}},
		{"stream", "text/event-stream",
			"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"```js\\nconst n = context.conversation_\"}}]}\n\n" +
				"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"history.filter(r => r.ok).length;\\n```\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			true, []string{"filter", "count"}},
		{"no access", "application/json",
			`{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":"The conversation_history holds your records."},"finish_reason":"stop"}]}`,
			false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			e := newEnv(t, middleware.WithProgramSource())
			resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			r := one(t, e)
			assert.Equal(t, tt.access, r.HistoryAccessDetected)
			assert.ElementsMatch(t, tt.patterns, r.HistoryQueryPatterns)
			if tt.access {
				assert.Contains(t, r.ProgramSource, "conversation_")
			} else {
				assert.Empty(t, r.ProgramSource)
			}
		})
	}
}

func TestProgramSourceIsOptIn(t *testing.T) {
	srv := serve(t, 200, "application/json", `{"object":"chat.completion","choices":[{"message":{"content":"`+codeAnswer+`"},"finish_reason":"stop"}]}`)
	e := newEnv(t, middleware.WithoutOutput())
	resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := one(t, e)
	assert.True(t, r.HistoryAccessDetected, "the scan runs whether or not output is stored")
	assert.Equal(t, []string{"map", "slice"}, r.HistoryQueryPatterns)
	assert.Empty(t, r.ProgramSource)
	assert.NotContains(t, e.sinkText(), "recent = context", "no output, no program source in sinks")
}

func TestHistoryNames(t *testing.T) {
	srv := serve(t, 200, "application/json", `{"object":"chat.completion","choices":[{"message":{"content":"`+"```ruby\\nmemory.select { |m| m }\\n```"+`"},"finish_reason":"stop"}]}`)
	e := newEnv(t, middleware.WithHistoryNames("memory"))
	resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := one(t, e)
	assert.True(t, r.HistoryAccessDetected)
	assert.Equal(t, []string{"filter"}, r.HistoryQueryPatterns)
}

// The worker lends providers one pool buffer after another for the text
// they assemble: what a record keeps of it (output, program source) must
// be its own, not the buffer the next call writes into.
func TestKeptTextOutlivesTheNextCall(t *testing.T) {
	answer := func(i int) string {
		return fmt.Sprintf("answer %d:\n```ruby\nrecent = context[:conversation_history].last(%d)\nrecent.map { |r| r[:method_name] }\n```", i, i)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body, _ := json.Marshal(map[string]any{"object": "chat.completion", "choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": answer(int(n.Add(1)))}, "finish_reason": "stop"}}})
		w.Write(body)
	}))
	defer srv.Close()
	e := newEnv(t, middleware.WithProgramSource())
	const calls = 40
	for range calls {
		resp, err := post(t, e.client, context.Background(), srv.URL+"/v1/chat/completions", chatBody)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rs := e.records()
	require.Len(t, rs, calls)
	for i, r := range rs {
		assert.Equal(t, answer(i+1), r.Output.Text(), "record %d", i)
		assert.Equal(t, answer(i+1), r.ProgramSource, "record %d", i)
	}
}

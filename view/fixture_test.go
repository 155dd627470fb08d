package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// xssQuestion and xssAnswer are a user message and a model answer that
// would run script if a page built HTML from them by hand.
const xssQuestion = `Show me the payload <svg onload="alert('user')"></svg>, please.`

const xssAnswer = `Here you go: <img src=x onerror="alert('img')"><script>alert('script')</script> and "quotes" & <b>tags</b>.`

// A recorded history: calls made by a plain HTTP client through the real
// recorder (with retries inside it) to fake OpenAI and Anthropic servers
// that answer as the real APIs do. It holds:
//
//   - "trip" (user ana, tags travel, web): three turns, the second retried
//     after a 429, then a tool loop (a tool call, its result, the answer);
//   - "xss" (user bo, tag support): xssQuestion, answered with xssAnswer;
//   - "broken" (user bo): a call to a model that does not exist (404);
//   - "think" (user cy, tag research): Anthropic, an image the recorder
//     elides, an answer with thinking, and a nested OpenAI call under it;
//   - a streamed call, with no trace given: its conversation inferred.
func recordHistory(t testing.TB, path string) { recordHistorySlowly(t, path, 0) }

// recordHistorySlowly is recordHistory with servers that take about
// latency to answer, as real ones do (for pictures).
func recordHistorySlowly(t testing.TB, path string, latency time.Duration) {
	t.Helper()
	srv := httptest.NewServer(fakeProviders(latency))
	defer srv.Close()

	file, err := record.OpenJSONL(path)
	require.NoError(t, err)
	rec := middleware.NewRecorder(middleware.WithSink(file), middleware.WithOutput())
	client := middleware.NewClient(nil, rec.Middleware(), middleware.Retry(middleware.RetryPolicy{BaseDelay: time.Millisecond}))

	bg := context.Background()
	trip := middleware.WithTags(middleware.WithUser(middleware.WithTrace(bg, "trip"), "ana"), "travel", "web")
	msgs := []any{
		map[string]any{"role": "system", "content": "You are a concise travel assistant."},
		map[string]any{"role": "user", "content": "I'm going to Lisbon in May. What should I pack?"},
	}
	msgs = chat(t, client, trip, srv.URL, "gpt-4o-mini", msgs, false)
	msgs = append(msgs, map[string]any{"role": "user", "content": "Is it busy then?"})
	msgs = chat(t, client, trip, srv.URL, "gpt-4o-mini", msgs, false)
	msgs = append(msgs, map[string]any{"role": "user", "content": "Where is my order 1042?"})
	msgs = chat(t, client, trip, srv.URL, "gpt-4o-mini", msgs, true) // a tool call
	msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": "call_order_1", "content": `{"order":1042,"status":"shipped","eta":"Thursday"}`})
	chat(t, client, trip, srv.URL, "gpt-4o-mini", msgs, true)

	xss := middleware.WithTags(middleware.WithUser(middleware.WithTrace(bg, "xss"), "bo"), "support")
	chat(t, client, xss, srv.URL, "gpt-4o-mini", []any{map[string]any{"role": "user", "content": xssQuestion}}, false)

	broken := middleware.WithUser(middleware.WithTrace(bg, "broken"), "bo")
	chat(t, client, broken, srv.URL, "gpt-missing", []any{map[string]any{"role": "user", "content": "Hello?"}}, false)

	think := middleware.WithTags(middleware.WithUser(middleware.WithTrace(bg, "think"), "cy"), "research")
	image := strings.Repeat("iVBORw0KGgo", 200)
	body := map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": 512, "system": "You describe pictures.",
		"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": image}},
			map[string]any{"type": "text", "text": "What is in this picture?"},
		}}},
	}
	post(t, client, think, srv.URL+"/v1/messages", body)
	nested := middleware.WithParent(think, lastCallID(t, rec, "think"))
	chat(t, client, nested, srv.URL, "gpt-4o-mini", []any{map[string]any{"role": "user", "content": "Summarise: a lighthouse at dusk."}}, false)

	// No trace given: the recorder starts a conversation and says so.
	stream(t, client, bg, srv.URL, []any{map[string]any{"role": "user", "content": "Tell me a short story."}})

	require.NoError(t, rec.Close())
	require.NoError(t, file.Close())
}

// lastCallID is the call_id of the latest record of trace in the
// recorder's history.
func lastCallID(t testing.TB, rec *middleware.Recorder, trace string) string {
	t.Helper()
	require.NoError(t, rec.Flush())
	rs := rec.History().Trace(trace)
	require.NotEmpty(t, rs)
	return rs[len(rs)-1].CallID
}

// chat sends one chat completion with msgs, and returns msgs with the
// answer appended as the server sent it.
func chat(t testing.TB, c *http.Client, ctx context.Context, base, model string, msgs []any, tools bool) []any {
	t.Helper()
	body := map[string]any{"model": model, "messages": msgs}
	if tools {
		body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup_order", "parameters": map[string]any{"type": "object"}}}}
	}
	resp := post(t, c, ctx, base+"/v1/chat/completions", body)
	choices, _ := resp["choices"].([]any)
	if len(choices) == 0 {
		return msgs
	}
	msg := choices[0].(map[string]any)["message"]
	return append(append([]any(nil), msgs...), msg)
}

func post(t testing.TB, c *http.Client, ctx context.Context, url string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test-0123456789abcdefghijklmnopqrstuv")
	req.Header.Set("x-api-key", "sk-ant-test-0123456789abcdefghijklmnop")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	_ = json.Unmarshal(data, &out)
	return out
}

func stream(t testing.TB, c *http.Client, ctx context.Context, base string, msgs []any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs, "stream": true, "stream_options": map[string]any{"include_usage": true}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// fakeProviders answers chat completions and Anthropic messages, each
// after about latency (from half to one and a half times it).
func fakeProviders(latency time.Duration) http.Handler {
	var mu sync.Mutex
	throttled := false
	calls := 0
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string           `json:"model"`
			Stream   bool             `json:"stream"`
			Messages []map[string]any `json:"messages"`
			Tools    []any            `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls++
		n := calls
		wait := latency / 2 * time.Duration(1+n%3)
		throttle := false
		last := req.Messages[len(req.Messages)-1]
		content, _ := last["content"].(string)
		if strings.Contains(content, "busy") && !throttled {
			throttled, throttle = true, true
		}
		mu.Unlock()
		time.Sleep(wait)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case req.Model == "gpt-missing":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"message":"The model `+"`gpt-missing`"+` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`)
			return
		case throttle:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached for gpt-4o-mini.","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		case req.Stream:
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range []string{"Once upon a time, ", "a lighthouse keeper ", "counted ships."} {
				time.Sleep(wait)
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s%d\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", n, piece)
				w.(http.Flusher).Flush()
			}
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s%d\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", n)
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-s%d\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":9,\"total_tokens\":21}}\n\n", n)
			fmt.Fprint(w, "data: [DONE]\n\n")
			return
		}
		var message any
		finish := "stop"
		switch {
		case last["role"] == "tool":
			message = map[string]any{"role": "assistant", "content": "Order 1042 has shipped; it arrives on Thursday."}
		case len(req.Tools) > 0:
			finish = "tool_calls"
			message = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_order_1", "type": "function", "function": map[string]any{"name": "lookup_order", "arguments": `{"order_id":"1042"}`},
			}}}
		case strings.Contains(content, "payload"):
			message = map[string]any{"role": "assistant", "content": xssAnswer}
		case strings.Contains(content, "pack"):
			message = map[string]any{"role": "assistant", "content": "Light layers, a rain jacket and shoes that grip on cobbles."}
		case strings.Contains(content, "busy"):
			message = map[string]any{"role": "assistant", "content": "May is busy but not peak: book the trams early."}
		default:
			message = map[string]any{"role": "assistant", "content": "A lighthouse stands on a cliff as the sun sets."}
		}
		out, _ := json.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1767225600, "model": "gpt-4o-mini-2024-07-18",
			"choices": []any{map[string]any{"index": 0, "message": message, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 40 * len(req.Messages), "completion_tokens": 25, "total_tokens": 40*len(req.Messages) + 25},
		})
		w.Write(out)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(3 * latency)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"msg_01Think","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",`+
			`"content":[{"type":"thinking","thinking":"The picture shows a tall striped tower by the sea, lit at dusk.","signature":"c2ln"},`+
			`{"type":"text","text":"A lighthouse at dusk, its lamp just lit."}],`+
			`"stop_reason":"end_turn","usage":{"input_tokens":1250,"output_tokens":48}}`)
	})
	return mux
}

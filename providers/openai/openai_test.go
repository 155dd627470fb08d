package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// testdata returns a captured payload of the repository's shared corpus,
// testdata/providers/openai/<name> (testdata/README.md says where it came from).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "openai", name))
	require.NoError(t, err)
	return b
}

func request(method, rawURL, body string) *providers.Request {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	return &providers.Request{Method: method, URL: u, Header: http.Header{}, Body: []byte(body)}
}

// text is a message of one text part, as the message model encodes it.
func text(role, content string) string {
	m := record.TextMessage(role, content)
	return string(m.AppendJSON(nil))
}

// Each request's messages, in the message model.
func TestParseRequest(t *testing.T) {
	img := strings.Repeat("iVBORw0KGgo", 200)
	tests := []struct {
		name      string
		req       *providers.Request
		method    string
		model     string
		args      string
		kwargs    string
		speaker   string
		stream    bool
		truncated []string
	}{
		{"chat", request("POST", "https://api.openai.com/v1/chat/completions",
			`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"temperature":0.2,"max_completion_tokens":100,"n":1,"seed":7,"stop":["\n"],"user":"u1","metadata":{"secret":"x"},"logit_bias":{"1":2}}`),
			openai.MethodChat, "gpt-4o-mini",
			`[` + text("system", "Be brief.") + `,` + text("user", "Hi") + `]`,
			`{"model":"gpt-4o-mini","temperature":0.2,"max_completion_tokens":100,"n":1,"seed":7,"stop":["\n"],"user":"u1"}`,
			"user", false, nil},
		{"chat with tools, stream, format", request("POST", "https://api.openai.com/v1/chat/completions",
			`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"w?"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"sunny"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"long","parameters":{"type":"object"}}},{"type":"function","function":{"name":"search"}}],"tool_choice":"auto","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}},"reasoning_effort":"low"}`),
			openai.MethodChat, "gpt-4o",
			`[` + text("user", "w?") + `,{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_weather"}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","content":"sunny"}]}]`,
			`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"tools":["get_weather","search"],"tool_choice":"auto","response_format":"json_schema","reasoning_effort":"low"}`,
			"tool", true, nil},
		{"assistant continuation", request("POST", "https://api.openai.com/v1/chat/completions",
			`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`),
			openai.MethodChat, "m", `[` + text("user", "a") + `,` + text("assistant", "b") + `]`, `{"model":"m"}`, "agent", false, nil},
		{"azure", request("POST", "https://res.openai.azure.com/openai/deployments/prod-gpt4o/chat/completions?api-version=2024-10-21",
			`{"messages":[{"role":"user","content":"Hi"}]}`),
			openai.MethodChat, "prod-gpt4o", `[` + text("user", "Hi") + `]`, `{}`, "user", false, nil},
		{"compatible server", request("POST", "http://localhost:8000/v1/chat/completions/",
			`{"model":"llama3","messages":[{"role":"user","content":"Hi"}],"top_k":40}`),
			openai.MethodChat, "llama3", `[` + text("user", "Hi") + `]`, `{"model":"llama3","top_k":40}`, "user", false, nil},
		{"responses with instructions", request("POST", "https://api.openai.com/v1/responses",
			`{"model":"gpt-4o-mini","instructions":"Talk like a pirate.","input":"Hello","text":{"format":{"type":"json_object"}},"reasoning":{"effort":"low"},"tools":[{"type":"function","name":"get_weather"},{"type":"web_search"}]}`),
			openai.MethodResponses, "gpt-4o-mini",
			`[` + text("system", "Talk like a pirate.") + `,` + text("user", "Hello") + `]`,
			`{"model":"gpt-4o-mini","text_format":"json_object","reasoning":{"effort":"low"},"tools":["get_weather","web_search"]}`,
			"user", false, nil},
		{"responses function output", request("POST", "https://api.openai.com/v1/responses",
			`{"model":"m","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c1","output":"42"}]}`),
			openai.MethodResponses, "m", `[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","content":"42"}]}]`,
			`{"model":"m","previous_response_id":"resp_1"}`, "tool", false, nil},
		{"legacy completions", request("POST", "https://api.openai.com/v1/completions",
			`{"model":"gpt-3.5-turbo-instruct","prompt":"Say this is a test","max_tokens":7}`),
			openai.MethodCompletions, "gpt-3.5-turbo-instruct", `[` + text("user", "Say this is a test") + `]`,
			`{"model":"gpt-3.5-turbo-instruct","max_tokens":7}`, "user", false, nil},
		{"embeddings", request("POST", "https://api.openai.com/v1/embeddings",
			`{"model":"text-embedding-3-small","input":["a","b"],"dimensions":256,"encoding_format":"float"}`),
			openai.MethodEmbeddings, "text-embedding-3-small", `[` + text("user", "a") + `,` + text("user", "b") + `]`,
			`{"model":"text-embedding-3-small","dimensions":256,"encoding_format":"float"}`, "user", false, nil},
		{"image elided", request("POST", "https://api.openai.com/v1/chat/completions",
			`{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,`+img+`"}}]}]}`),
			openai.MethodChat, "gpt-4o",
			`[{"role":"user","parts":[{"type":"text","content":"what is this?"},{"type":"media","mime_type":"image/png","size":2200}]}]`,
			`{"model":"gpt-4o"}`, "user", false, nil},
		{"cut body", &providers.Request{Method: "POST", URL: &url.URL{Path: "/v1/chat/completions"}, Body: []byte(`{"model":"m","mess`), BodyTruncated: true},
			openai.MethodChat, "", `[]`, `{}`, "", false, []string{"args", "kwargs"}},
		{"not json", request("POST", "https://api.openai.com/v1/chat/completions", `model=x`),
			openai.MethodChat, "", `[]`, `{}`, "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ok := openai.Provider{}.ParseRequest(tt.req)
			require.True(t, ok)
			assert.Equal(t, "openai", call.Provider)
			assert.Equal(t, tt.method, call.MethodName)
			assert.Equal(t, tt.model, call.Model)
			assert.JSONEq(t, tt.args, string(call.Args))
			assert.Equal(t, tt.kwargs, string(call.Kwargs), "kwargs keep the request's order")
			assert.Equal(t, tt.speaker, call.Speaker)
			assert.Equal(t, tt.stream, call.Stream)
			assert.Equal(t, tt.truncated, call.Truncated)
		})
	}
}

func TestParseRequestNotOurs(t *testing.T) {
	for _, req := range []*providers.Request{
		request("GET", "https://api.openai.com/v1/chat/completions", ``),
		request("GET", "https://api.openai.com/v1/models", ``),
		request("POST", "https://api.openai.com/v1/files", `{}`),
		request("POST", "https://generativelanguage.googleapis.com/v1beta/models/g:generateContent", `{}`),
	} {
		_, ok := openai.Provider{}.ParseRequest(req)
		assert.False(t, ok, "%s %s", req.Method, req.URL)
	}
}

func TestLongConversationKeepsTheLatestTurns(t *testing.T) {
	var msgs []string
	for i := range 3000 {
		msgs = append(msgs, `{"role":"user","content":"turn `+strings.Repeat("x", 100)+`"}`)
		_ = i
	}
	msgs = append(msgs, `{"role":"user","content":"the last turn"}`)
	req := request("POST", "https://x/v1/chat/completions", `{"model":"m","messages":[`+strings.Join(msgs, ",")+`]}`)
	req.MaxArgs = 200 << 10 // less than the conversation
	call, _ := openai.Provider{}.ParseRequest(req)
	assert.Equal(t, []string{"args"}, call.Truncated)
	assert.LessOrEqual(t, len(call.Args), req.MaxArgs)
	req.MaxArgs = 0
	whole, _ := openai.Provider{}.ParseRequest(req)
	assert.Nil(t, whole.Truncated, "within providers.MaxArgsBytes, kept whole by default")
	assert.Contains(t, string(call.Args), "the last turn")
	assert.True(t, json.Valid(call.Args))
}

func response(status int, body []byte) *providers.Response {
	return &providers.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, EOF: true}
}

func streamResponse(body []byte) *providers.Response {
	return &providers.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Stream: true, EOF: true}
}

var chatCall = &providers.Call{MethodName: openai.MethodChat}

func TestParseResponse(t *testing.T) {
	p := openai.Provider{}

	res := p.ParseResponse(chatCall, response(200, testdata(t, "openai_chat_response.json")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "chat.completion", FinishReason: "stop", ResponseID: "chatcmpl-C6bhxDl79vlojU2DYKbzyDh0FmLZY"}, res.Outcome)
	assert.Equal(t, "gpt-3.5-turbo-0125", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 13, OutputTokens: 31, TotalTokens: 44}, res.Usage)
	assert.True(t, strings.HasPrefix(res.Output.Text(), "Hello! I'm just a computer program"))
	assert.True(t, res.Finished)

	res = p.ParseResponse(chatCall, response(200, testdata(t, "openai_chat_response_tool_calls.json")))
	assert.Equal(t, "tool_calls", res.Outcome.FinishReason)
	require.Len(t, providertest.Calls(res.Output), 2)
	for _, c := range providertest.Calls(res.Output) {
		assert.NotEmpty(t, c.ID)
		assert.NotEmpty(t, c.Name)
		assert.True(t, json.Valid([]byte(c.Arguments)), c.Arguments)
	}

	res = p.ParseResponse(chatCall, response(200, testdata(t, "openai_chat_response_function_call_legacy.json")))
	assert.Equal(t, "function_call", res.Outcome.FinishReason)
	assert.Equal(t, []providers.ToolCall{{Name: "get_weather", Arguments: `{"location":"Boston"}`}}, providertest.Calls(res.Output))

	res = p.ParseResponse(&providers.Call{MethodName: openai.MethodResponses}, response(200, testdata(t, "openai_responses_response.json")))
	assert.Equal(t, "response", res.Outcome.ValueClass)
	assert.Equal(t, "completed", res.Outcome.FinishReason)
	assert.Equal(t, "gpt-4o-mini-2024-07-18", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 14, OutputTokens: 50, TotalTokens: 64}, res.Usage)
	assert.True(t, strings.HasPrefix(res.Output.Text(), "I can't provide real-time updates"))

	res = p.ParseResponse(&providers.Call{MethodName: openai.MethodEmbeddings}, response(200, []byte(
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":5,"total_tokens":5}}`)))
	assert.Equal(t, record.Success("list"), res.Outcome)
	assert.Equal(t, &record.Usage{InputTokens: 5, TotalTokens: 5}, res.Usage)

	res = p.ParseResponse(&providers.Call{MethodName: openai.MethodCompletions}, response(200, []byte(
		`{"id":"cmpl-1","object":"text_completion","model":"gpt-3.5-turbo-instruct","choices":[{"text":"This is a test.","index":0,"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`)))
	assert.Equal(t, "text_completion", res.Outcome.ValueClass)
	assert.Equal(t, "length", res.Outcome.FinishReason)
	assert.Equal(t, "This is a test.", res.Output.Text())
}

func TestParseResponseReasoningAndCache(t *testing.T) {
	res := openai.Provider{}.ParseResponse(chatCall, response(200, []byte(
		`{"object":"chat.completion","choices":[{"message":{"content":"ok","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":32}}}`)))
	assert.Equal(t, &record.Usage{InputTokens: 100, OutputTokens: 50, TotalTokens: 150, CachedTokens: 64, ReasoningTokens: 32}, res.Usage)
}

func TestContentFilterAndRefusal(t *testing.T) {
	res := openai.Provider{}.ParseResponse(chatCall, response(200, []byte(
		`{"id":"c1","object":"chat.completion","choices":[{"message":{"content":null},"finish_reason":"content_filter"}]}`)))
	assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType)
	assert.False(t, res.Outcome.Retriable)
	assert.Equal(t, "content_filter", res.Outcome.FinishReason)
	assert.Equal(t, "c1", res.Outcome.ResponseID)

	res = openai.Provider{}.ParseResponse(chatCall, response(200, []byte(
		`{"object":"chat.completion","choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`)))
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "I can't help with that.", providertest.Refusal(res.Output))
}

func TestResponsesStatuses(t *testing.T) {
	call := &providers.Call{MethodName: openai.MethodResponses}
	res := openai.Provider{}.ParseResponse(call, response(200, []byte(
		`{"id":"r1","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`)))
	assert.True(t, res.Outcome.OK, "cut short, but the call worked")
	assert.Equal(t, "max_output_tokens", res.Outcome.FinishReason)

	res = openai.Provider{}.ParseResponse(call, response(200, []byte(
		`{"id":"r2","object":"response","status":"failed","error":{"code":"server_error","message":"Something went wrong"},"output":[]}`)))
	assert.Equal(t, record.ErrorServer, res.Outcome.ErrorType)
	assert.Equal(t, "Something went wrong", res.ErrorMessage)
	assert.Equal(t, "r2", res.Outcome.ResponseID)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      []byte
		wantType  string
		retriable bool
		msg       string
	}{
		{"rate limit, real", 429, testdata(t, "openai_error_429.json"), record.ErrorRateLimit, true, "Rate limit reached for gpt-3.5-turbo"},
		{"integer code, real", 429, testdata(t, "openrouter_error_429.json"), record.ErrorRateLimit, true, "Rate limit exceeded"},
		{"quota", 429, []byte(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`), record.ErrorQuota, false, "You exceeded"},
		{"invalid key", 401, []byte(`{"error":{"message":"Incorrect API key provided: sk-abc***. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`), record.ErrorAuth, false, "Incorrect API key"},
		{"context length", 400, []byte(`{"error":{"message":"This model's maximum context length is 16385 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`), record.ErrorContextLength, false, "This model's"},
		{"content policy", 400, []byte(`{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}`), record.ErrorContentFilter, false, "Your request"},
		{"not found", 404, []byte(`{"error":{"message":"The model gpt-9 does not exist","type":"invalid_request_error","code":"model_not_found"}}`), record.ErrorNotFound, false, "The model"},
		{"server", 500, []byte(`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`), record.ErrorServer, true, "The server"},
		{"overloaded", 529, []byte(`{"error":{"message":"Overloaded","type":"overloaded_error"}}`), record.ErrorOverloaded, true, "Overloaded"},
		{"html 502", 502, []byte("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>"), record.ErrorServer, true, "502 Bad Gateway"},
		{"empty 503", 503, nil, record.ErrorOverloaded, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := openai.Provider{}.ParseResponse(chatCall, response(tt.status, tt.body))
			assert.Equal(t, tt.wantType, res.Outcome.ErrorType)
			assert.Equal(t, tt.retriable, res.Outcome.Retriable)
			assert.True(t, strings.HasPrefix(res.ErrorMessage, tt.msg), res.ErrorMessage)
			assert.False(t, res.Outcome.OK)
		})
	}
}

func TestStreams(t *testing.T) {
	p := openai.Provider{}

	res := p.ParseResponse(chatCall, streamResponse(testdata(t, "openai_chat_stream.sse")))
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "chat.completion", res.Outcome.ValueClass)
	assert.True(t, res.Finished, "[DONE] seen")
	assert.Equal(t, "tool_calls", res.Outcome.FinishReason)
	assert.Equal(t, "gpt-4o-2024-08-06", res.Model)
	require.Len(t, providertest.Calls(res.Output), 1)
	assert.Equal(t, "get_weather", providertest.Calls(res.Output)[0].Name)
	assert.Equal(t, "call_4XzlGBLtUe9dy3GVNV4jhq7h", providertest.Calls(res.Output)[0].ID)
	assert.JSONEq(t, `{"city":"New York City"}`, providertest.Calls(res.Output)[0].Arguments)
	require.NotNil(t, res.Usage)
	assert.Equal(t, 60, res.Usage.TotalTokens, "usage from the last chunk, whose choices are empty")

	res = p.ParseResponse(chatCall, streamResponse(testdata(t, "openai_chat_stream_parallel_tools.sse")))
	require.Len(t, providertest.Calls(res.Output), 2, "tool-call fragments assembled by index")
	for _, c := range providertest.Calls(res.Output) {
		assert.NotEmpty(t, c.ID, "the id comes only in a call's first fragment")
		assert.NotEmpty(t, c.Name)
		assert.True(t, json.Valid([]byte(c.Arguments)), c.Arguments)
	}
	assert.Equal(t, &record.Usage{InputTokens: 149, OutputTokens: 60, TotalTokens: 209}, res.Usage)

	res = p.ParseResponse(chatCall, streamResponse(testdata(t, "openai_chat_stream_2025_obfuscation.sse")))
	assert.True(t, res.Finished)
	assert.Equal(t, 27, res.Usage.TotalTokens, `"usage": null on every chunk but the last`)
	assert.NotEmpty(t, res.Output.Text())
	assert.Equal(t, "stop", res.Outcome.FinishReason)

	res = p.ParseResponse(&providers.Call{MethodName: openai.MethodResponses}, streamResponse(testdata(t, "responses_stream.sse")))
	assert.True(t, res.Outcome.OK)
	assert.True(t, res.Finished, "response.completed ends the stream")
	assert.Equal(t, "Let me check.", res.Output.Text())
	assert.Equal(t, []providers.ToolCall{{ID: "call_abc", Name: "get_weather", Arguments: `{"city":"Paris"}`}}, providertest.Calls(res.Output))
	assert.Equal(t, &record.Usage{InputTokens: 20, OutputTokens: 12, TotalTokens: 32, CachedTokens: 8}, res.Usage)
	assert.Equal(t, "resp_stream_1", res.Outcome.ResponseID)
	assert.Equal(t, "completed", res.Outcome.FinishReason)
}

func TestStreamEdgeCases(t *testing.T) {
	p := openai.Provider{}
	t.Run("comments and an error mid-stream", func(t *testing.T) {
		body := ": OPENROUTER PROCESSING\n\n" +
			`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n" +
			`data: {"error":{"message":"Upstream overloaded","code":502}}` + "\n\n"
		res := p.ParseResponse(chatCall, streamResponse([]byte(body)))
		assert.False(t, res.Outcome.OK)
		assert.Equal(t, record.ErrorServer, res.Outcome.ErrorType)
		assert.Equal(t, "Upstream overloaded", res.ErrorMessage)
	})
	t.Run("closed before [DONE]", func(t *testing.T) {
		full := testdata(t, "openai_chat_stream_2025_obfuscation.sse")
		resp := streamResponse(full[:len(full)/2])
		resp.EOF = false // the caller closed it: the middleware decides
		res := p.ParseResponse(chatCall, resp)
		assert.True(t, res.Outcome.OK, "the provider reports what it read")
		assert.False(t, res.Finished)
		assert.Nil(t, res.Usage)
	})
	t.Run("ended before [DONE], inside an event", func(t *testing.T) {
		full := testdata(t, "openai_chat_stream_2025_obfuscation.sse")
		res := p.ParseResponse(chatCall, streamResponse(full[:len(full)/2]))
		assert.False(t, res.Outcome.OK, "the body ended, but the stream did not")
		assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType)
		assert.Equal(t, "the stream ended without [DONE] or a finish reason", res.ErrorMessage)
		assert.Equal(t, "chatcmpl-C6bjxzOr3Oz1rTiafksd6himIit3q", res.Outcome.ResponseID)
	})
	t.Run("ended without [DONE] after a finish reason", func(t *testing.T) {
		full := string(testdata(t, "openai_chat_stream_2025_obfuscation.sse"))
		done := strings.Index(full, "data: [DONE]")
		require.Positive(t, done)
		res := p.ParseResponse(chatCall, streamResponse([]byte(full[:done])))
		assert.True(t, res.Outcome.OK, "some compatible servers send no [DONE]: a finish reason and whole events suffice")

		// The same, but the last event (the usage chunk) cut in the middle.
		cut := strings.LastIndex(full[:done], `"usage"`)
		res = p.ParseResponse(chatCall, streamResponse([]byte(full[:cut])))
		assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType, "the body ended inside an event")
		assert.Equal(t, "stop", res.Outcome.FinishReason, "what it said is kept")
	})
	t.Run("head and tail of a long stream", func(t *testing.T) {
		lf := testdata(t, "openai_chat_stream_2025_obfuscation.sse")
		crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
		for name, full := range map[string][]byte{"LF": lf, "CRLF": crlf} {
			resp := streamResponse(full[:800])
			resp.Tail, resp.Truncated = full[len(full)-1200:], true
			res := p.ParseResponse(chatCall, resp)
			assert.True(t, res.Finished, name)
			assert.True(t, res.Outcome.OK, name)
			require.NotNil(t, res.Usage, "%s: usage read from the tail", name)
			assert.Equal(t, 27, res.Usage.TotalTokens, name)
			assert.Equal(t, "stop", res.Outcome.FinishReason, name)
		}
	})
	t.Run("a long completion cut by the capture", func(t *testing.T) {
		full := `{"id":"chatcmpl-9","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` +
			strings.Repeat("words ", 5000) + `"},"finish_reason":"content_filter"}],"usage":{"prompt_tokens":5,"completion_tokens":5000,"total_tokens":5005}}`
		resp := &providers.Response{StatusCode: 200, Body: []byte(full[:4096]), Tail: []byte(full[len(full)-2048:]), Truncated: true, EOF: true}
		res := p.ParseResponse(chatCall, resp)
		assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType, "the finish reason, read from the tail")
		assert.Equal(t, "content_filter", res.Outcome.FinishReason)
		assert.Equal(t, "chatcmpl-9", res.Outcome.ResponseID, "the id, read from the head")
		assert.Equal(t, "gpt-4o", res.Model)
		assert.Equal(t, &record.Usage{InputTokens: 5, OutputTokens: 5000, TotalTokens: 5005}, res.Usage)
	})
	t.Run("responses error event", func(t *testing.T) {
		body := "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Too many\"}\n\n"
		res := p.ParseResponse(&providers.Call{MethodName: openai.MethodResponses}, streamResponse([]byte(body)))
		assert.Equal(t, record.ErrorRateLimit, res.Outcome.ErrorType)
	})
}

func TestResultOutlivesTheBody(t *testing.T) {
	// The recorder reuses capture buffers: nothing in a result may point
	// into the body it was parsed from.
	for _, name := range []string{"openai_chat_response.json", "openai_chat_stream.sse", "openai_chat_stream_parallel_tools.sse", "responses_stream.sse",
		"chat_response_reasoning_content_tool_calls.json", "responses_stream_reasoning_summary.sse"} {
		body := testdata(t, name)
		stream := strings.HasSuffix(name, ".sse")
		resp := response(200, body)
		resp.Stream = stream
		res := openai.Provider{}.ParseResponse(chatCall, resp)
		want := openai.Provider{}.ParseResponse(chatCall, &providers.Response{StatusCode: 200, Body: append([]byte(nil), body...), Stream: stream})
		for i := range body {
			body[i] = 'X'
		}
		assert.Equal(t, want, res, name)
	}
}

func TestParseRequestModel(t *testing.T) {
	long := strings.Repeat("m", 300)
	for body, want := range map[string]string{
		`{"model":"gpt-4o","messages":[]}`:              "gpt-4o",
		`{"model":"gpt\u002d4o","messages":[]}`:         "gpt-4o",
		`{"model":"a","model":1,"messages":[]}`:         "a", // the last string
		`{"model":"a","model":"b"}`:                     "b",
		`{"model":"` + long + `"}`:                      long, // too long for kwargs
		`{"model":"caf\u00e9","stream":true}`:           "café",
		"{\"model\":\"bad\xffutf8\"}":                   "bad\uFFFDutf8",
		`{"metadata":{"model":"x"},"model":"y"}`:        "y",
		`{"model":"kept","metadata":{"a":1},"top_p":1}`: "kept",
	} {
		buf := []byte(body)
		call, ok := openai.Provider{}.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: "/v1/chat/completions"}, Body: buf})
		require.True(t, ok)
		for i := range buf {
			buf[i] = 'X' // the recorder reuses the body's buffer
		}
		assert.Equal(t, want, call.Model, "%s", body)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add("/v1/chat/completions", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"function":{"name":"f"}}]}`))
	f.Add("/v1/responses", []byte(`{"instructions":"x","input":[{"type":"function_call_output"}],"text":{"format":{"type":"t"}}}`))
	f.Add("/openai/deployments/d/embeddings", []byte(`{"input":"x"}`))
	f.Add("/v1/completions", []byte(`{"prompt":["a",1]}`))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		call, ok := openai.Provider{}.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: path}, Body: body})
		if !ok {
			return
		}
		// Nothing of a call points into the body: the recorder reuses it.
		scratch := bytes.Clone(body)
		again, _ := openai.Provider{}.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: path}, Body: scratch})
		for i := range scratch {
			scratch[i] = 'X'
		}
		if !reflect.DeepEqual(call, again) {
			t.Fatalf("the call changed with the body it was read from:\n%+v\n%+v", call, again)
		}
		if !json.Valid(call.Args) || call.Args[0] != '[' {
			t.Fatalf("args %q", call.Args)
		}
		if !json.Valid(call.Kwargs) || call.Kwargs[0] != '{' {
			t.Fatalf("kwargs %q", call.Kwargs)
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"openai_chat_response.json", "openai_responses_response.json", "openai_error_429.json",
		"chat_response_reasoning_content_tool_calls.json", "responses_reasoning_summary.json"} {
		f.Add(200, testdata(f, name), false)
	}
	for _, name := range []string{"openai_chat_stream.sse", "openai_chat_stream_parallel_tools.sse", "responses_stream.sse", "responses_stream_reasoning_summary.sse"} {
		f.Add(200, testdata(f, name), true)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, stream bool) {
		res := openai.Provider{}.ParseResponse(chatCall, &providers.Response{StatusCode: status, Body: body, Stream: stream, Tail: body, Truncated: stream && len(body)%2 == 0})
		if res.Outcome.Status == "" {
			t.Fatal("no outcome")
		}
		if status >= 400 && res.Outcome.OK {
			t.Fatalf("status %d is not ok", status)
		}
	})
}

// A 2xx that is not JSON is nothing go-openai or openai-go can decode: the
// record says decode, not success; one that is the beginning of a JSON
// document was cut on its way (transport), as a dropped connection cuts
// it. Endpoints that answer with other bytes (audio, files) are not
// judged.
func TestParseResponseNotJSON(t *testing.T) {
	p := openai.Provider{}
	for _, tc := range []struct {
		name, method string
		stream       bool
		body         string
		ok           bool
	}{
		{"chat garbage", openai.MethodChat, false, "<html>\x00\xff {{{", false},
		{"chat half a document", openai.MethodChat, false, `{"id":"chatcmpl-1","choices":[`, false}, // cut: transport
		{"chat empty", openai.MethodChat, false, "", true},
		{"stream garbage", openai.MethodChat, true, "<html>\x00\xff {{{", false},
		{"stream of events", openai.MethodChat, true, "data: {\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\ndata: [DONE]\n\n", true},
		{"embeddings garbage", openai.MethodEmbeddings, false, "garbage", false},
		{"other endpoint, other bytes", "openai.audio.speech.create", false, "ID3\x04\x00binary", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := p.ParseResponse(&providers.Call{MethodName: tc.method, Stream: tc.stream},
				&providers.Response{StatusCode: 200, Stream: tc.stream, Body: []byte(tc.body)})
			assert.Equal(t, tc.ok, res.Outcome.OK, "%+v", res.Outcome)
			switch {
			case tc.ok:
			case tc.name == "chat half a document":
				assert.Equal(t, record.ErrorTransport, res.Outcome.ErrorType)
				assert.Equal(t, fmt.Sprintf("the response ended before its JSON did (%d bytes)", len(tc.body)), res.ErrorMessage)
				assert.False(t, res.Finished, "a half-read body stays incomplete")
			default:
				assert.Equal(t, record.ErrorDecode, res.Outcome.ErrorType)
				assert.Equal(t, fmt.Sprintf("the response is not JSON (%d bytes)", len(tc.body)), res.ErrorMessage)
				assert.False(t, res.Finished, "a half-read body stays incomplete")
			}
		})
	}
}

// With a buffer lent for the text, the result is the same, and owns its
// text: the lent buffer is the recorder's to reuse.
func TestScratchGivesTheSameResult(t *testing.T) {
	for _, name := range []string{"openai_chat_response.json", "openai_chat_stream_2025_obfuscation.sse"} {
		body := testdata(t, name)
		stream := strings.HasSuffix(name, ".sse")
		plain := response(200, body)
		plain.Stream = stream
		want := openai.Provider{}.ParseResponse(chatCall, plain)
		require.NotEmpty(t, want.Output, name)
		scratch := make([]byte, 0, 4) // too small: grown
		lent := response(200, body)
		lent.Stream, lent.Scratch = stream, &scratch
		got := openai.Provider{}.ParseResponse(chatCall, lent)
		assert.Equal(t, want, got, name)
		// The result owns its text: the recorder reuses the lent buffer.
		scratch = scratch[:cap(scratch)]
		for i := range scratch {
			scratch[i] = 'x'
		}
		assert.Equal(t, want, got, "%s: the result points into the lent buffer", name)
	}
}

// Reasoning, service tier and fingerprint, from captured responses: an
// OpenAI-compatible server's reasoning_content beside a tool call, and
// OpenAI's Responses reasoning summaries, whole and streamed.
func TestReasoningTierAndFingerprint(t *testing.T) {
	p := openai.Provider{}
	responses := &providers.Call{MethodName: openai.MethodResponses}

	res := p.ParseResponse(chatCall, response(200, testdata(t, "chat_response_reasoning_content_tool_calls.json")))
	assert.Equal(t, "The user is asking for the weather in Beijing. I have a function available called `get_weather` that takes a location parameter (the city name) and returns the current weather for that location.\n\nI need to call the `get_weather` function with \"Beijing\" as the location parameter.", res.Output.Reasoning())
	assert.Equal(t, []providers.ToolCall{{ID: "get_weather:0", Name: "get_weather", Arguments: `{"location":"Beijing"}`}}, providertest.Calls(res.Output))
	assert.Empty(t, res.Output.Text())
	assert.Equal(t, "tool_calls", res.Outcome.FinishReason)

	res = p.ParseResponse(chatCall, response(200, testdata(t, "openai_chat_response.json")))
	assert.Equal(t, "default", res.ServiceTier)
	assert.Empty(t, res.SystemFingerprint, `"system_fingerprint": null`)
	assert.Empty(t, res.Output.Reasoning())

	res = p.ParseResponse(chatCall, streamResponse(testdata(t, "openai_chat_stream.sse")))
	assert.Equal(t, "fp_143bb8492c", res.SystemFingerprint, "every chunk carries it")

	res = p.ParseResponse(responses, response(200, testdata(t, "openai_responses_response.json")))
	assert.Equal(t, "default", res.ServiceTier)
	assert.Empty(t, res.Output.Reasoning())

	res = p.ParseResponse(responses, response(200, testdata(t, "responses_reasoning_summary.json")))
	assert.Equal(t, "default", res.ServiceTier)
	parts := strings.Split(res.Output.Reasoning(), "\n\n**")
	assert.Len(t, parts, 6, "six summary parts, a blank line apart")
	assert.True(t, strings.HasPrefix(res.Output.Reasoning(), "**Considering street crossing safety**\n\nI need to parse the user's query"), res.Output.Reasoning())
	assert.True(t, strings.HasPrefix(res.Output.Text(), "Here’s a simple, safe way to cross a street:"), "the summary is not the output")
	assert.NotContains(t, res.Output.Text(), "Considering street crossing safety")

	res = p.ParseResponse(responses, streamResponse(testdata(t, "responses_stream_reasoning_summary.sse")))
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "default", res.ServiceTier, "response.completed's, not response.created's auto")
	assert.Empty(t, res.SystemFingerprint)
	// What the stream's four reasoning_summary_text.done events say, a
	// blank line apart: the deltas put together.
	var want []string
	wire.ScanSSE(testdata(t, "responses_stream_reasoning_summary.sse"), func(ev wire.Event) bool {
		if ev.Name == "response.reasoning_summary_text.done" {
			var done struct{ Text string }
			require.NoError(t, json.Unmarshal(ev.Data, &done))
			want = append(want, done.Text)
		}
		return true
	})
	require.Len(t, want, 4)
	assert.Equal(t, strings.Join(want, "\n\n"), res.Output.Reasoning())
	assert.True(t, strings.HasPrefix(want[0], "**Providing street crossing instructions**"))
	assert.NotContains(t, res.Output.Text(), "**Providing street crossing instructions**")
	assert.NotEmpty(t, res.Output.Text())
}

// Chat streams of OpenAI-compatible servers carry the reasoning in each
// delta: reasoning_content (DeepSeek, Moonshot, vLLM, SGLang) or
// reasoning (OpenRouter, newer vLLM); a server that sends both sends the
// same text, which is kept once. The chunks follow DeepSeek's documented
// shape (no captured stream was found).
func TestStreamedReasoning(t *testing.T) {
	chunk := func(delta string) string {
		return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}`
	}
	for _, key := range []string{"reasoning_content", "reasoning"} {
		t.Run(key, func(t *testing.T) {
			body := sse(
				chunk(`{"role":"assistant","content":null,"`+key+`":""}`),
				chunk(`{"content":null,"`+key+`":"Okay, "}`),
				chunk(`{"content":null,"`+key+`":"2 + 2 is 4."}`),
				chunk(`{"content":"4","`+key+`":null}`),
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","system_fingerprint":"fp_7e73fd9a08","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}]}`,
				"[DONE]")
			res := openai.Provider{}.ParseResponse(chatCall, streamResponse(body))
			assert.Equal(t, "Okay, 2 + 2 is 4.", res.Output.Reasoning())
			assert.Equal(t, "4", res.Output.Text())
			assert.Equal(t, "fp_7e73fd9a08", res.SystemFingerprint)
			assert.True(t, res.Outcome.OK)
		})
	}
	res := openai.Provider{}.ParseResponse(chatCall, streamResponse(sse(
		chunk(`{"content":null,"reasoning_content":"once","reasoning":"once"}`), "[DONE]")))
	assert.Equal(t, "once", res.Output.Reasoning(), "both keys: the text once")
}

// A Responses stream may write to an item after a later one began: a
// reasoning summary still streaming when the message's item is added.
// Each item's text is its own (growing the items once moved the earlier
// item's builders, and the next write panicked; found by fuzzing).
func TestStreamWritesToAnEarlierItem(t *testing.T) {
	res := openai.Provider{}.ParseResponse(responsesCall, streamResponse(sse(
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning"}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"Think"}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"message"}}`,
		`{"type":"response.output_text.delta","output_index":1,"delta":"Hello"}`,
		`{"type":"response.output_item.added","output_index":2,"item":{"type":"message"}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"ing."}`,
		`{"type":"response.output_text.delta","output_index":1,"delta":", world"}`,
		`{"type":"response.output_text.delta","output_index":2,"delta":"!"}`,
		`{"type":"response.completed","response":{"id":"r","status":"completed"}}`)))
	require.True(t, res.Outcome.OK, "%+v", res)
	assert.Equal(t, "Thinking.", res.Output.Reasoning())
	assert.Equal(t, "Hello, world!", res.Output.Text())
}

package anthropic_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// testdata returns a captured payload of the repository's shared corpus,
// testdata/providers/anthropic/<name> (testdata/README.md says where it came from).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "anthropic", name))
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

const api = "https://api.anthropic.com/v1/messages"

const vertex = "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/"

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
		{"real: plain message", request("POST", api, string(testdata(t, "request_message.json"))),
			anthropic.MethodCreate, "claude-3-opus-20240229",
			`[{"role":"user","parts":[{"type":"text","content":"Hello, how are you?"}]}]`,
			`{"model":"claude-3-opus-20240229","max_tokens":100,"temperature":0}`,
			"user", false, nil},
		{"real: tools as names", request("POST", api, string(testdata(t, "request_tools.json"))),
			anthropic.MethodCreate, "claude-3-opus-20240229",
			`[{"role":"user","parts":[{"type":"text","content":"What's the weather like?"}]}]`,
			`{"model":"claude-3-opus-20240229","max_tokens":100,"temperature":0,"tools":["get_weather"]}`,
			"user", false, nil},
		{"real: a tool result is the tool speaking", request("POST", api, string(testdata(t, "request_tool_result.json"))),
			anthropic.MethodCreate, "claude-haiku-4-5",
			`[{"role":"user","parts":[{"type":"text","content":"What is the weather in Boston?"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"toolu_01XnSg3YrHqGYq2L7V184iUK","name":"getCurrentWeather","arguments":{"location":"Boston, MA"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"toolu_01XnSg3YrHqGYq2L7V184iUK","content":"{\"Boston\",\"72 and sunny\"}"}]}]`,
			`{"model":"claude-haiku-4-5","max_tokens":2048,"temperature":0,"tools":["getCurrentWeather"]}`,
			"tool", false, nil},
		{"real: streamed with thinking", request("POST", api, string(testdata(t, "request_stream_thinking.json"))),
			anthropic.MethodCreate, "claude-sonnet-4-5",
			`[{"role":"user","parts":[{"type":"text","content":"What is 5 + 3? Think step by step."}]}]`,
			`{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"temperature":1,"thinking":{"type":"enabled","budget_tokens":2048}}`,
			"user", true, nil},
		{"system string first, every parameter in order, metadata and secrets out", request("POST", api,
			`{"model":"claude-sonnet-4-5","system":"Be brief.","max_tokens":1024,"metadata":{"user_id":"u-123"},"stop_sequences":["\n\nHuman:"],"temperature":0.2,"top_p":0.9,"top_k":40,`+
				`"tools":[{"name":"get_weather","description":"long","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":5},{"type":"mcp_toolset","mcp_server_name":"docs"}],`+
				`"tool_choice":{"type":"tool","name":"get_weather"},"service_tier":"auto","mcp_servers":[{"type":"url","url":"https://mcp.example.com/sse","name":"docs","authorization_token":"tok-secret-value"}],`+
				`"output_config":{"effort":"low","format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"string"}}}}},"inference_geo":"us",`+
				`"messages":[{"role":"user","content":"Weather in Paris?"}]}`),
			anthropic.MethodCreate, "claude-sonnet-4-5",
			`[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]`,
			`{"model":"claude-sonnet-4-5","max_tokens":1024,"stop_sequences":["\n\nHuman:"],"temperature":0.2,"top_p":0.9,"top_k":40,"tools":["get_weather","web_search","mcp_toolset"],"tool_choice":{"type":"tool","name":"get_weather"},"service_tier":"auto","mcp_servers":["docs"],"output_config":{"effort":"low","format":"json_schema"},"inference_geo":"us"}`,
			"user", false, nil},
		{"system blocks as sent", request("POST", api,
			`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"You are a helpful assistant.","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCreate, "m",
			`[{"role":"system","parts":[{"type":"text","content":"You are a helpful assistant."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
			`{"model":"m","max_tokens":5}`, "user", false, nil},
		{"images and documents elided", request("POST", api,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+img+`"}},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"`+img+`"}},{"type":"text","text":"What is this?"}]}]}`),
			anthropic.MethodCreate, "m",
			`[{"role":"user","parts":[{"type":"media","mime_type":"image/png","size":2200},{"type":"media","mime_type":"application/pdf","size":2200},{"type":"text","content":"What is this?"}]}]`,
			`{"model":"m","max_tokens":5}`, "user", false, nil},
		{"assistant prefill is the agent", request("POST", api,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello,"}]}`),
			anthropic.MethodCreate, "m", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]},{"role":"assistant","parts":[{"type":"text","content":"Hello,"}]}]`,
			`{"model":"m","max_tokens":5}`, "agent", false, nil},
		{"a tool result with words of the user's is the user", request("POST", api,
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"42"},{"type":"text","text":"and now?"}]}]}`),
			anthropic.MethodCreate, "m", `[{"role":"user","parts":[{"type":"tool_call_response","id":"t1","content":"42"},{"type":"text","content":"and now?"}]}]`,
			`{"model":"m","max_tokens":5}`, "user", false, nil},
		{"vertex: the model from the URL, anthropic_version kept", request("POST", vertex+"claude-sonnet-4-5@20250929:rawPredict",
			`{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCreate, "claude-sonnet-4-5@20250929", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
			`{"model":"claude-sonnet-4-5@20250929","anthropic_version":"vertex-2023-10-16","max_tokens":10}`, "user", false, nil},
		{"vertex: streamRawPredict streams", request("POST", vertex+"claude-haiku-4-5@20251001:streamRawPredict",
			`{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCreate, "claude-haiku-4-5@20251001", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
			`{"model":"claude-haiku-4-5@20251001","anthropic_version":"vertex-2023-10-16","max_tokens":10,"stream":true}`, "user", true, nil},
		{"vertex: count-tokens takes the model from the body", request("POST", vertex+"count-tokens:rawPredict",
			`{"anthropic_version":"vertex-2023-10-16","model":"claude-sonnet-4-5@20250929","messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCountTokens, "claude-sonnet-4-5@20250929", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
			`{"anthropic_version":"vertex-2023-10-16","model":"claude-sonnet-4-5@20250929"}`, "user", false, nil},
		{"count_tokens", request("POST", "https://api.anthropic.com/v1/messages/count_tokens",
			`{"model":"claude-sonnet-4-5","system":"s","messages":[{"role":"user","content":"Hi"}],"tools":[{"name":"f"}]}`),
			anthropic.MethodCountTokens, "claude-sonnet-4-5", `[{"role":"system","parts":[{"type":"text","content":"s"}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
			`{"model":"claude-sonnet-4-5","tools":["f"]}`, "user", false, nil},
		{"compatible server under another base URL", request("POST", "http://localhost:4000/anthropic/v1/messages/",
			`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCreate, "claude-sonnet-4-5", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`, `{"model":"claude-sonnet-4-5","max_tokens":5}`, "user", false, nil},
		{"a gateway's bare /messages", request("POST", "https://gateway.example.com/messages",
			`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`),
			anthropic.MethodCreate, "claude-sonnet-4-5", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`, `{"model":"claude-sonnet-4-5","max_tokens":5}`, "user", false, nil},
		{"long values are marked, not kept", request("POST", api,
			`{"model":"m","max_tokens":5,"container":"`+strings.Repeat("c", 300)+`","context_management":{"edits":[`+strings.Repeat(`{"type":"clear_tool_uses_20250919"},`, 40)+`{}]},"messages":[]}`),
			anthropic.MethodCreate, "m", `[]`,
			`{"model":"m","max_tokens":5,"container":"…[302 bytes cut]","context_management":"…[1454 bytes cut]"}`, "", false, []string{"kwargs"}},
		{"cut body", &providers.Request{Method: "POST", URL: &url.URL{Path: "/v1/messages"}, Body: []byte(`{"model":"m","mess`), BodyTruncated: true},
			anthropic.MethodCreate, "", `[]`, `{}`, "", false, []string{"args", "kwargs"}},
		{"not json", request("POST", api, `model=x`),
			anthropic.MethodCreate, "", `[]`, `{}`, "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ok := anthropic.Provider{}.ParseRequest(tt.req)
			require.True(t, ok)
			assert.Equal(t, "anthropic", call.Provider)
			assert.Equal(t, tt.method, call.MethodName)
			assert.Equal(t, tt.model, call.Model)
			assert.JSONEq(t, tt.args, string(call.Args))
			assert.Equal(t, tt.kwargs, string(call.Kwargs), "kwargs keep the request's order")
			assert.True(t, json.Valid(call.Kwargs), "%s", call.Kwargs)
			assert.Equal(t, tt.speaker, call.Speaker)
			assert.Equal(t, tt.stream, call.Stream)
			assert.Equal(t, tt.truncated, call.Truncated)
			assert.NotContains(t, string(call.Kwargs)+string(call.Args), "tok-secret-value")
			assert.NotContains(t, string(call.Kwargs), "u-123", "metadata is the caller's")
		})
	}
}

func TestParseRequestNotOurs(t *testing.T) {
	for _, req := range []*providers.Request{
		request("GET", api, ``),
		request("POST", "https://api.anthropic.com/v1/messages/batches", `{"requests":[]}`),
		request("POST", "https://api.anthropic.com/v1/models", `{}`),
		request("POST", "https://api.anthropic.com/v1/complete", `{"prompt":"\n\nHuman: hi\n\nAssistant:"}`),
		request("POST", "https://api.openai.com/v1/threads/thread_abc/messages", `{"role":"user","content":"Hi"}`),
		request("POST", "https://api.openai.com/v1/chat/completions", `{"messages":[]}`),
		request("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent", `{}`),
		request("POST", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/gemini-2.0-flash:rawPredict", `{}`),
		request("POST", vertex+"claude-sonnet-4-5:predict", `{}`),
		request("POST", vertex+":rawPredict", `{}`),
		{Method: "POST"},
		nil,
	} {
		_, ok := anthropic.Provider{}.ParseRequest(req)
		assert.False(t, ok, "%+v", req)
	}
}

// The recorder asks providers in order, and a user's providers first:
// each of these paths must be claimed by exactly its own provider, whatever
// the order.
func TestNoProviderStealsAnother(t *testing.T) {
	all := map[string]providers.Provider{"anthropic": anthropic.Provider{}, "openai": openai.Provider{}, "gemini": gemini.Provider{}}
	for path, owner := range map[string]string{
		"/v1/messages":              "anthropic",
		"/v1/messages/count_tokens": "anthropic",
		"/anthropic/v1/messages":    "anthropic",
		"/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:rawPredict":       "anthropic",
		"/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict": "anthropic",
		"/v1/projects/p/locations/l/publishers/anthropic/models/count-tokens:rawPredict":            "anthropic",
		"/v1/chat/completions":                            "openai",
		"/v1/responses":                                   "openai",
		"/openai/deployments/d/chat/completions":          "openai",
		"/v1beta/models/gemini-2.0-flash:generateContent": "gemini",
		"/v1/projects/p/locations/l/publishers/google/models/gemini-2.0-flash:streamGenerateContent": "gemini",
	} {
		for name, p := range all {
			_, ok := p.ParseRequest(&providers.Request{Method: "POST", URL: &url.URL{Path: path}, Body: []byte(`{"messages":[]}`)})
			assert.Equal(t, name == owner, ok, "%s claims %s", name, path)
		}
	}
}

func TestLongConversationKeepsTheLatestTurns(t *testing.T) {
	msgs := make([]string, 0, 3001)
	for range 3000 {
		msgs = append(msgs, `{"role":"user","content":"turn `+strings.Repeat("x", 100)+`"}`)
	}
	msgs = append(msgs, `{"role":"user","content":"the last turn"}`)
	req := request("POST", api, `{"model":"m","system":"first","messages":[`+strings.Join(msgs, ",")+`]}`)
	req.MaxArgs = 200 << 10 // less than the conversation
	call, _ := anthropic.Provider{}.ParseRequest(req)
	assert.Equal(t, []string{"args"}, call.Truncated)
	assert.LessOrEqual(t, len(call.Args), req.MaxArgs)
	req.MaxArgs = 0
	whole, _ := anthropic.Provider{}.ParseRequest(req)
	assert.Nil(t, whole.Truncated, "within providers.MaxArgsBytes, kept whole by default")
	assert.Contains(t, string(call.Args), "the last turn")
	assert.Contains(t, string(call.Args), "earlier items cut")
	assert.True(t, json.Valid(call.Args))
}

func response(status int, body []byte) *providers.Response {
	return &providers.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, EOF: true}
}

func streamResponse(body []byte) *providers.Response {
	return &providers.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Stream: true, EOF: true}
}

var (
	createCall = &providers.Call{MethodName: anthropic.MethodCreate}
	streamCall = &providers.Call{MethodName: anthropic.MethodCreate, Stream: true}
	countCall  = &providers.Call{MethodName: anthropic.MethodCountTokens}
)

// TestUsage pins the mapping of every real payload's usage onto the one
// meaning of record.Usage: InputTokens counts the cache reads and writes
// that Anthropic's input_tokens leaves out, and a stream's cumulative
// message_delta usage replaces message_start's, never adds to it.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		file string
		want record.Usage
	}{
		{"message.json", record.Usage{InputTokens: 13, OutputTokens: 35, TotalTokens: 48}},
		{"message_max_tokens.json", record.Usage{InputTokens: 611, OutputTokens: 100, TotalTokens: 711}},
		{"message_tool_use.json", record.Usage{InputTokens: 604, OutputTokens: 56, TotalTokens: 660}},
		{"message_thinking.json", record.Usage{InputTokens: 53, OutputTokens: 189, TotalTokens: 242}},
		{"message_redacted_thinking.json", record.Usage{InputTokens: 93, OutputTokens: 193, TotalTokens: 286}},
		// input_tokens 7, cache_creation_input_tokens 6001, all of them 1 h.
		{"message_cache_write_1h.json", record.Usage{InputTokens: 6008, OutputTokens: 16, TotalTokens: 6024, CacheWriteTokens: 6001, CacheWrite1hTokens: 6001}},
		// input_tokens 7, cache_read_input_tokens 6001.
		{"message_cache_read.json", record.Usage{InputTokens: 6008, OutputTokens: 16, TotalTokens: 6024, CachedTokens: 6001}},
		// message_start says 15 in, 3 out; message_delta 15 in, 13 out:
		// summed, it would be 30 in and 16 out.
		{"stream_text.sse", record.Usage{InputTokens: 15, OutputTokens: 13, TotalTokens: 28}},
		{"stream_tool_use.sse", record.Usage{InputTokens: 679, OutputTokens: 111, TotalTokens: 790}},
		{"stream_thinking.sse", record.Usage{InputTokens: 50, OutputTokens: 211, TotalTokens: 261}},
		// Cut by an error after message_start: its usage is what there is.
		{"stream_error_midstream.sse", record.Usage{InputTokens: 15, OutputTokens: 3, TotalTokens: 18}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			resp := response(200, testdata(t, tc.file))
			resp.Stream = strings.HasSuffix(tc.file, ".sse")
			res := anthropic.Provider{}.ParseResponse(createCall, resp)
			require.NotNil(t, res.Usage)
			assert.Equal(t, tc.want, *res.Usage)
		})
	}
}

func TestStreamUsageIsCumulative(t *testing.T) {
	// Two message_delta events, as a long answer may send: each carries the
	// total so far. Newer streams repeat the input and cache counts in
	// them too; older ones carry only output_tokens.
	body := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":20},"output_tokens":1}}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":10}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":25,"output_tokens_details":{"thinking_tokens":12}}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse([]byte(body)))
	require.NotNil(t, res.Usage)
	assert.Equal(t, record.Usage{InputTokens: 170, OutputTokens: 25, TotalTokens: 195, CachedTokens: 50, CacheWriteTokens: 20, CacheWrite1hTokens: 20, ReasoningTokens: 12}, *res.Usage,
		"the last count replaces the earlier ones; summed it would be 340 in, 36 out")

	// Only output_tokens in the delta: the input stays message_start's.
	body = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_2","model":"claude-3-haiku-20240307","usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":17}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	res = anthropic.Provider{}.ParseResponse(streamCall, streamResponse([]byte(body)))
	assert.Equal(t, &record.Usage{InputTokens: 12, OutputTokens: 17, TotalTokens: 29}, res.Usage)
}

func TestParseResponse(t *testing.T) {
	p := anthropic.Provider{}

	res := p.ParseResponse(createCall, response(200, testdata(t, "message.json")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "message", FinishReason: "end_turn", ResponseID: "msg_014pVpaDLxzAdWjwpuN7rQQX"}, res.Outcome)
	assert.Equal(t, "claude-3-opus-20240229", res.Model)
	assert.Equal(t, "Hello! As an AI language model, I don't have feelings, but I'm functioning properly and ready to assist you. How can I help you today?", res.Output.Text())
	assert.True(t, res.Finished)
	assert.Empty(t, providertest.Calls(res.Output))

	res = p.ParseResponse(createCall, response(200, testdata(t, "message_max_tokens.json")))
	assert.True(t, res.Outcome.OK, "cut at max_tokens, but the call worked")
	assert.Equal(t, "max_tokens", res.Outcome.FinishReason)

	res = p.ParseResponse(createCall, response(200, testdata(t, "message_tool_use.json")))
	assert.Equal(t, "tool_use", res.Outcome.FinishReason)
	assert.Equal(t, "claude-haiku-4-5-20251001", res.Model)
	assert.Equal(t, []providers.ToolCall{{ID: "toolu_01XnSg3YrHqGYq2L7V184iUK", Name: "getCurrentWeather", Arguments: `{"location":"Boston, MA"}`}}, providertest.Calls(res.Output))
	assert.Empty(t, res.Output.Text())

	res = p.ParseResponse(createCall, response(200, testdata(t, "message_thinking.json")))
	assert.Equal(t, "To solve for x, I need to isolate it on one side of the equation.\n\n**Given:** x + 5 = 12\n\n**Subtract 5 from both sides:**\nx + 5 - 5 = 12 - 5\nx = 7\n\n**Answer: x = 7**\n\nTo check: 7 + 5 = 12 ✓", res.Output.Text(),
		"the thinking block is not output")

	res = p.ParseResponse(createCall, response(200, testdata(t, "message_redacted_thinking.json")))
	assert.True(t, strings.HasPrefix(res.Output.Text(), "I don't respond to attempts"), res.Output.Text())
	assert.NotContains(t, res.Output.Text(), "ErIGCkYICxgCKkAy1e1hkuqv")

	res = p.ParseResponse(countCall, response(200, []byte(`{"input_tokens":2095}`)))
	assert.Equal(t, record.Success("count_tokens"), res.Outcome)
	assert.Nil(t, res.Usage, "a count is the answer, not tokens spent")
	assert.True(t, res.Finished)
}

func TestStopReasons(t *testing.T) {
	msg := func(reason, details string) []byte {
		return []byte(`{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Part"}],"stop_reason":` + reason + `,"stop_sequence":null` + details + `,"usage":{"input_tokens":5,"output_tokens":1}}`)
	}
	for _, reason := range []string{"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "model_context_window_exceeded"} {
		res := anthropic.Provider{}.ParseResponse(createCall, response(200, msg(`"`+reason+`"`, "")))
		assert.True(t, res.Outcome.OK, reason)
		assert.Equal(t, reason, res.Outcome.FinishReason)
		assert.True(t, res.Finished, reason)
	}

	res := anthropic.Provider{}.ParseResponse(createCall, response(200, msg(`"refusal"`, `,"stop_details":{"type":"refusal","category":"cyber","explanation":null}`)))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "content_filter", FinishReason: "refusal", ResponseID: "msg_x"}, res.Outcome)
	assert.Equal(t, "the response was stopped by a refusal: cyber", res.ErrorMessage)
	assert.Equal(t, 6, res.Usage.TotalTokens, "a refused call still cost its tokens")

	res = anthropic.Provider{}.ParseResponse(createCall, response(200, msg(`null`, "")))
	assert.False(t, res.Finished, "no stop reason: nothing says the message is whole")
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantType  string
		retriable bool
		msg       string
	}{
		{"overloaded, real", 529, string(testdata(t, "error_529_overloaded.json")), record.ErrorOverloaded, true, "Overloaded"},
		{"overloaded under another status", 500, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, record.ErrorOverloaded, true, "Overloaded"},
		{"529 with nothing", 529, ``, record.ErrorOverloaded, true, ""},
		{"rate limit", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your organization's rate limit of 30,000 input tokens per minute (org: 00000000-0000-0000-0000-000000000000, model: claude-sonnet-4-5-20250929)."},"request_id":"req_011CYoCoPHWq14qqYGm4gjg6"}`, record.ErrorRateLimit, true, "This request would exceed"},
		{"auth", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CZj2nd7UkaqeLQV8T7J75"}`, record.ErrorAuth, false, "invalid x-api-key"},
		{"permission", 403, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, record.ErrorPermission, false, "Your API key"},
		{"not found", 404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-9"}}`, record.ErrorNotFound, false, "model: claude-9"},
		{"request too large", 413, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, record.ErrorInvalidRequest, false, "Request exceeds"},
		{"prompt too long", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201234 tokens > 200000 maximum"}}`, record.ErrorContextLength, false, "prompt is too long"},
		{"input and max_tokens over the context", 400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 197451 + 8192 > 200000, decrease input length or `max_tokens` and try again\"}}", record.ErrorContextLength, false, "input length"},
		{"out of credit", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`, record.ErrorQuota, false, "Your credit balance"},
		{"invalid request", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate between \"user\" and \"assistant\""}}`, record.ErrorInvalidRequest, false, "messages: roles"},
		{"billing", 402, `{"type":"error","error":{"type":"billing_error","message":"Your organization has a billing issue."}}`, record.ErrorQuota, false, "Your organization"},
		{"api error", 500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, record.ErrorServer, true, "Internal server error"},
		{"timeout", 504, `{"type":"error","error":{"type":"timeout_error","message":"Request timed out"}}`, record.ErrorTimeout, true, "Request timed out"},
		{"api error does not hide a 529", 529, `{"type":"error","error":{"type":"api_error","message":"Overloaded"}}`, record.ErrorOverloaded, true, "Overloaded"},
		{"vertex quota", 429, `{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.","status":"RESOURCE_EXHAUSTED"}}`, record.ErrorRateLimit, true, "Quota exceeded"},
		{"html 502", 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>cloudflare</body></html>", record.ErrorServer, true, "502 Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := anthropic.Provider{}.ParseResponse(createCall, response(tt.status, []byte(tt.body)))
			assert.Equal(t, tt.wantType, res.Outcome.ErrorType)
			assert.Equal(t, tt.retriable, res.Outcome.Retriable)
			assert.False(t, res.Outcome.OK)
			assert.True(t, strings.HasPrefix(res.ErrorMessage, tt.msg), res.ErrorMessage)
			assert.True(t, res.Finished)
		})
	}

	// An error object in a 200 (some gateways answer so) is no message.
	res := anthropic.Provider{}.ParseResponse(createCall, response(200, testdata(t, "error_529_overloaded.json")))
	assert.Equal(t, record.ErrorOverloaded, res.Outcome.ErrorType)
	assert.Equal(t, "Overloaded", res.ErrorMessage)
}

// A 2xx that is not JSON is nothing the SDK can decode; one that is the
// beginning of a message was cut on its way, as a dropped connection cuts
// it.
func TestParseResponseNotJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		call   *providers.Call
		stream bool
		body   string
		typ    string // "" when ok
	}{
		{"message garbage", createCall, false, "<html>\x00\xff {{{", record.ErrorDecode},
		{"half a message", createCall, false, `{"id":"msg_1","content":[`, record.ErrorTransport},
		{"count garbage", countCall, false, "nope", record.ErrorDecode},
		{"empty", createCall, false, "", ""},
		{"stream garbage", streamCall, true, "<html>\x00\xff {{{", record.ErrorDecode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := anthropic.Provider{}.ParseResponse(tc.call, &providers.Response{StatusCode: 200, Stream: tc.stream, Body: []byte(tc.body)})
			assert.Equal(t, tc.typ == "", res.Outcome.OK, "%+v", res.Outcome)
			assert.Equal(t, tc.typ, res.Outcome.ErrorType)
			assert.False(t, !res.Outcome.OK && res.Finished)
		})
	}
}

func TestResultOutlivesTheBody(t *testing.T) {
	// The recorder reuses capture buffers: nothing in a result may point
	// into the body it was parsed from.
	for _, name := range []string{"message.json", "message_tool_use.json", "stream_text.sse", "stream_tool_use.sse", "stream_error_midstream.sse", "error_529_overloaded.json"} {
		body := testdata(t, name)
		stream := strings.HasSuffix(name, ".sse")
		status := 200
		if strings.HasPrefix(name, "error_") {
			status = 529
		}
		resp := response(status, body)
		resp.Stream = stream
		res := anthropic.Provider{}.ParseResponse(createCall, resp)
		want := anthropic.Provider{}.ParseResponse(createCall, &providers.Response{StatusCode: status, Body: append([]byte(nil), body...), Stream: stream, EOF: true})
		for i := range body {
			body[i] = 'X'
		}
		assert.Equal(t, want, res, name)
	}
}

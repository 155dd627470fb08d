package gemini_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

// testdata returns a captured payload of the repository's shared corpus,
// testdata/providers/gemini/<name> (testdata/README.md says where it came from).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "gemini", name))
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

const hello = `{"contents":[{"parts":[{"text":"Hello"}],"role":"user"}]}`

func TestParseRequest(t *testing.T) {
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
		{"generateContent", request("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent", hello),
			gemini.MethodGenerateContent, "gemini-2.0-flash", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`,
			`{"model":"gemini-2.0-flash"}`, "user", false, nil},
		{"stream with alt=sse", request("POST", "http://127.0.0.1:8080/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", hello),
			gemini.MethodStreamGenerateContent, "gemini-2.5-flash", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`,
			`{"model":"gemini-2.5-flash"}`, "user", true, nil},
		{"v1 and no role", request("POST", "https://generativelanguage.googleapis.com/v1/models/gemini-1.5-pro:generateContent",
			`{"contents":[{"parts":[{"text":"Hi"}]}]}`),
			gemini.MethodGenerateContent, "gemini-1.5-pro", `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`, `{"model":"gemini-1.5-pro"}`, "user", false, nil},
		{"v1alpha countTokens", request("POST", "https://generativelanguage.googleapis.com/v1alpha/models/gemini-2.0-flash:countTokens", hello),
			gemini.MethodCountTokens, "gemini-2.0-flash", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"gemini-2.0-flash"}`, "user", false, nil},
		{"countTokens wrapping a request", request("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:countTokens",
			`{"generateContentRequest":{"model":"models/gemini-2.0-flash","contents":[{"role":"user","parts":[{"text":"a"}]}],"systemInstruction":{"parts":[{"text":"s"}]},"generationConfig":{"temperature":0}}}`),
			gemini.MethodCountTokens, "gemini-2.0-flash",
			`[{"role":"system","parts":[{"type":"text","content":"s"}]},{"role":"user","parts":[{"type":"text","content":"a"}]}]`,
			`{"model":"gemini-2.0-flash","temperature":0}`, "user", false, nil},
		{"tuned model", request("POST", "https://generativelanguage.googleapis.com/v1beta/tunedModels/my-model-x1:generateContent", hello),
			gemini.MethodGenerateContent, "my-model-x1", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"my-model-x1"}`, "user", false, nil},
		{"embedContent", request("POST", "https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:embedContent",
			`{"model":"models/text-embedding-004","content":{"parts":[{"text":"Hello"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"Doc","outputDimensionality":256}`),
			gemini.MethodEmbedContent, "text-embedding-004", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`,
			`{"model":"text-embedding-004","taskType":"RETRIEVAL_DOCUMENT","title":"Doc","outputDimensionality":256}`, "user", false, nil},
		{"batchEmbedContents", request("POST", "https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:batchEmbedContents",
			`{"requests":[{"content":{"parts":[{"text":"Hello"}],"role":"user"},"model":"models/text-embedding-004"},{"content":{"parts":[{"text":"World"}],"role":"user"},"model":"models/text-embedding-004"}]}`),
			gemini.MethodBatchEmbedContents, "text-embedding-004",
			`[{"role":"user","parts":[{"type":"text","content":"Hello"}]},{"role":"user","parts":[{"type":"text","content":"World"}]}]`,
			`{"model":"text-embedding-004"}`, "user", false, nil},
		{"vertex", request("POST", "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.0-flash-001:streamGenerateContent?alt=sse", hello),
			gemini.MethodStreamGenerateContent, "gemini-2.0-flash-001", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`,
			`{"model":"gemini-2.0-flash-001"}`, "user", true, nil},
		{"vertex v1", request("POST", "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:generateContent", hello),
			gemini.MethodGenerateContent, "gemini-2.5-pro", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"gemini-2.5-pro"}`, "user", false, nil},
		{"vertex express", request("POST", "https://aiplatform.googleapis.com/v1beta1/publishers/google/models/gemini-2.0-flash:countTokens", hello),
			gemini.MethodCountTokens, "gemini-2.0-flash", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"gemini-2.0-flash"}`, "user", false, nil},
		{"behind a proxy prefix", request("POST", "https://gateway.example/v1/acct/gw/google-ai-studio/v1beta/models/gemini-2.0-flash:generateContent", hello),
			gemini.MethodGenerateContent, "gemini-2.0-flash", `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"gemini-2.0-flash"}`, "user", false, nil},
		{"system instruction, config, tools", request("POST", "http://127.0.0.1/v1beta/models/gemini-2.0-flash:generateContent",
			`{"cachedContent":"cachedContents/abc","contents":[{"parts":[{"text":"Hello"}],"role":"user"}],"generationConfig":{"maxOutputTokens":100,"stopSequences":["x"],"temperature":0.2,"topP":0.9,"topK":40,"candidateCount":1,"responseMimeType":"application/json","thinkingConfig":{"thinkingBudget":100}},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"systemInstruction":{"parts":[{"text":"Be brief"}],"role":"user"},"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["get_weather"]}},"tools":[{"functionDeclarations":[{"description":"d","name":"get_weather","parameters":{"type":"OBJECT"}},{"name":"now"}]},{"googleSearch":{}},{"codeExecution":{}}],"labels":{"team":"x"}}`),
			gemini.MethodGenerateContent, "gemini-2.0-flash",
			`[{"role":"system","parts":[{"type":"text","content":"Be brief"}]},{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`,
			`{"model":"gemini-2.0-flash","cachedContent":"cachedContents/abc","maxOutputTokens":100,"stopSequences":["x"],"temperature":0.2,"topP":0.9,"topK":40,"candidateCount":1,"responseMimeType":"application/json","thinkingConfig":{"thinkingBudget":100},"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}],"toolConfig":{"mode":"ANY"},"tools":["get_weather","now","googleSearch","codeExecution"]}`,
			"user", false, nil},
		{"snake_case REST spelling", request("POST", "http://127.0.0.1/v1beta/models/gemini-2.0-flash:generateContent",
			`{"system_instruction":{"parts":{"text":"Be brief"}},"contents":[{"role":"user","parts":[{"text":"x"}]}],"generation_config":{"max_output_tokens":10},"tool_config":{"function_calling_config":{"mode":"NONE"}},"tools":[{"function_declarations":[{"name":"f"}]},{"google_search":{}}]}`),
			gemini.MethodGenerateContent, "gemini-2.0-flash",
			`[{"role":"system","parts":[{"type":"text","content":"Be brief"}]},{"role":"user","parts":[{"type":"text","content":"x"}]}]`,
			`{"model":"gemini-2.0-flash","max_output_tokens":10,"toolConfig":{"mode":"NONE"},"tools":["f","google_search"]}`,
			"user", false, nil},
		{"function response is the tool", request("POST", "http://127.0.0.1/v1beta/models/gemini-2.5-flash:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"Days until NYE?"}]},{"role":"model","parts":[{"functionCall":{"name":"now","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"now","response":{"result":"2025-10-26"}}}]}]}`),
			gemini.MethodGenerateContent, "gemini-2.5-flash",
			`[{"role":"user","parts":[{"type":"text","content":"Days until NYE?"}]},{"role":"assistant","parts":[{"type":"tool_call","name":"now"}]},{"role":"tool","parts":[{"type":"tool_call_response","name":"now","content":"{\"result\":\"2025-10-26\"}"}]}]`,
			`{"model":"gemini-2.5-flash"}`, "tool", false, nil},
		{"model continuing", request("POST", "http://127.0.0.1/v1beta/models/m:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]}]}`),
			gemini.MethodGenerateContent, "m", `[{"role":"user","parts":[{"type":"text","content":"a"}]},{"role":"assistant","parts":[{"type":"text","content":"b"}]}]`,
			`{"model":"m"}`, "agent", false, nil},
		{"not JSON", request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", `contents=hi`),
			gemini.MethodGenerateContent, "m", `[]`, `{"model":"m"}`, "", false, nil},
		{"no body", request("POST", "http://127.0.0.1/v1beta/models/m:countTokens", ``),
			gemini.MethodCountTokens, "m", `[]`, `{"model":"m"}`, "", false, nil},
		{"model needing escapes", request("POST", `http://127.0.0.1/v1beta/models/a%22b%5C:generateContent`, hello),
			gemini.MethodGenerateContent, `a"b\`, `[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]`, `{"model":"a\"b\\"}`, "user", false, nil},
		{"cut by the recorder", &providers.Request{Method: "POST", URL: &url.URL{Path: "/v1beta/models/m:generateContent"}, Body: []byte(`{"contents":[`), BodyTruncated: true},
			gemini.MethodGenerateContent, "m", `[]`, `{}`, "", false, []string{"args", "kwargs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ok := gemini.Provider{}.ParseRequest(tt.req)
			require.True(t, ok)
			assert.Equal(t, "gemini", call.Provider)
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

func TestParseRequestUnrecognized(t *testing.T) {
	for _, tt := range []struct{ method, url string }{
		{"GET", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/models"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:predict"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/models/:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/files:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/cachedContents/x:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/models/gemini-2.0-flash:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/beta/models/gemini-2.0-flash:generateContent"},
		{"POST", "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/anthropic/models/claude:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/text-embedding-004:predict"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/endpoints/123:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/projects/p/zones/l/publishers/google/models/m:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/projects//locations/l/publishers/google/models/m:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/projects/p/locations/l/publishers/google/models/m:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/locations/l/publishers/google/models/m:generateContent"},
		{"POST", "https://us-central1-aiplatform.googleapis.com/v1/x/publishers/google/models/m:generateContent"},
		{"POST", "https://api.openai.com/v1/chat/completions"},
		{"POST", "http://127.0.0.1/"},
	} {
		_, ok := gemini.Provider{}.ParseRequest(request(tt.method, tt.url, hello))
		assert.False(t, ok, "%s %s", tt.method, tt.url)
	}
	_, ok := gemini.Provider{}.ParseRequest(&providers.Request{Method: "POST"})
	assert.False(t, ok, "no URL")
}

func TestInlineDataIsElided(t *testing.T) {
	img := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 100)
	body := `{"contents":[{"role":"user","parts":[{"text":"What is this?"},{"inlineData":{"mimeType":"image/png","data":"` + img + `"}}]}]}`
	call, ok := gemini.Provider{}.ParseRequest(request("POST", "http://127.0.0.1/v1beta/models/gemini-2.0-flash:generateContent", body))
	require.True(t, ok)
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"What is this?"},{"type":"media","mime_type":"image/png","size":2400}]}]`, string(call.Args))
	assert.Nil(t, call.Truncated, "media is kept as a reference, its size, not a cut")
	assert.Equal(t, record.SpeakerUser, call.Speaker)

	// A system instruction's inline data too.
	body = `{"systemInstruction":{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"` + img + `"}}]},"contents":[]}`
	call, _ = gemini.Provider{}.ParseRequest(request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", body))
	assert.JSONEq(t, `[{"role":"system","parts":[{"type":"media","mime_type":"application/pdf","size":2400}]}]`, string(call.Args))
}

func TestHugeContentsKeepTheLatestTurns(t *testing.T) {
	var turns []string
	for i := range 2000 {
		turns = append(turns, fmt.Sprintf(`{"role":"user","parts":[{"text":"turn %d %s"}]}`, i, strings.Repeat("x", 200)))
	}
	body := `{"contents":[` + strings.Join(turns, ",") + `]}`
	req := request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", body)
	req.MaxArgs = 200 << 10 // less than the conversation
	call, _ := gemini.Provider{}.ParseRequest(req)
	assert.LessOrEqual(t, len(call.Args), req.MaxArgs)
	req.MaxArgs = 0
	whole, _ := gemini.Provider{}.ParseRequest(req)
	assert.Nil(t, whole.Truncated, "within providers.MaxArgsBytes, kept whole by default")
	assert.Equal(t, []string{"args"}, call.Truncated)
	assert.Contains(t, string(call.Args), "turn 1999 ")
	assert.NotContains(t, string(call.Args), `"turn 0 `)
}

func TestLongParametersAreCut(t *testing.T) {
	schema := `{"type":"OBJECT","description":"` + strings.Repeat("d", 20000) + `"}`
	body := `{"contents":[],"generationConfig":{"temperature":1,"responseSchema":` + schema + `}}`
	call, _ := gemini.Provider{}.ParseRequest(request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", body))
	assert.Equal(t, `{"model":"m","temperature":1,"responseSchema":"…[20034 bytes cut]"}`, string(call.Kwargs))
	assert.Equal(t, []string{"kwargs"}, call.Truncated)

	var many []string
	for i := range 10 {
		many = append(many, fmt.Sprintf(`"p%d":"%s"`, i, strings.Repeat("d", 10000)))
	}
	body = `{"contents":[],"generationConfig":{` + strings.Join(many, ",") + `}}`
	call, _ = gemini.Provider{}.ParseRequest(request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", body))
	assert.Equal(t, `{"model":"m","…":"[kwargs cut]"}`, string(call.Kwargs))
	assert.Equal(t, []string{"kwargs"}, call.Truncated)
}

func TestRequestDoesNotKeepTheBody(t *testing.T) {
	body := []byte(`{"contents":[{"role":"user","parts":[{"text":"Hello"}]}],"generationConfig":{"temperature":0.5}}`)
	req := request("POST", "http://127.0.0.1/v1beta/models/m:generateContent", "")
	req.Body = body
	call, _ := gemini.Provider{}.ParseRequest(req)
	args, kwargs := string(call.Args), string(call.Kwargs)
	for i := range body {
		body[i] = 'X' // the recorder reuses the buffer
	}
	assert.Equal(t, args, string(call.Args))
	assert.Equal(t, kwargs, string(call.Kwargs))
}

// Responses.

var (
	generateCall = &providers.Call{Provider: "gemini", MethodName: gemini.MethodGenerateContent}
	streamCall   = &providers.Call{Provider: "gemini", MethodName: gemini.MethodStreamGenerateContent, Stream: true}
)

func response(status int, body []byte) *providers.Response {
	return &providers.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, EOF: true}
}

func streamResponse(body []byte) *providers.Response {
	return &providers.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Stream: true, EOF: true}
}

func TestParseResponse(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, testdata(t, "gemini_generate_response.json")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", FinishReason: "STOP"}, res.Outcome)
	assert.Equal(t, "gemini-2.0-flash", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 7, OutputTokens: 22, TotalTokens: 29}, res.Usage)
	assert.Equal(t, "Google's headquarters, also known as the Googleplex, is located in **Mountain View, California**.\n", res.Output.Text())
	assert.Empty(t, providertest.Calls(res.Output))
	assert.True(t, res.Finished)
}

func TestParseResponseThinkingFunctionCall(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, testdata(t, "gemini_generate_response_thinking_functioncall.json")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", FinishReason: "STOP", ResponseID: "38CHaLjMG6TujrEPtvTiuQk"}, res.Outcome)
	assert.Equal(t, "gemini-2.5-pro", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 38, OutputTokens: 509, TotalTokens: 547, ReasoningTokens: 501}, res.Usage, "output counts the thoughts: 509 = 8 candidates + 501 thoughts; 547 = 38 + 509")
	assert.Empty(t, res.Output.Text(), "the thought summary is not output")
	assert.True(t, strings.HasPrefix(res.Output.Reasoning(), "**Thinking Through the New Year's Eve Calculation**\n\nOkay, so the user wants to know"), "the thought summary is the reasoning: %q", res.Output.Reasoning())
	assert.True(t, strings.HasSuffix(res.Output.Reasoning(), "I think this will all work.\n"), res.Output.Reasoning())
	assert.Equal(t, []providers.ToolCall{{Name: "now", Arguments: "{}"}}, providertest.Calls(res.Output))
	assert.True(t, res.Finished)
}

func TestParseStream(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "gemini_stream.sse")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", FinishReason: "STOP"}, res.Outcome)
	assert.Equal(t, "gemini-2.0-flash", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 7, OutputTokens: 10, TotalTokens: 17}, res.Usage, "the last cumulative usage, not a sum")
	assert.Equal(t, "The capital of Wyoming is **Cheyenne**.\n", res.Output.Text())
	assert.True(t, res.Finished)
}

func TestParseStreamThinkingFunctionCall(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "gemini_stream_thinking_functioncall.sse")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", FinishReason: "STOP", ResponseID: "48SHaPHpHKbG-8YPtZCawAk"}, res.Outcome)
	assert.Equal(t, "gemini-2.5-flash", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 38, OutputTokens: 174, TotalTokens: 212, ReasoningTokens: 168}, res.Usage)
	assert.Empty(t, res.Output.Text(), "two thought chunks, no text")
	// The two thought chunks, put together.
	assert.True(t, strings.HasPrefix(res.Output.Reasoning(), "**Calculating the Days**\n\nI've determined the user's request"), res.Output.Reasoning())
	assert.Contains(t, res.Output.Reasoning(), "calculation to find the time difference.\n\n\n**Determining the Approach**\n\nI'm now zeroing in on the best method.")
	assert.Equal(t, []providers.ToolCall{{Name: "now", Arguments: "{}"}}, providertest.Calls(res.Output))
	assert.True(t, res.Finished)
}

func TestParseStreamErrorMidstream(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "gemini_stream_error_midstream.sse")))
	assert.Equal(t, record.StatusCanceled, res.Outcome.Status)
	assert.Equal(t, record.ErrorCanceled, res.Outcome.ErrorType, "499 CANCELLED")
	assert.False(t, res.Outcome.OK)
	assert.False(t, res.Outcome.Retriable)
	assert.Equal(t, "The operation was cancelled.", res.ErrorMessage)
	assert.Equal(t, "First Second ", res.Output.Text(), "what came before the error")
	assert.True(t, res.Finished)

	// The same error as a data: event, and one with no code.
	body := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\n\n" +
		"data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"never read\"}]},\"finishReason\":\"STOP\"}]}\n\n"
	res = gemini.Provider{}.ParseResponse(streamCall, streamResponse([]byte(body)))
	assert.Equal(t, record.Failure(record.ErrorOverloaded), res.Outcome)
	assert.Equal(t, "The model is overloaded.", res.ErrorMessage)
	assert.Equal(t, "a", res.Output.Text())

	res = gemini.Provider{}.ParseResponse(streamCall, streamResponse([]byte("data: {\"error\":{\"message\":\"boom\"}}\n\n")))
	assert.Equal(t, record.Failure(record.ErrorServer), res.Outcome)
	assert.Equal(t, "boom", res.ErrorMessage)
}

func TestParseResponseErrors(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(generateCall, response(429, testdata(t, "gemini_error.json")))
	assert.Equal(t, record.Failure(record.ErrorRateLimit), res.Outcome)
	assert.True(t, res.Outcome.Retriable)
	assert.True(t, strings.HasPrefix(res.ErrorMessage, "Quota exceeded for quota metric 'Generate Content API requests per minute'"), res.ErrorMessage)
	assert.True(t, res.Finished)

	res = gemini.Provider{}.ParseResponse(generateCall, response(400, testdata(t, "gemini_error_400_api_key.json")))
	assert.Equal(t, record.Failure(record.ErrorAuth), res.Outcome, "INVALID_ARGUMENT with API_KEY_INVALID")
	assert.Equal(t, "API key not valid. Please pass a valid API key.", res.ErrorMessage)

	for _, tt := range []struct {
		status           int
		errorType        string
		grpcStatus, text string
	}{
		{503, record.ErrorOverloaded, "UNAVAILABLE", "The model is overloaded. Please try again later."},
		{403, record.ErrorPermission, "PERMISSION_DENIED", "Permission denied on resource project p."},
		{401, record.ErrorAuth, "UNAUTHENTICATED", "Request had invalid authentication credentials."},
		{504, record.ErrorTimeout, "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."},
		{499, record.ErrorCanceled, "CANCELLED", "The operation was cancelled."},
		{404, record.ErrorNotFound, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta"},
		{500, record.ErrorServer, "INTERNAL", "An internal error has occurred."},
		{400, record.ErrorInvalidRequest, "INVALID_ARGUMENT", "Invalid JSON payload received."},
	} {
		body := fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q}}`, tt.status, tt.text, tt.grpcStatus)
		res := gemini.Provider{}.ParseResponse(generateCall, response(tt.status, []byte(body)))
		assert.Equal(t, record.Failure(tt.errorType), res.Outcome, tt.grpcStatus)
		assert.Equal(t, tt.text, res.ErrorMessage)
	}

	// streamGenerateContent wraps its errors in an array; this one, a
	// context overflow, is as reported in google-gemini/gemini-cli#6678.
	overflow := `[{
    "error": {
      "code": 400,
      "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
      "errors": [
        {
          "message": "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
          "domain": "global",
          "reason": "badRequest"
        }
      ],
      "status": "INVALID_ARGUMENT"
    }
  }
  ]`
	res = gemini.Provider{}.ParseResponse(streamCall, response(400, []byte(overflow)))
	assert.Equal(t, record.Failure(record.ErrorContextLength), res.Outcome)
	assert.Equal(t, "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", res.ErrorMessage)

	res = gemini.Provider{}.ParseResponse(streamCall, response(429, []byte(`[{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}]`)))
	assert.Equal(t, record.Failure(record.ErrorRateLimit), res.Outcome)
	assert.Equal(t, "slow down", res.ErrorMessage)

	res = gemini.Provider{}.ParseResponse(generateCall, nil)
	assert.True(t, res.Outcome.OK, "no response to read")
}

func TestParseResponseBlocked(t *testing.T) {
	safety := `{"candidates":[{"content":{"parts":[{"text":"I was say"}],"role":"model"},"finishReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"totalTokenCount":12},"modelVersion":"gemini-2.0-flash","responseId":"r-9"}`
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(safety)))
	want := record.Failure(record.ErrorContentFilter)
	want.FinishReason, want.ResponseID = "SAFETY", "r-9"
	assert.Equal(t, want, res.Outcome)
	assert.Equal(t, "blocked: SAFETY", res.ErrorMessage)
	assert.Equal(t, "gemini-2.0-flash", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 9, OutputTokens: 3, TotalTokens: 12}, res.Usage)
	assert.True(t, res.Finished)

	for _, reason := range []string{"RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"} {
		res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(`{"candidates":[{"finishReason":"`+reason+`"}]}`)))
		assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType, reason)
		assert.Equal(t, "blocked: "+reason, res.ErrorMessage)
	}
	for _, reason := range []string{"STOP", "MAX_TOKENS", "MALFORMED_FUNCTION_CALL", "OTHER"} {
		res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(`{"candidates":[{"finishReason":"`+reason+`"}]}`)))
		assert.True(t, res.Outcome.OK, reason)
		assert.Equal(t, reason, res.Outcome.FinishReason)
	}

	prompt := `{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT","blockReasonMessage":"The prompt was blocked.","safetyRatings":[]},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4},"modelVersion":"gemini-2.0-flash","responseId":"r-10"}`
	res = gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(prompt)))
	want = record.Failure(record.ErrorContentFilter)
	want.ResponseID = "r-10"
	assert.Equal(t, want, res.Outcome)
	assert.Equal(t, "prompt blocked: PROHIBITED_CONTENT (The prompt was blocked.)", res.ErrorMessage)
	assert.Equal(t, &record.Usage{InputTokens: 4, TotalTokens: 4}, res.Usage)
	assert.True(t, res.Finished)

	// In a stream, the block comes as the only chunk.
	res = gemini.Provider{}.ParseResponse(streamCall, streamResponse([]byte("data: "+`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}`+"\r\n\r\n")))
	assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType)
	assert.Equal(t, "prompt blocked: SAFETY", res.ErrorMessage)
	assert.True(t, res.Finished)
}

// Clients of the older generative-ai-go REST client ask for
// enum-encoding=int: every enum the parser reads arrives as a number.
func TestEnumsAsNumbers(t *testing.T) {
	p := gemini.Provider{}
	for _, tt := range []struct {
		body       string
		ok         bool
		typ        string
		reason     string
		errMessage string
	}{
		{`{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":1}]}`, true, "", "STOP", ""},
		{`{"candidates":[{"finishReason":2}]}`, true, "", "MAX_TOKENS", ""},
		{`{"candidates":[{"finishReason":3}]}`, false, record.ErrorContentFilter, "SAFETY", "blocked: SAFETY"},
		{`{"candidates":[{"finishReason":4}]}`, false, record.ErrorContentFilter, "RECITATION", "blocked: RECITATION"},
		{`{"candidates":[{"finishReason":5}]}`, true, "", "OTHER", ""},
		{`{"candidates":[{"finishReason":8}]}`, false, record.ErrorContentFilter, "PROHIBITED_CONTENT", "blocked: PROHIBITED_CONTENT"},
		{`{"candidates":[{"finishReason":99}]}`, true, "", "99", ""},
		{`{"promptFeedback":{"blockReason":1}}`, false, record.ErrorContentFilter, "", "prompt blocked: SAFETY"},
		{`{"promptFeedback":{"blockReason":4}}`, false, record.ErrorContentFilter, "", "prompt blocked: PROHIBITED_CONTENT"},
	} {
		res := p.ParseResponse(generateCall, response(200, []byte(tt.body)))
		assert.Equal(t, tt.ok, res.Outcome.OK, tt.body)
		assert.Equal(t, tt.typ, res.Outcome.ErrorType, tt.body)
		assert.Equal(t, tt.reason, res.Outcome.FinishReason, tt.body)
		assert.Equal(t, tt.errMessage, res.ErrorMessage, tt.body)
	}

	// A stream in the int encoding ends with a numeric finish reason, and a
	// long one keeps it in its tail.
	stream := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"}}]}\r\n\r\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" there\"}],\"role\":\"model\"},\"finishReason\":1}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2,\"totalTokenCount\":5}}\r\n\r\n"
	res := p.ParseResponse(streamCall, streamResponse([]byte(stream)))
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "STOP", res.Outcome.FinishReason)
	resp := response(200, []byte(`{"candidates":[{"content":{"parts":[{"text":"`))
	resp.Truncated, resp.Tail = true, []byte(`xx"}]},"finishReason":3}],"modelVersion":"gemini-2.0-flash"}`)
	res = p.ParseResponse(generateCall, resp)
	assert.Equal(t, record.ErrorContentFilter, res.Outcome.ErrorType, "a cut body's tail is read in both encodings too")
}

// A stream has no end marker but its last chunk's finish reason: one that
// ends without it did not finish.
func TestStreamWithoutFinishReasonIsIncomplete(t *testing.T) {
	full := testdata(t, "gemini_stream.sse")
	last := bytes.LastIndex(full, []byte("data: "))
	res := gemini.Provider{}.ParseResponse(streamCall, streamResponse(full[:last]))
	assert.False(t, res.Outcome.OK)
	assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType)
	assert.Equal(t, "the stream ended without a finish reason", res.ErrorMessage)

	resp := streamResponse(full[:last])
	resp.EOF = false // closed by the caller: the middleware decides
	assert.True(t, gemini.Provider{}.ParseResponse(streamCall, resp).Outcome.OK)

	assert.True(t, gemini.Provider{}.ParseResponse(streamCall, streamResponse(full)).Outcome.OK)
}

func TestParseResponseOtherMethods(t *testing.T) {
	p := gemini.Provider{}
	for _, tt := range []struct {
		method, body, class string
	}{
		{gemini.MethodCountTokens, `{"totalTokens":31,"promptTokensDetails":[{"modality":"TEXT","tokenCount":31}]}`, "count_tokens_response"},
		{gemini.MethodEmbedContent, `{"embedding":{"values":[0.1,-0.2,0.3]}}`, "embed_content_response"},
		{gemini.MethodBatchEmbedContents, `{"embeddings":[{"values":[0.1]},{"values":[0.2]}]}`, "batch_embed_contents_response"},
	} {
		res := p.ParseResponse(&providers.Call{MethodName: tt.method}, response(200, []byte(tt.body)))
		assert.Equal(t, record.Success(tt.class), res.Outcome)
		assert.Nil(t, res.Usage, "a count is not a use")
		assert.True(t, res.Finished, "whole JSON is the end")

		res = p.ParseResponse(&providers.Call{MethodName: tt.method}, response(200, []byte(tt.body[:10])))
		assert.Equal(t, record.Failure(record.ErrorTransport), res.Outcome, "half a JSON document was cut on its way, as a dropped connection cuts it")
		assert.False(t, res.Finished)
	}
}

func TestParseResponseUnreadable(t *testing.T) {
	// JSON of an unexpected shape, or nothing: the call worked as far as
	// the wire tells.
	for _, body := range []string{``, `42`, `"s"`, `{"candidates":"x","usageMetadata":7}`} {
		res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(body)))
		assert.True(t, res.Outcome.OK, body)
		assert.Equal(t, "generate_content_response", res.Outcome.ValueClass)
		assert.Empty(t, res.ErrorMessage)
		assert.Nil(t, res.Usage)
	}
	// Bytes that are not JSON: genai fails to decode them, and so does the
	// record.
	for _, body := range []string{`not json`, `<html>`, "\x00\xff garbage"} {
		res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(body)))
		assert.False(t, res.Outcome.OK, body)
		assert.Equal(t, record.ErrorDecode, res.Outcome.ErrorType, body)
		assert.Contains(t, res.ErrorMessage, "not JSON")
		assert.NotContains(t, res.ErrorMessage, body, "the body is not quoted")
	}
	// The beginning of a document, ended: cut on the way, as a dropped
	// connection cuts it.
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(`{"candidates":[`)))
	assert.Equal(t, record.ErrorTransport, res.Outcome.ErrorType)
	assert.Equal(t, "the response ended before its JSON did (15 bytes)", res.ErrorMessage)
}

func TestTotalIsSummedWhenAbsent(t *testing.T) {
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(
		`{"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":2,"thoughtsTokenCount":5,"cachedContentTokenCount":8}}`)))
	assert.Equal(t, &record.Usage{InputTokens: 10, OutputTokens: 7, ReasoningTokens: 5, CachedTokens: 8, TotalTokens: 17}, res.Usage)
}

func TestTruncatedStreamKeepsTheFinalUsage(t *testing.T) {
	// A long stream: many text chunks, then the final one with usage.
	b := testdata(t, "gemini_stream.sse")
	chunks := bytes.SplitAfter(b, []byte("\r\n\r\n"))
	var long []byte
	for range 200 {
		long = append(long, chunks[1]...)
	}
	long = append(append(append([]byte(nil), chunks[0]...), long...), chunks[2]...)
	for _, cut := range []int{1000, 1001, 1500, len(long) - 1500} {
		resp := streamResponse(long[:cut])
		resp.Tail, resp.Truncated = long[len(long)-1200:], true
		res := gemini.Provider{}.ParseResponse(streamCall, resp)
		require.NotNil(t, res.Usage, "cut at %d", cut)
		assert.Equal(t, 17, res.Usage.TotalTokens)
		assert.Equal(t, "STOP", res.Outcome.FinishReason)
		assert.True(t, res.Finished)
		assert.True(t, strings.HasPrefix(res.Output.Text(), "The capital of Wyoming"), res.Output.Text())
		assert.True(t, strings.HasSuffix(res.Output.Text(), " is **Cheyenne**.\n"), res.Output.Text())
	}

	// With LF frames, too.
	lf := bytes.ReplaceAll(long, []byte("\r\n"), []byte("\n"))
	resp := streamResponse(lf[:777])
	resp.Tail, resp.Truncated = lf[len(lf)-1000:], true
	res := gemini.Provider{}.ParseResponse(streamCall, resp)
	require.NotNil(t, res.Usage)
	assert.Equal(t, 17, res.Usage.TotalTokens)
}

func TestTruncatedResponseReadsItsTail(t *testing.T) {
	// An image answer longer than the capture: usage, model, id and finish
	// reason follow the content.
	img := strings.Repeat("iVBORw0KGgoAAAANSUhEUgAA", 5000)
	body := []byte(`{
  "candidates": [
    {
      "content": {"parts": [{"inlineData": {"mimeType": "image/png", "data": "` + img + `"}}], "role": "model"},
      "finishReason": "STOP",
      "index": 0
    }
  ],
  "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 1290, "totalTokenCount": 1302,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}]},
  "modelVersion": "gemini-2.5-flash-image",
  "responseId": "img-1"
}`)
	resp := response(200, body[:4096])
	resp.Tail, resp.Truncated = body[len(body)-2048:], true
	res := gemini.Provider{}.ParseResponse(generateCall, resp)
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "generate_content_response", FinishReason: "STOP", ResponseID: "img-1"}, res.Outcome)
	assert.Equal(t, "gemini-2.5-flash-image", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 12, OutputTokens: 1290, TotalTokens: 1302}, res.Usage)
	assert.True(t, res.Finished)

	// A tail cut inside the usage gives what is whole.
	resp.Tail = body[len(body)-170:]
	res = gemini.Provider{}.ParseResponse(generateCall, resp)
	assert.True(t, res.Outcome.OK)
	assert.Nil(t, res.Usage)
	assert.Equal(t, "gemini-2.5-flash-image", res.Model)
}

func TestJSONArrayStream(t *testing.T) {
	// streamGenerateContent without alt=sse answers with a JSON array.
	body := `[{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":3},"modelVersion":"gemini-2.0-flash"}
,
{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5},"modelVersion":"gemini-2.0-flash"}
]`
	resp := response(200, []byte(body))
	resp.Stream = true
	res := gemini.Provider{}.ParseResponse(streamCall, resp)
	assert.Equal(t, "Hello", res.Output.Text())
	assert.Equal(t, 5, res.Usage.TotalTokens)
	assert.True(t, res.Finished)

	resp.Body, resp.Tail, resp.Truncated = []byte(body[:100]), []byte(body[100:]), true
	res = gemini.Provider{}.ParseResponse(streamCall, resp)
	assert.Equal(t, 5, res.Usage.TotalTokens, "from the tail")
	assert.Equal(t, "STOP", res.Outcome.FinishReason)
}

func TestOnlyTheFirstCandidate(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[{"text":"one"},{"text":"thinking","thought":true},{"functionCall":{"id":"c1","name":"f","args":{"x":1}}},{"text":" more"}]},"finishReason":"STOP"},{"index":1,"content":{"parts":[{"text":"two"}]},"finishReason":"SAFETY"}]}`
	res := gemini.Provider{}.ParseResponse(generateCall, response(200, []byte(body)))
	assert.Equal(t, "one more", res.Output.Text())
	assert.Equal(t, []providers.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":1}`}}, providertest.Calls(res.Output))
	assert.True(t, res.Outcome.OK, "the second candidate's SAFETY is not the answer's")

	// In a stream, chunks of candidate 1 are left out.
	stream := "data: {\"candidates\":[{\"index\":1,\"content\":{\"parts\":[{\"text\":\"B\"}]}}]}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"A\"}]},\"finishReason\":\"STOP\"}]}\n\n"
	res = gemini.Provider{}.ParseResponse(streamCall, streamResponse([]byte(stream)))
	assert.Equal(t, "A", res.Output.Text())
}

func TestResponseDoesNotKeepTheBody(t *testing.T) {
	for _, name := range []string{"gemini_generate_response_thinking_functioncall.json", "gemini_stream_thinking_functioncall.sse", "gemini_stream_error_midstream.sse"} {
		body := testdata(t, name)
		resp := response(200, body)
		resp.Stream = strings.HasSuffix(name, ".sse")
		res := gemini.Provider{}.ParseResponse(streamCall, resp)
		want := describe(res)
		for i := range body {
			body[i] = 'X' // the recorder reuses the buffer
		}
		assert.Equal(t, want, describe(res), name)
	}
}

func describe(res providers.Result) string {
	s := fmt.Sprintf("%+v", res)
	if res.Usage != nil {
		s += fmt.Sprintf(" %+v", *res.Usage)
	}
	return s
}

// With a buffer lent for the text, the result is the same, and owns its
// text: the lent buffer is the recorder's to reuse.
func TestScratchGivesTheSameResult(t *testing.T) {
	for name, tc := range map[string]struct {
		call *providers.Call
		resp func([]byte) *providers.Response
	}{
		"gemini_generate_response.json": {generateCall, func(b []byte) *providers.Response { return response(200, b) }},
		"gemini_stream.sse":             {streamCall, streamResponse},
	} {
		body := testdata(t, name)
		want := gemini.Provider{}.ParseResponse(tc.call, tc.resp(body))
		require.NotEmpty(t, want.Output, name)
		scratch := make([]byte, 0, 4) // too small: grown
		resp := tc.resp(body)
		resp.Scratch = &scratch
		got := gemini.Provider{}.ParseResponse(tc.call, resp)
		assert.Equal(t, want, got, name)
		// The result owns its text: the recorder reuses the lent buffer.
		scratch = scratch[:cap(scratch)]
		for i := range scratch {
			scratch[i] = 'x'
		}
		assert.Equal(t, want, got, "%s: the result points into the lent buffer", name)
	}
}

package generic_test

import (
	"encoding/json"
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
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/record"
)

func request(method, rawURL, body string) *providers.Request {
	u, _ := url.Parse(rawURL)
	return &providers.Request{Method: method, URL: u, Header: http.Header{}, Body: []byte(body)}
}

func TestParseRequest(t *testing.T) {
	p := generic.Provider{}
	tests := []struct {
		name                      string
		req                       *providers.Request
		method, args, kwargs, spk string
		model                     string
		stream                    bool
		truncated                 []string
	}{
		{"chat", request("POST", "http://x/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],"n":2}`),
			"http.POST /v1/chat/completions", `[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`, `{"model":"m","stream":true,"n":2}`, "user", "m", true, nil},
		{"gemini contents", request("POST", "http://x/v1beta/models/g:generateContent", `{"contents":[{"role":"model","parts":[]}],"generationConfig":{"temperature":1}}`),
			"http.POST /v1beta/models/g:generateContent", `[{"role":"assistant","parts":[]}]`, `{"generationConfig":{"temperature":1}}`, "agent", "", false, nil},
		{"array body", request("POST", "http://x/batch", `[1,2]`), "http.POST /batch", `[{"role":"user","parts":[{"type":"other","name":"element","data":1}]},{"role":"user","parts":[{"type":"other","name":"element","data":2}]}]`, `{}`, "", "", false, nil},
		{"no body", request("GET", "http://x/v1/models", ``), "http.GET /v1/models", `[]`, `{}`, "", "", false, nil},
		{"not json", request("POST", "http://x/upload", `a=b`), "http.POST /upload", `[]`, `{}`, "", "", false, nil},
		{"no path", request("GET", "http://x", ``), "http.GET /", `[]`, `{}`, "", "", false, nil},
		{"cut body", &providers.Request{Method: "POST", URL: &url.URL{Path: "/p"}, Body: []byte(`{"messages":[`), BodyTruncated: true},
			"http.POST /p", `[]`, `{}`, "", "", false, []string{"args", "kwargs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, ok := p.ParseRequest(tt.req)
			require.True(t, ok)
			assert.Equal(t, "http", call.Provider)
			assert.Equal(t, tt.method, call.MethodName)
			assert.JSONEq(t, tt.args, string(call.Args))
			assert.JSONEq(t, tt.kwargs, string(call.Kwargs))
			assert.Equal(t, tt.spk, call.Speaker)
			assert.Equal(t, tt.model, call.Model)
			assert.Equal(t, tt.stream, call.Stream)
			assert.Equal(t, tt.truncated, call.Truncated)
		})
	}
}

func TestHugeConversationKeepsTheLatestTurns(t *testing.T) {
	var msgs []string
	for i := range 2000 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d %s"}`, i, strings.Repeat("x", 200)))
	}
	req := request("POST", "http://x/c", `{"messages":[`+strings.Join(msgs, ",")+`]}`)
	req.MaxArgs = 200 << 10 // less than the conversation
	call, _ := generic.Provider{}.ParseRequest(req)
	assert.LessOrEqual(t, len(call.Args), req.MaxArgs)
	req.MaxArgs = 0
	whole, _ := generic.Provider{}.ParseRequest(req)
	assert.Nil(t, whole.Truncated, "within providers.MaxArgsBytes, kept whole by default")
	assert.Equal(t, []string{"args"}, call.Truncated)
	assert.Contains(t, string(call.Args), "turn 1999 ")
	assert.NotContains(t, string(call.Args), `"turn 0 `)
}

func response(status int, ct, body string) *providers.Response {
	return &providers.Response{StatusCode: status, ContentType: ct, Header: http.Header{"Content-Type": {ct}}, Body: []byte(body), EOF: true}
}

func TestParseResponse(t *testing.T) {
	p := generic.Provider{}
	call := &providers.Call{}

	res := p.ParseResponse(call, response(200, "application/json", `{"id":"r1","object":"response","model":"m2","usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "response", ResponseID: "r1"}, res.Outcome)
	assert.Equal(t, "m2", res.Model)
	assert.Equal(t, &record.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, res.Usage)
	assert.True(t, res.Finished)

	res = p.ParseResponse(call, response(200, "application/json", `{"candidates":[],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":9,"thoughtsTokenCount":2},"modelVersion":"g"}`))
	assert.Equal(t, "json", res.Outcome.ValueClass)
	assert.Equal(t, &record.Usage{InputTokens: 5, OutputTokens: 4, TotalTokens: 9, ReasoningTokens: 2}, res.Usage, "output counts the thoughts")
	assert.Equal(t, "g", res.Model)

	// Cached and reasoning tokens are kept, as the named providers keep them.
	res = p.ParseResponse(call, response(200, "application/json", `{"id":"x","usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":20}}}`))
	assert.Equal(t, &record.Usage{InputTokens: 100, OutputTokens: 30, TotalTokens: 130, CachedTokens: 64, ReasoningTokens: 20}, res.Usage)

	res = p.ParseResponse(call, response(200, "text/plain", `hello`))
	assert.Equal(t, "text", res.Outcome.ValueClass)
	assert.False(t, res.Finished)

	// A body that says it is JSON and is not: no client can decode it.
	res = p.ParseResponse(call, response(200, "application/json; charset=utf-8", `<html>oops`))
	assert.Equal(t, record.ErrorDecode, res.Outcome.ErrorType)
	cut := response(200, "application/json", `{"id":"r1","obj`)
	cut.EOF = false // the caller closed it half way: the middleware decides
	assert.True(t, p.ParseResponse(call, cut).Outcome.OK)

	res = p.ParseResponse(call, response(429, "application/json", `{"error":{"message":"slow","code":"rate_limit_exceeded"}}`))
	assert.Equal(t, record.Failure(record.ErrorRateLimit), res.Outcome)
	assert.Equal(t, "slow", res.ErrorMessage)
}

func TestParseStream(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", "openai", "openai_chat_stream.sse"))
	require.NoError(t, err)
	resp := response(200, "text/event-stream", string(b))
	resp.Stream = true
	res := generic.Provider{}.ParseResponse(&providers.Call{Stream: true}, resp)
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "stream", res.Outcome.ValueClass)
	assert.True(t, res.Finished, "[DONE] seen")
	require.NotNil(t, res.Usage)
	assert.Equal(t, 60, res.Usage.TotalTokens, "the usage chunk at the end")

	// The same stream cut after its head: the tail still has the usage.
	resp.Body, resp.Tail, resp.Truncated = b[:300], b[len(b)-1500:], true
	res = generic.Provider{}.ParseResponse(&providers.Call{Stream: true}, resp)
	require.NotNil(t, res.Usage)
	assert.Equal(t, 60, res.Usage.TotalTokens)
}

func FuzzGeneric(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"tool"}]}`), []byte(`{"usage":{"prompt_tokens":1}}`), 200, false)
	f.Add([]byte(`[`), []byte("data: {\"x\":1}\n\ndata: [DONE]\n\n"), 200, true)
	f.Add([]byte(`{"contents":"x"}`), []byte(`{"error":"x"}`), 500, false)
	f.Fuzz(func(t *testing.T, reqBody, respBody []byte, status int, stream bool) {
		p := generic.Provider{}
		call, ok := p.ParseRequest(request("POST", "http://x/y", string(reqBody)))
		if !ok || !json.Valid(call.Args) || !json.Valid(call.Kwargs) || call.Args[0] != '[' || call.Kwargs[0] != '{' {
			t.Fatalf("bad call from %q: %+v", reqBody, call)
		}
		res := p.ParseResponse(&call, &providers.Response{StatusCode: status, Header: http.Header{}, Body: respBody, Stream: stream, Tail: respBody, Truncated: stream})
		if res.Outcome.Status == "" {
			t.Fatal("no outcome")
		}
	})
}

func ExampleProvider() {
	call, _ := generic.Provider{}.ParseRequest(&providers.Request{
		Method: "POST", URL: &url.URL{Path: "/v1/rerank"},
		Body: []byte(`{"model":"rerank-1","query":"q","messages":[{"role":"user","content":"hi"}]}`),
	})
	fmt.Println(call.MethodName, call.Model, call.Speaker)
	fmt.Println(string(call.Args), string(call.Kwargs))
	// Output:
	// http.POST /v1/rerank rerank-1 user
	// [{"role":"user","parts":[{"type":"text","content":"hi"}]}] {"model":"rerank-1","query":"q"}
}

package bedrock_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/bedrock"
)

var methods = []string{bedrock.MethodConverse, bedrock.MethodConverseStream, bedrock.MethodInvokeModel, bedrock.MethodInvokeModelStream}

func FuzzParseRequest(f *testing.F) {
	for _, name := range []string{"request_converse.json", "request_invoke_anthropic_tools.json"} {
		b := testdata(f, name)
		f.Add("/model/us.anthropic.claude-sonnet-4-6/converse", b, false)
		f.Add("/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke", b, false)
	}
	f.Add("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x/converse-stream", []byte(`{"system":"s","messages":[{"role":"user","content":[{"toolResult":{}},{"cachePoint":{}}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"n"}},{"systemTool":{"name":"s"}}]}}`), false)
	f.Add("/model/meta.llama3-8b-instruct-v1%3A0/invoke-with-response-stream", []byte(`{"prompt":"hi","max_gen_len":5,"texts":["a"],"system":[{"text":"s"}],"messages":"x"}`), false)
	f.Add("/model/%zz/invoke", []byte(`{"anthropic_version":1}`), true)
	f.Fuzz(func(t *testing.T, path string, body []byte, cut bool) {
		u := &url.URL{Path: path}
		if p, err := url.PathUnescape(path); err == nil {
			u = &url.URL{Path: p, RawPath: path}
		}
		req := &providers.Request{Method: "POST", URL: u, Header: http.Header{}, Body: body, BodyTruncated: cut}
		orig := bytes.Clone(body)
		call, ok := bedrock.Provider{}.ParseRequest(req)
		if !bytes.Equal(orig, body) {
			t.Fatal("the body was modified")
		}
		if !ok {
			return
		}
		if !json.Valid(call.Args) || call.Args[0] != '[' {
			t.Fatalf("args not an array: %q from %q", call.Args, body)
		}
		if !json.Valid(call.Kwargs) || call.Kwargs[0] != '{' {
			t.Fatalf("kwargs not an object: %q from %q", call.Kwargs, body)
		}
		if len(call.Args) > providers.MaxArgsBytes || len(call.Kwargs) > providers.MaxKwargsBytes {
			t.Fatalf("over the limits: %d, %d", len(call.Args), len(call.Kwargs))
		}
		if call.Provider != "bedrock" || call.Model == "" {
			t.Fatalf("call %+v", call)
		}
	})
}

// FuzzParseResponse feeds any body to every operation, whole or cut into
// a head and a tail, as an error or a success.
func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"converse.json", "converse_tool_use_cache_write.json", "invoke_anthropic_tool_use.json"} {
		b := testdata(f, name)
		f.Add(b, 200, 0)
		f.Add(b, 200, len(b)/2)
	}
	stream := frames(f, jsonlEvents(f, "converse_stream_tool_use.jsonl"))
	f.Add(stream, 200, 0)
	f.Add(stream, 200, len(stream)/3)
	sse := anthropicPayload(f, "stream_tool_use.sse")
	chunks := claudeChunks(f, sse)
	f.Add(chunks, 200, 0)
	f.Add(chunks, 200, len(chunks)/2)
	f.Add(append(frames(f, jsonlEvents(f, "converse_stream_tool_use.jsonl")[:2]), exceptionFrame(f, "modelStreamErrorException", "boom")...), 200, 0)
	f.Add([]byte(`{"message":"Input is too long for requested model."}`), 400, 0)
	f.Add([]byte(`{"generation":"x","prompt_token_count":1e400,"results":[{"tokenCount":-1}],"amazon-bedrock-invocationMetrics":{}}`), 200, 0)
	f.Fuzz(func(t *testing.T, body []byte, status int, cut int) {
		for _, method := range methods {
			for _, kw := range []string{`{"model":"m"}`, `{"model":"anthropic.m","anthropic_version":"bedrock-2023-05-31"}`} {
				resp := &providers.Response{StatusCode: status, Body: body, Stream: method == bedrock.MethodConverseStream || method == bedrock.MethodInvokeModelStream, EOF: cut%2 == 0}
				if cut > 0 && cut < len(body) {
					resp.Body, resp.Tail, resp.Truncated = body[:cut], body[cut:], true
				}
				orig := bytes.Clone(body)
				res := bedrock.Provider{}.ParseResponse(&providers.Call{MethodName: method, Kwargs: json.RawMessage(kw), Model: "m"}, resp)
				if !bytes.Equal(orig, body) {
					t.Fatal("the body was modified")
				}
				if res.Outcome.Status == "" || res.Outcome.OK == (res.Outcome.ErrorType != "") {
					t.Fatalf("outcome %+v", res.Outcome)
				}
				if status >= 400 && res.Outcome.OK {
					t.Fatalf("status %d is ok", status)
				}
				if u := res.Usage; u != nil && u.TotalTokens != u.InputTokens+u.OutputTokens {
					t.Fatalf("usage %+v", *u)
				}
				if resp.Stream && status < 400 && resp.EOF && !resp.Truncated && res.Outcome.OK && !res.Finished {
					t.Fatalf("a stream read to its end without its end is ok: %q", body)
				}
			}
		}
	})
}

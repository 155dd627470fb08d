package anthropic_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
)

func FuzzParseRequest(f *testing.F) {
	for _, name := range []string{"request_message.json", "request_tools.json", "request_tool_result.json", "request_stream_thinking.json"} {
		f.Add("/v1/messages", testdata(f, name), false)
	}
	f.Add("/v1/messages/count_tokens", []byte(`{"system":[{"type":"text","text":"s"}],"messages":"x","tools":{"name":1}}`), false)
	f.Add("/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:streamRawPredict", []byte(`{"anthropic_version":"vertex-2023-10-16","messages":[{"role":"user","content":[{"type":"tool_result"}]}],"mcp_servers":[{"name":"n","authorization_token":"t"}],"output_config":{"format":[]}}`), false)
	f.Add("/v1/projects/p/locations/l/publishers/anthropic/models/\"\x00:rawPredict", []byte(`not json`), false)
	f.Add("/v1/messages", []byte(`{"messages":[{"role":"user","content":[{"type":"image","source":{"data":"`+longBase64+`"}}]}]}`), true)
	f.Fuzz(func(t *testing.T, path string, body []byte, cut bool) {
		req := &providers.Request{Method: "POST", URL: &url.URL{Path: path}, Header: http.Header{}, Body: body, BodyTruncated: cut}
		call, ok := anthropic.Provider{}.ParseRequest(req)
		if !ok {
			return
		}
		if !json.Valid(call.Args) || call.Args[0] != '[' {
			t.Fatalf("args not an array: %q from %q", call.Args, body)
		}
		if !json.Valid(call.Kwargs) || call.Kwargs[0] != '{' {
			t.Fatalf("kwargs not an object: %q from %q %q", call.Kwargs, path, body)
		}
		if len(call.Args) > providers.MaxArgsBytes || len(call.Kwargs) > providers.MaxKwargsBytes {
			t.Fatalf("over the limits: %d, %d", len(call.Args), len(call.Kwargs))
		}
		if call.MethodName != anthropic.MethodCreate && call.MethodName != anthropic.MethodCountTokens {
			t.Fatalf("method %q", call.MethodName)
		}
	})
}

const longBase64 = "iVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAA"

// FuzzParseResponse feeds any body, as a message, a count, a stream, an
// error, whole or cut into head and tail.
func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"message.json", "message_tool_use.json", "message_thinking.json", "message_thinking_tool_use.json", "stream_text.sse", "stream_thinking.sse", "stream_tool_use.sse", "stream_error_midstream.sse", "error_529_overloaded.json"} {
		b := testdata(f, name)
		f.Add(b, 200, true, 0)
		f.Add(b, 200, false, len(b)/2)
	}
	f.Add([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}`), 400, false, 0)
	f.Add([]byte("event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":\"x\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":7}}\r\n\r\n"), 200, true, 3)
	f.Add([]byte(`{"input_tokens":"12"}`), 200, false, 0)
	f.Fuzz(func(t *testing.T, body []byte, status int, stream bool, cut int) {
		for _, method := range []string{anthropic.MethodCreate, anthropic.MethodCountTokens, ""} {
			resp := &providers.Response{StatusCode: status, Header: http.Header{}, Body: body, Stream: stream, EOF: cut%3 == 0}
			if cut > 0 && cut < len(body) {
				resp.Body, resp.Tail, resp.Truncated = body[:cut], body[cut:], true
			}
			orig := bytes.Clone(body)
			res := anthropic.Provider{}.ParseResponse(&providers.Call{MethodName: method, Stream: stream}, resp)
			if !bytes.Equal(orig, body) {
				t.Fatal("the body was modified")
			}
			if res.Outcome.Status == "" {
				t.Fatalf("no outcome for %q", body)
			}
			if res.Outcome.OK == (res.Outcome.ErrorType != "") {
				t.Fatalf("ok %v with error type %q", res.Outcome.OK, res.Outcome.ErrorType)
			}
			if status >= 400 && res.Outcome.OK {
				t.Fatalf("status %d is ok", status)
			}
			if u := res.Usage; u != nil && u.TotalTokens != u.InputTokens+u.OutputTokens {
				t.Fatalf("usage %+v", *u)
			}
		}
	})
}

// FuzzAddGuidance checks that an edit, when made, is one insertion into a
// body that stays valid JSON.
func FuzzAddGuidance(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[]}`), "G")
	f.Add([]byte(` {"system":"s\"\u00e9","messages":[] } `), "multi\nline \"quoted\"")
	f.Add([]byte(`{"system":[{"type":"text","text":"s"}],"messages":[{}]}`), "\x00\xff")
	f.Add([]byte(`{"system":[],"messages":[],"system":"dup"}`), "")
	f.Fuzz(func(t *testing.T, body []byte, text string) {
		req := &providers.Request{Method: "POST", URL: &url.URL{Path: "/v1/messages"}, Body: body}
		orig := bytes.Clone(body)
		out, ok := anthropic.Provider{}.AddGuidance(req, text)
		if !bytes.Equal(orig, body) {
			t.Fatal("the body was modified")
		}
		if !ok {
			return
		}
		if _, one := inserted(body, out); !one {
			t.Fatalf("not one insertion:\n%q\n%q", body, out)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %q", out)
		}
	})
}

// FuzzParseStream feeds streams of events, whole or cut into a head and a
// tail that starts anywhere, with either line ending.
func FuzzParseStream(f *testing.F) {
	for _, name := range []string{"stream_text.sse", "stream_tool_use.sse", "stream_thinking.sse", "stream_error_midstream.sse"} {
		b := testdata(f, name)
		f.Add(b, 0, false)
		f.Add(b, len(b)/3, true)
	}
	f.Add([]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"tool_use\",\"input\":[1]}}\n\nevent: content_block_delta\ndata: {\"index\":-1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"\"}}\n\n"), 0, false)
	f.Add([]byte("data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":1e30,\"input_tokens\":-5}}\r\r"), 0, false)
	f.Fuzz(func(t *testing.T, body []byte, cut int, crlf bool) {
		if crlf {
			body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
		}
		resp := &providers.Response{StatusCode: 200, Header: http.Header{}, Body: body, Stream: true, EOF: true}
		if cut > 0 && cut < len(body) {
			resp.Body, resp.Tail, resp.Truncated = body[:cut], body[cut:], true
		}
		res := anthropic.Provider{}.ParseResponse(&providers.Call{MethodName: anthropic.MethodCreate, Stream: true}, resp)
		if res.Outcome.Status == "" || res.Outcome.OK == (res.Outcome.ErrorType != "") {
			t.Fatalf("outcome %+v", res.Outcome)
		}
		if whole := bytes.TrimSpace(body); res.Outcome.OK && !res.Finished && !(len(whole) > 0 && whole[0] == '{') {
			// Only a whole message, answered at once, may lack its stop.
			t.Fatalf("a stream read to its end without message_stop is ok: %q", body)
		}
		if len(res.Output.Text()) > len(body) {
			t.Fatalf("output of %d bytes from %d", len(res.Output.Text()), len(body))
		}
		if u := res.Usage; u != nil && u.TotalTokens != u.InputTokens+u.OutputTokens {
			t.Fatalf("usage %+v", *u)
		}
	})
}

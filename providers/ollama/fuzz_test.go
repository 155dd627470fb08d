package ollama_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/ollama"
)

var paths = []string{"/api/chat", "/api/generate", "/api/embed"}

func FuzzParseRequest(f *testing.F) {
	for _, name := range []string{"request_chat_stream.json", "request_generate.json", "request_embed.json"} {
		f.Add(testdata(f, name), false)
	}
	f.Add([]byte(`{"model":"m","system":"s","prompt":"p","images":["`+longBase64+`"],"context":[1,2,3],"tools":[{"function":{"name":"f"}}],"stream":false}`), false)
	f.Add([]byte(`{"messages":"x","input":["a","b"],"tools":{}}`), true)
	f.Fuzz(func(t *testing.T, body []byte, cut bool) {
		for _, path := range paths {
			req := &providers.Request{Method: "POST", URL: &url.URL{Path: path}, Header: http.Header{}, Body: body, BodyTruncated: cut}
			orig := bytes.Clone(body)
			call, ok := ollama.Provider{}.ParseRequest(req)
			if !ok || !bytes.Equal(orig, body) {
				t.Fatalf("not recognized, or the body was modified: %q", body)
			}
			if !json.Valid(call.Args) || call.Args[0] != '[' || !json.Valid(call.Kwargs) || call.Kwargs[0] != '{' {
				t.Fatalf("args %q kwargs %q from %q", call.Args, call.Kwargs, body)
			}
			if len(call.Args) > providers.MaxArgsBytes || len(call.Kwargs) > providers.MaxKwargsBytes {
				t.Fatalf("over the limits: %d, %d", len(call.Args), len(call.Kwargs))
			}
			if out, ok := (ollama.Provider{}).AddGuidance(req, "G"); ok {
				if !json.Valid(out) || len(out) <= len(body) {
					t.Fatalf("guidance made %q of %q", out, body)
				}
			}
		}
	})
}

const longBase64 = "iVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAA"

// FuzzParseResponse feeds any body to every endpoint, whole or cut into a
// head and a tail, as an error or a success.
func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"chat_stream.ndjson", "generate.json", "embed.json", "chat_thinking_tool_calls.json"} {
		b := testdata(f, name)
		f.Add(b, 200, 0)
		f.Add(b, 200, len(b)/2)
	}
	f.Add([]byte(`{"error":"model \"x\" not found, try pulling it first"}`), 404, 0)
	f.Add([]byte("{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"boom\"}\n"), 200, 0)
	f.Add([]byte(`{"done":true,"prompt_eval_count":-1,"eval_count":1e400,"message":{"tool_calls":[{"function":7}]}}`), 200, 0)
	f.Fuzz(func(t *testing.T, body []byte, status int, cut int) {
		for _, method := range []string{ollama.MethodChat, ollama.MethodGenerate, ollama.MethodEmbed} {
			resp := &providers.Response{StatusCode: status, Body: body, Stream: method != ollama.MethodEmbed, EOF: cut%2 == 0}
			if cut > 0 && cut < len(body) {
				resp.Body, resp.Tail, resp.Truncated = body[:cut], body[cut:], true
			}
			orig := bytes.Clone(body)
			res := ollama.Provider{}.ParseResponse(&providers.Call{MethodName: method}, resp)
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
			if status < 400 && resp.EOF && !resp.Truncated && res.Outcome.OK && !res.Finished {
				t.Fatalf("read to its end without its end, and ok: %q", body)
			}
		}
	})
}

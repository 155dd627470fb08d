package gemini_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
)

func FuzzParseRequest(f *testing.F) {
	f.Add("/v1beta/models/gemini-2.0-flash:generateContent", []byte(hello), false)
	f.Add("/v1beta/models/m:streamGenerateContent", []byte(`{"systemInstruction":"s","contents":{"role":"model","parts":[{"functionResponse":{}}]},"tools":[{"functionDeclarations":[{"name":1}]},"x"],"toolConfig":{"functionCallingConfig":{"mode":3}}}`), false)
	f.Add("/v1beta1/projects/p/locations/l/publishers/google/models/m:countTokens", []byte(`{"generateContentRequest":{"generationConfig":[1,2],"generateContentRequest":{}}}`), false)
	f.Add("/v1/publishers/google/models/m:embedContent", []byte(`{"content":"x","system_instruction":{"parts":"p"}}`), true)
	f.Add("/v1beta/tunedModels/t:batchEmbedContents", []byte(`{"requests":[{"content":{"parts":[{"inlineData":{"data":"`+longBase64+`"}}]}}]}`), false)
	f.Add("/v1beta/models/\"\x00\xff:generateContent", []byte(`[`), false)
	f.Fuzz(func(t *testing.T, path string, body []byte, cut bool) {
		req := &providers.Request{Method: "POST", URL: &url.URL{Path: path}, Header: http.Header{}, Body: body, BodyTruncated: cut}
		call, ok := gemini.Provider{}.ParseRequest(req)
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
	})
}

const longBase64 = "iVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAAiVBORw0KGgoAAAANSUhEUgAA"

func FuzzParseResponse(f *testing.F) {
	for _, name := range []string{"gemini_generate_response.json", "gemini_stream.sse", "gemini_stream_error_midstream.sse", "gemini_error.json"} {
		b := testdata(f, name)
		f.Add(b, 200, true, 0)
		f.Add(b, 200, false, len(b)/2)
	}
	f.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"},"candidates":[{"index":"x","finishReason":1}]}`), 200, false, 0)
	f.Add([]byte(`[{"error":{"code":"429"}}]`), 429, true, 3)
	f.Add([]byte("{\n\"error\": 7\n}\n\ndata: [\n\n"), 200, true, 0)
	f.Add([]byte(`"usageMetadata": {"promptTokenCount": "1"`), 200, false, 1)
	f.Fuzz(func(t *testing.T, body []byte, status int, stream bool, cut int) {
		for _, method := range []string{gemini.MethodGenerateContent, gemini.MethodStreamGenerateContent, gemini.MethodCountTokens, ""} {
			resp := &providers.Response{StatusCode: status, Header: http.Header{}, Body: body, Stream: stream}
			if cut > 0 && cut < len(body) {
				resp.Body, resp.Tail, resp.Truncated = body[:cut], body[cut:], true
			}
			res := gemini.Provider{}.ParseResponse(&providers.Call{MethodName: method, Stream: stream}, resp)
			if res.Outcome.Status == "" {
				t.Fatalf("no outcome for %q", body)
			}
			if res.Outcome.OK == (res.Outcome.ErrorType != "") {
				t.Fatalf("ok %v with error type %q", res.Outcome.OK, res.Outcome.ErrorType)
			}
			if status >= 400 && res.Outcome.OK {
				t.Fatalf("status %d is ok", status)
			}
		}
	})
}

package ollama_test

import (
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/ollama"
)

// BenchmarkParseChatStream reads the captured NDJSON chat stream.
func BenchmarkParseChatStream(b *testing.B) {
	body := testdata(b, "chat_stream.ndjson")
	call := &providers.Call{MethodName: ollama.MethodChat, Stream: true}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		res := ollama.Provider{}.ParseResponse(call, &providers.Response{StatusCode: 200, Body: body, Stream: true, EOF: true})
		if !res.Outcome.OK {
			b.Fatal(res.ErrorMessage)
		}
	}
}

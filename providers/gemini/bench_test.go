package gemini_test

import (
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
)

func BenchmarkParseRequest(b *testing.B) {
	body := `{"contents":[{"role":"user","parts":[{"text":"` + strings.Repeat("What is the weather like in Paris today? ", 100) + `"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":21}}}]}],` +
		`"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},` +
		`"generationConfig":{"temperature":0.2,"maxOutputTokens":1024,"thinkingConfig":{"thinkingBudget":512}},` +
		`"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather of a city","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}}]}]}`
	req := request("POST", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent", body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		gemini.Provider{}.ParseRequest(req)
	}
}

func BenchmarkParseResponse(b *testing.B) {
	resp := response(200, testdata(b, "gemini_generate_response.json"))
	b.SetBytes(int64(len(resp.Body)))
	b.ReportAllocs()
	for b.Loop() {
		gemini.Provider{}.ParseResponse(generateCall, resp)
	}
}

// BenchmarkParseStream reports the cost per event of a stream with thought
// chunks and a function call.
func BenchmarkParseStream(b *testing.B) {
	body := testdata(b, "gemini_stream_thinking_functioncall.sse")
	events := 0
	wire.ScanSSE(body, func(wire.Event) bool { events++; return true })
	resp := streamResponse(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		gemini.Provider{}.ParseResponse(streamCall, resp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

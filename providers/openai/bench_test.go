package openai_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/providers/openai"
)

func BenchmarkParseRequest(b *testing.B) {
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"` +
		string(bytes.Repeat([]byte("What is the weather like in Paris today? "), 100)) + `"}],"temperature":0.2,"tools":[{"type":"function","function":{"name":"get_weather"}}]}`)
	req := request("POST", "https://api.openai.com/v1/chat/completions", string(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		openai.Provider{}.ParseRequest(req)
	}
}

func BenchmarkParseResponse(b *testing.B) {
	resp := response(200, testdata(b, "openai_chat_response.json"))
	b.SetBytes(int64(len(resp.Body)))
	b.ReportAllocs()
	for b.Loop() {
		openai.Provider{}.ParseResponse(chatCall, resp)
	}
}

// BenchmarkParseStream reports the cost per event of a chat stream.
func BenchmarkParseStream(b *testing.B) {
	body := testdata(b, "openai_chat_stream_2025_obfuscation.sse")
	events := 0
	wire.ScanSSE(body, func(wire.Event) bool { events++; return true })
	resp := streamResponse(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		openai.Provider{}.ParseResponse(chatCall, resp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

// BenchmarkParseStreamSmall is a stream of small content chunks, as most
// chat streams are: the cost per event the recorder adds to a stream.
func BenchmarkParseStreamSmall(b *testing.B) {
	var body []byte
	for i := range 100 {
		body = fmt.Appendf(body, `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"token %d "}}]}`+"\n\n", i)
	}
	body = append(body, `data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":100,"total_tokens":110}}`+"\n\ndata: [DONE]\n\n"...)
	resp := streamResponse(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		openai.Provider{}.ParseResponse(chatCall, resp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*102), "ns/event")
}

package anthropic_test

import (
	"bytes"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
)

func BenchmarkParseRequest(b *testing.B) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"system":[{"type":"text","text":"You are a helpful assistant.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` +
		string(bytes.Repeat([]byte("What is the weather like in Paris today? "), 100)) + `"}],"temperature":0.2,"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}`)
	req := request("POST", api, string(body))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		anthropic.Provider{}.ParseRequest(req)
	}
}

func BenchmarkParseResponse(b *testing.B) {
	resp := response(200, testdata(b, "message_thinking.json"))
	b.SetBytes(int64(len(resp.Body)))
	b.ReportAllocs()
	for b.Loop() {
		anthropic.Provider{}.ParseResponse(createCall, resp)
	}
}

// BenchmarkParseStream reports the cost per event of a real stream with
// thinking and text.
func BenchmarkParseStream(b *testing.B) {
	body := testdata(b, "stream_thinking.sse")
	events := 0
	providers.ScanSSE(body, func(providers.Event) bool { events++; return true })
	resp := streamResponse(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		anthropic.Provider{}.ParseResponse(streamCall, resp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

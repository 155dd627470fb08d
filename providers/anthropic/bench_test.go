package anthropic_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
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
	wire.ScanSSE(body, func(wire.Event) bool { events++; return true })
	resp := streamResponse(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		anthropic.Provider{}.ParseResponse(streamCall, resp)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

// BenchmarkParseStreamManyCalls is a stream that starts many tool calls
// and then sends the first one's fragments, at two sizes: linear code
// takes four times as long for four times the bytes. Finding a fragment's
// block by searching the blocks from the latest back cost their product
// (16 ms for 1 MiB, 236 ms for 4 MiB).
func BenchmarkParseStreamManyCalls(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("size=%dMiB", size>>20), func(b *testing.B) {
			var body bytes.Buffer
			body.WriteString("data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[]}}\n\n")
			for i := 0; body.Len() < size/2; i++ {
				fmt.Fprintf(&body, "data: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t%d\",\"name\":\"f\",\"input\":{}}}\n\n", i, i)
			}
			for body.Len() < size {
				body.WriteString("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1\"}}\n\n")
			}
			resp := streamResponse(body.Bytes())
			b.SetBytes(int64(body.Len()))
			for b.Loop() {
				anthropic.Provider{}.ParseResponse(streamCall, resp)
			}
		})
	}
}

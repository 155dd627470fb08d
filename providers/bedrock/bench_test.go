package bedrock_test

import (
	"fmt"
	"testing"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/bedrock"
)

// BenchmarkParseConverseStream reads a ConverseStream of n text deltas:
// every frame's two CRCs checked, its headers and JSON read.
func BenchmarkParseConverseStream(b *testing.B) {
	for _, n := range []int{10, 1000} {
		events := [][2]string{{"messageStart", `{"p":"abcdefgh","role":"assistant"}`}}
		for i := range n {
			events = append(events, [2]string{"contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":"word %d "},"p":"abcdefghijklmnop"}`, i)})
		}
		events = append(events, [2]string{"messageStop", `{"p":"abcd","stopReason":"end_turn"}`},
			[2]string{"metadata", `{"metrics":{"latencyMs":900},"usage":{"inputTokens":25,"outputTokens":1000,"totalTokens":1025}}`})
		body := frames(b, events)
		call := &providers.Call{MethodName: bedrock.MethodConverseStream}
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				res := bedrock.Provider{}.ParseResponse(call, &providers.Response{StatusCode: 200, Body: body, Stream: true, EOF: true})
				if !res.Outcome.OK {
					b.Fatal(res.ErrorMessage)
				}
			}
		})
	}
}

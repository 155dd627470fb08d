package openai_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// chunk is one chat stream event whose delta is text, in OpenAI's shape
// of 2025 (obfuscation included when obf is not "").
func chunk(content, obf string) string {
	ev := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1755691077,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":` + content + `},"logprobs":null,"finish_reason":null}],"usage":null`
	if obf != "" {
		ev += `,"obfuscation":` + obf
	}
	return "data: " + ev + "}\n\n"
}

// chunkStreams are streams whose events repeat an envelope, each with
// what a reader must not take for a repetition: text that needs decoding,
// strings that are not valid JSON in the places that vary, an envelope
// that changes by one byte, members that matter in the middle of plain
// chunks, events cut short.
func chunkStreams(t testing.TB) map[string][]byte {
	streams := map[string][]byte{}
	for _, name := range []string{"openai_chat_stream.sse", "openai_chat_stream_2025_obfuscation.sse", "openai_chat_stream_parallel_tools.sse", "responses_stream.sse"} {
		streams[name] = testdata(t, name)
	}
	done := "data: [DONE]\n\n"
	finish := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1755691077,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	var plain, escaped, obfuscated strings.Builder
	for i := range 50 {
		plain.WriteString(chunk(fmt.Sprintf(`"token %d "`, i), ""))
		escaped.WriteString(chunk(fmt.Sprintf(`"line\n%d \"quoted\" \u00e9\ud83d\ude00 \\"`, i), ""))
		obfuscated.WriteString(chunk(fmt.Sprintf(`"t%d"`, i), fmt.Sprintf(`"%s"`, strings.Repeat("x", i%7))))
	}
	streams["plain"] = []byte(plain.String() + finish + done)
	streams["escaped"] = []byte(escaped.String() + finish + done)
	streams["obfuscated"] = []byte(obfuscated.String() + finish + done)
	streams["invalid strings in the holes"] = []byte(chunk(`"a"`, `"o"`) + chunk(`"b"`, `"o"`) +
		chunk("\"bad \x01 control\"", `"o"`) + chunk(`"bad \q escape"`, `"o"`) + chunk(`"c"`, "\"p\x02\"") +
		chunk(`"unterminated`, `"o"`) + chunk(`"d"`, `"o"`) + finish + done)
	streams["a string that is not one"] = []byte(chunk(`"a"`, `"o"`) + chunk(`"b"`, `"o"`) + chunk(`"x","role":"user"`, `"o"`) +
		chunk(`"y\"`, `"o"`) + chunk(`null`, `"o"`) + chunk(`1`, `"o"`) + chunk(`"e"`, `"o"`) + finish + done)
	streams["the envelope changes"] = []byte(chunk(`"a"`, "") + chunk(`"b"`, "") +
		strings.Replace(chunk(`"c"`, ""), "gpt-4o-mini", "gpt-4o-mino", 1) +
		strings.Replace(chunk(`"d"`, ""), `"finish_reason":null`, `"finish_reason":"length"`, 1) +
		strings.Replace(chunk(`"e"`, ""), `"usage":null`, `"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}`, 1) +
		strings.Replace(chunk(`"f"`, ""), `"index":0`, `"index":1`, 1) +
		strings.Replace(chunk(`"g"`, ""), `"content":"g"`, `"content":"g","refusal":"no"`, 1) +
		strings.Replace(chunk(`"h"`, ""), `"content":"h"`, `"content":"h","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`, 1) +
		strings.Replace(chunk(`"i"`, ""), `"content":"i"`, `"reasoning_content":"hmm","content":"i"`, 1) +
		chunk(`"k"`, "") + finish + done)
	// Members that add up, repeated byte for byte: each event adds again.
	tool := func(c string) string {
		return strings.Replace(chunk(c, ""), `"content":`+c, `"content":`+c+`,"tool_calls":[{"index":0,"function":{"arguments":"{\"a"}}]`, 1)
	}
	streams["repeated members that add up"] = []byte(chunk(`"a"`, "") +
		strings.Replace(chunk(`"b"`, ""), `"content":"b"`, `"content":"b","refusal":"no"`, 1) +
		strings.Replace(chunk(`"b"`, ""), `"content":"b"`, `"content":"b","refusal":"no"`, 1) +
		strings.Replace(chunk(`"c"`, ""), `"content":"c"`, `"reasoning_content":"hm","content":"c"`, 1) +
		strings.Replace(chunk(`"c"`, ""), `"content":"c"`, `"reasoning_content":"hm","content":"c"`, 1) +
		tool(`"d"`) + tool(`"d"`) + tool(`"d"`) +
		strings.Replace(chunk(`"e"`, ""), `"index":0`, `"index":0,"text":"legacy"`, 1) +
		strings.Replace(chunk(`"e"`, ""), `"index":0`, `"index":0,"text":"legacy"`, 1) +
		finish + done)
	streams["an error in the middle"] = []byte(chunk(`"a"`, "") + chunk(`"b"`, "") +
		strings.Replace(chunk(`"c"`, ""), `"usage":null`, `"usage":null,"error":{"message":"overloaded","type":"server_error"}`, 1) +
		chunk(`"d"`, "") + finish + done)
	streams["role first, then text"] = []byte(strings.Replace(chunk(`""`, ""), `"content":""`, `"role":"assistant","content":""`, 1) +
		chunk(`"a"`, "") + chunk(`"b"`, "") + chunk(`"c"`, "") + finish + done)
	streams["spaces"] = []byte(strings.ReplaceAll(chunk(`"a"`, ""), ":", ": ") + strings.ReplaceAll(chunk(`"b"`, ""), ":", ": ") +
		chunk(`"c"`, "") + strings.ReplaceAll(chunk(`"d"`, ""), ",", " ,") + finish + done)
	body := plain.String()
	streams["cut in an event"] = []byte(body[:len(body)-30])
	streams["cut in a hole"] = []byte(body + chunk(`"half`, "")[:len(chunk(`"half`, ""))-60])
	streams["an unknown member that varies"] = []byte(strings.Replace(chunk(`"a"`, ""), `"usage":null`, `"usage":null,"x_seq":1`, 1) +
		strings.Replace(chunk(`"b"`, ""), `"usage":null`, `"usage":null,"x_seq":2`, 1) +
		strings.Replace(chunk(`"c"`, ""), `"usage":null`, `"usage":null,"x_seq":2`, 1) + finish + done)
	return streams
}

// Reading a chunk by comparing it with the one before gives what walking
// every event gives, for every stream and every way of cutting it.
func TestChunkTemplateAgreesWithWalk(t *testing.T) {
	for name, body := range chunkStreams(t) {
		t.Run(name, func(t *testing.T) {
			for _, cut := range []bool{false, true} {
				resp := streamResponse(body)
				if cut {
					resp = &providers.Response{StatusCode: 200, Body: body[:len(body)/2], Tail: body[len(body)/3:], Truncated: true, Stream: true, EOF: true}
				}
				want := openai.ParseStreamWalked(chatCall, resp)
				got := openai.Provider{}.ParseResponse(chatCall, resp)
				require.Equal(t, want, got, "cut %t", cut)
			}
		})
	}
}

// The streams above are read as they say, not only alike.
func TestChunkTemplateText(t *testing.T) {
	streams := chunkStreams(t)
	res := openai.Provider{}.ParseResponse(chatCall, streamResponse(streams["escaped"]))
	assert.True(t, res.Outcome.OK)
	assert.Equal(t, "stop", res.Outcome.FinishReason)
	assert.Equal(t, 50, strings.Count(res.Output.Text(), "\"quoted\" é😀 \\"))
	assert.True(t, strings.HasPrefix(res.Output.Text(), "line\n0 \"quoted\""), res.Output.Text()[:20])

	res = openai.Provider{}.ParseResponse(chatCall, streamResponse(streams["obfuscated"]))
	var want strings.Builder
	for i := range 50 {
		fmt.Fprintf(&want, "t%d", i)
	}
	assert.Equal(t, want.String(), res.Output.Text())

	res = openai.Provider{}.ParseResponse(chatCall, streamResponse(streams["the envelope changes"]))
	assert.Equal(t, "abcdeghik", res.Output.Text(), "f is choice 1")
	assert.Equal(t, "no", providertest.Refusal(res.Output))
	assert.Equal(t, "hmm", res.Output.Reasoning())
	assert.Equal(t, &record.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, res.Usage)
	if calls := providertest.Calls(res.Output); assert.Len(t, calls, 1) {
		assert.Equal(t, "f", calls[0].Name)
	}

	res = openai.Provider{}.ParseResponse(chatCall, streamResponse(streams["an error in the middle"]))
	assert.False(t, res.Outcome.OK)
	assert.Equal(t, "overloaded", res.ErrorMessage)
}

func FuzzChunkTemplate(f *testing.F) {
	for _, body := range chunkStreams(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := openai.ParseStreamWalked(chatCall, streamResponse(body))
		got := openai.Provider{}.ParseResponse(chatCall, streamResponse(body))
		if !assert.Equal(t, want, got) {
			t.Fatalf("body %q", body)
		}
	})
}

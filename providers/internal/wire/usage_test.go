package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// usageOf reads the usage objects of a captured payload, in order: the
// top level's "usage" or "usageMetadata", or each SSE event's.
func usageOf(t *testing.T, file string) *record.Usage {
	t.Helper()
	b := payload(t, file)
	var r UsageReader
	read := func(doc gjson.Result) {
		for _, path := range []string{"usage", "usageMetadata", "message.usage", "response.usage"} {
			r.Read(doc.Get(path))
		}
	}
	if gjson.ValidBytes(b) {
		read(gjson.ParseBytes(b))
	} else {
		ScanSSE(b, func(ev Event) bool {
			read(gjson.ParseBytes(ev.Data))
			return true
		})
	}
	return r.Usage()
}

// One meaning of usage, pinned for each provider by its real payloads:
// input counts every prompt token (cache reads and writes included),
// output every generated token (reasoning included), total their sum.
func TestUsageOneMeaning(t *testing.T) {
	for _, tc := range []struct {
		file string
		want record.Usage
		why  string
	}{
		{"openai/openai_chat_response.json", record.Usage{InputTokens: 13, OutputTokens: 31, TotalTokens: 44},
			"prompt_tokens and completion_tokens already hold the details"},
		{"openai/openai_chat_stream_2025_obfuscation.sse", record.Usage{InputTokens: 14, OutputTokens: 13, TotalTokens: 27},
			"null on every chunk but the last"},
		{"openai/openai_responses_response.json", record.Usage{InputTokens: 14, OutputTokens: 50, TotalTokens: 64},
			"the Responses API's input_tokens and output_tokens"},
		{"gemini/gemini_generate_response_thinking_functioncall.json", record.Usage{InputTokens: 38, OutputTokens: 509, TotalTokens: 547, ReasoningTokens: 501},
			"candidatesTokenCount leaves out the 501 thoughts: output is 8 + 501"},
		{"gemini/gemini_stream_thinking_functioncall.sse", record.Usage{InputTokens: 38, OutputTokens: 174, TotalTokens: 212, ReasoningTokens: 168},
			"usageMetadata is cumulative: the last one counts, never the sum"},
		{"anthropic/message.json", record.Usage{InputTokens: 13, OutputTokens: 35, TotalTokens: 48},
			"no cache: input_tokens as sent"},
		{"anthropic/message_cache_read.json", record.Usage{InputTokens: 6008, OutputTokens: 16, TotalTokens: 6024, CachedTokens: 6001},
			"input_tokens (7) leaves out the 6001 read from the cache"},
		{"anthropic/message_cache_write_1h.json", record.Usage{InputTokens: 6008, OutputTokens: 16, TotalTokens: 6024, CacheWriteTokens: 6001, CacheWrite1hTokens: 6001},
			"input_tokens (7) leaves out the 6001 written to the cache, all for an hour"},
		{"anthropic/stream_thinking.sse", record.Usage{InputTokens: 50, OutputTokens: 211, TotalTokens: 261},
			"message_delta's usage is cumulative: 211 replaces message_start's 1, never adds"},
		{"bedrock/converse.json", record.Usage{InputTokens: 25, OutputTokens: 17, TotalTokens: 42},
			"Converse's inputTokens and outputTokens; the cache fields are 0"},
		{"bedrock/converse_tool_use_cache_write.json", record.Usage{InputTokens: 1368, OutputTokens: 55, TotalTokens: 1423, CacheWriteTokens: 1365},
			"inputTokens (3) leaves out the 1365 written to the cache, as Bedrock's totalTokens (1423) says"},
		{"bedrock/converse_cache_read.json", record.Usage{InputTokens: 1448, OutputTokens: 27, TotalTokens: 1475, CachedTokens: 1365, CacheWriteTokens: 77},
			"inputTokens (6) leaves out the 1365 read and the 77 written: totalTokens is 1475"},
		{"bedrock/invoke_anthropic.json", record.Usage{InputTokens: 727, OutputTokens: 13, TotalTokens: 740},
			"Claude's InvokeModel body is Anthropic's usage"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := usageOf(t, tc.file)
			require.NotNil(t, got)
			assert.Equal(t, tc.want, *got, tc.why)
			assert.Equal(t, got.InputTokens+got.OutputTokens, got.TotalTokens)
			assert.LessOrEqual(t, got.CachedTokens+got.CacheWriteTokens, got.InputTokens, "cache parts are parts of input")
			assert.LessOrEqual(t, got.ReasoningTokens, got.OutputTokens, "reasoning is part of output")
		})
	}
}

func TestUsageReaderEdges(t *testing.T) {
	var r UsageReader
	assert.Nil(t, r.Usage(), "nothing read")
	r.Read(gjson.Parse(`null`))
	r.Read(gjson.Parse(`{"input_tokens":null}`))
	assert.Nil(t, r.Usage(), "null is no count")

	r.Read(gjson.Parse(`{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}`))
	r.Read(gjson.Parse(`{"output_tokens":40}`)) // a message_delta carrying only the output
	assert.Equal(t, &record.Usage{InputTokens: 15, OutputTokens: 40, TotalTokens: 55, CachedTokens: 5}, r.Usage(), "fields absent later keep their value")

	var b UsageReader
	b.Read(gjson.Parse(`{"inputTokens":3,"outputTokens":5,"cacheWriteInputTokens":100,"cacheDetails":[{"inputTokens":40,"ttl":"5m"},{"inputTokens":60,"ttl":"1h"}]}`))
	assert.Equal(t, &record.Usage{InputTokens: 103, OutputTokens: 5, TotalTokens: 108, CacheWriteTokens: 100, CacheWrite1hTokens: 60}, b.Usage(),
		"Bedrock's cacheDetails: the writes with a ttl of 1h")

	var l UsageReader
	l.Read(gjson.Parse(`{"generation":"Hi","prompt_token_count":12,"generation_token_count":1,"stop_reason":null}`))
	l.Read(gjson.Parse(`{"generation":"!","prompt_token_count":null,"generation_token_count":2,"amazon-bedrock-invocationMetrics":{}}`))
	l.Read(gjson.Parse(`{"inputTokenCount":12,"outputTokenCount":2,"invocationLatency":311,"firstByteLatency":98}`))
	assert.Equal(t, &record.Usage{InputTokens: 12, OutputTokens: 2, TotalTokens: 14}, l.Usage(), "Llama on Bedrock, and a stream's invocation metrics")

	var ol UsageReader
	ol.Read(gjson.Parse(`{"done":true,"done_reason":"stop","total_duration":5191566416,"prompt_eval_count":26,"prompt_eval_duration":383809000,"eval_count":298,"eval_duration":4799921000}`))
	assert.Equal(t, &record.Usage{InputTokens: 26, OutputTokens: 298, TotalTokens: 324}, ol.Usage(), "Ollama: the durations are no counts")

	var o UsageReader
	o.Read(gjson.Parse(`{"prompt_tokens":100,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":20}}`))
	assert.Equal(t, &record.Usage{InputTokens: 100, OutputTokens: 30, TotalTokens: 130, CachedTokens: 64, ReasoningTokens: 20}, o.Usage(),
		"OpenAI's details are parts of its counts, not added to them")
}

// A count must be a whole number from 0 to MaxTokenCount. One that is not
// is no count: the usage is left out and named in truncated, and no sum
// or total is ever negative or wrapped.
func TestUsageOutOfRange(t *testing.T) {
	bad := []string{
		`{"prompt_tokens":1e400,"completion_tokens":99999999999999999999999999,"prompt_tokens_details":{"cached_tokens":1.5e300}}`,
		`{"prompt_tokens":-5,"completion_tokens":3}`,
		`{"input_tokens":2.5,"output_tokens":1}`,
		`{"input_tokens":10,"output_tokens":1099511627777}`, // MaxTokenCount + 1
		`{"promptTokenCount":9223372036854775807,"candidatesTokenCount":9223372036854775807}`,
		`{"input_tokens":1,"cache_read_input_tokens":-1e10,"output_tokens":1}`,
		`{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":-3}`,
		`{"inputTokens":1,"outputTokens":1,"cacheWriteInputTokens":2,"cacheDetails":[{"inputTokens":1e300,"ttl":"1h"}]}`,
		`{"prompt_eval_count":1.5,"eval_count":1}`,
	}
	for _, u := range bad {
		var r UsageReader
		r.Read(gjson.Parse(u))
		assert.Nil(t, r.Usage(), u)
		assert.True(t, r.OutOfRange(), u)
		var res providers.Result
		r.Into(&res)
		assert.Nil(t, res.Usage)
		assert.Equal(t, []string{"usage"}, res.Truncated, u)
	}
	good := map[string]record.Usage{
		`{"prompt_tokens":12.0,"completion_tokens":1e1}`:                         {InputTokens: 12, OutputTokens: 10, TotalTokens: 22},
		`{"input_tokens":1099511627776,"output_tokens":0}`:                       {InputTokens: 1 << 40, TotalTokens: 1 << 40},
		`{"promptTokenCount":7,"candidatesTokenCount":2,"thoughtsTokenCount":3}`: {InputTokens: 7, OutputTokens: 5, TotalTokens: 12, ReasoningTokens: 3},
	}
	for u, want := range good {
		var r UsageReader
		r.Read(gjson.Parse(u))
		assert.Equal(t, &want, r.Usage(), u)
		assert.False(t, r.OutOfRange())
	}
	// A stream's later, sound count replaces the bad one it repeats.
	var r UsageReader
	r.Read(gjson.Parse(`{"input_tokens":-1,"output_tokens":1}`))
	r.Read(gjson.Parse(`{"input_tokens":4,"output_tokens":2}`))
	assert.Equal(t, &record.Usage{InputTokens: 4, OutputTokens: 2, TotalTokens: 6}, r.Usage())
}

// FuzzUsageReader: whatever the numbers, a usage read is either absent or
// has counts in range whose total is their sum.
func FuzzUsageReader(f *testing.F) {
	f.Add(`{"prompt_tokens":1e400,"completion_tokens":99999999999999999999999999,"prompt_tokens_details":{"cached_tokens":1.5e300}}`)
	f.Add(`{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":3,"output_tokens":1}`)
	f.Add(`{"promptTokenCount":7,"candidatesTokenCount":2,"thoughtsTokenCount":3,"toolUsePromptTokenCount":1}`)
	f.Add(`{"inputTokens":3,"outputTokens":5,"cacheReadInputTokens":7,"cacheWriteInputTokenCount":100,"cacheDetails":[{"inputTokens":1099511627776,"ttl":"1h"},{"inputTokens":1,"ttl":"1h"}]}`)
	f.Add(`{"prompt_eval_count":26,"eval_count":298,"inputTextTokenCount":1}`)
	f.Fuzz(func(t *testing.T, s string) {
		var r UsageReader
		r.Read(gjson.Parse(s))
		u := r.Usage()
		if u == nil {
			return
		}
		for _, n := range []int{u.InputTokens, u.OutputTokens, u.CachedTokens, u.CacheWriteTokens, u.CacheWrite1hTokens, u.ReasoningTokens} {
			if n < 0 || n > 4*MaxTokenCount {
				t.Fatalf("count %d out of range in %+v from %s", n, u, s)
			}
		}
		if u.TotalTokens != u.InputTokens+u.OutputTokens || u.TotalTokens < 0 {
			t.Fatalf("total %d in %+v from %s", u.TotalTokens, u, s)
		}
	})
}

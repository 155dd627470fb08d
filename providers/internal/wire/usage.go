package wire

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// UsageReader reads token counts in every shape the providers send them,
// and maps them onto the one meaning of [record.Usage]: input counts every
// prompt token, cache reads and writes included; output counts every
// generated token, reasoning included; total is their sum.
//
// The providers count differently, and this is the one place that knows
// how (the usage table of docs/providers.md says the same):
//
//   - OpenAI chat: prompt_tokens (cached included), completion_tokens
//     (reasoning included), prompt_tokens_details.cached_tokens,
//     completion_tokens_details.reasoning_tokens; the Responses API the
//     same as input_tokens, output_tokens and their _details (whose
//     cache_write_tokens is part of input_tokens too).
//   - Anthropic: input_tokens leaves out cache_read_input_tokens and
//     cache_creation_input_tokens, which are added to it;
//     cache_creation.ephemeral_1h_input_tokens is the part written for an
//     hour; output_tokens counts thinking.
//   - Gemini: promptTokenCount (cached content included) plus
//     toolUsePromptTokenCount; candidatesTokenCount leaves out
//     thoughtsTokenCount, which is added to it.
//   - Amazon Bedrock: Converse's inputTokens leaves out
//     cacheReadInputTokens and cacheWriteInputTokens (also spelled
//     ...InputTokenCount), which are added to it, as Anthropic's are;
//     cacheDetails' inputTokens with a ttl of "1h" are the part written
//     for an hour; outputTokens counts every generated token. The other
//     families' InvokeModel bodies count the same way: inputTokenCount and
//     outputTokenCount (a stream's amazon-bedrock-invocationMetrics),
//     inputTextTokenCount and totalOutputTextTokenCount (Titan),
//     prompt_token_count and generation_token_count (Llama).
//   - Ollama: prompt_eval_count and eval_count, the prompt tokens it
//     evaluated and the tokens it generated.
//
// Read may be called again with later objects of the same response: a
// field a later object carries replaces the earlier value, never adds to
// it, because streams repeat their counts cumulatively (Gemini's
// usageMetadata, Anthropic's message_delta). Absent and null fields keep
// their value. The zero value is ready to use.
//
// A count must be a whole number from 0 to [MaxTokenCount]. One that is
// not (negative, fractional, 1e400, more digits than an int holds) is no
// count at all, and nothing derived from it can be trusted: while any
// field read holds one, [UsageReader.Usage] is nil and
// [UsageReader.OutOfRange] is true, so that the record has no usage and
// names "usage" in its truncated list ([UsageReader.Into]). Sums over
// records never wrap, and a total is never negative.
type UsageReader struct {
	n    [numUsageFields]int
	seen uint32 // bit i: field i was read
	bad  uint32 // bit i: field i was read last as a number out of range
}

// MaxTokenCount is the largest token count [UsageReader] takes: 2^40,
// about a trillion, far above any context window, and small enough that
// the sum of a million records' counts fits an int64.
const MaxTokenCount = 1 << 40

// The fields, as the providers name them.
const (
	uPromptTokens     = iota // OpenAI chat
	uCompletionTokens        // OpenAI chat
	uInputTokens             // OpenAI Responses, Anthropic
	uOutputTokens            // OpenAI Responses, Anthropic
	uCachedTokens            // OpenAI *_details.cached_tokens
	uCacheWriteOpenAI        // OpenAI input_tokens_details.cache_write_tokens
	uReasoningTokens         // OpenAI *_details.reasoning_tokens, Anthropic output_tokens_details.thinking_tokens
	uCacheRead               // Anthropic cache_read_input_tokens
	uCacheCreation           // Anthropic cache_creation_input_tokens
	uCacheCreation1h         // Anthropic cache_creation.ephemeral_1h_input_tokens
	uGPrompt                 // Gemini promptTokenCount
	uGCandidates             // Gemini candidatesTokenCount
	uGThoughts               // Gemini thoughtsTokenCount
	uGCached                 // Gemini cachedContentTokenCount
	uGToolUse                // Gemini toolUsePromptTokenCount
	uBInput                  // Bedrock inputTokens (and its other families' spellings), Ollama prompt_eval_count
	uBOutput                 // Bedrock outputTokens (and its other families' spellings), Ollama eval_count
	uBCacheRead              // Bedrock cacheReadInputTokens
	uBCacheWrite             // Bedrock cacheWriteInputTokens
	uBCacheWrite1h           // Bedrock cacheDetails[ttl=1h].inputTokens, summed
	numUsageFields
)

func (u *UsageReader) set(i int, v gjson.Result) {
	if v.Type != gjson.Number {
		return
	}
	u.seen |= 1 << i
	if n, ok := tokenCount(v); ok {
		u.n[i] = n
		u.bad &^= 1 << i
	} else {
		u.n[i] = 0
		u.bad |= 1 << i
	}
}

// tokenCount reads a JSON number as a count: a whole number in
// [0, MaxTokenCount], written as an integer or not ("12", "1.2e1").
func tokenCount(v gjson.Result) (int, bool) {
	if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
		return int(n), n >= 0 && n <= MaxTokenCount
	}
	f := v.Num // gjson's float: ±Inf when out of float64's range
	if f >= 0 && f <= MaxTokenCount && f == math.Trunc(f) {
		return int(f), true
	}
	return 0, false
}

// OutOfRange reports whether a count read is not a count (see
// [UsageReader]): Usage is then nil.
func (u *UsageReader) OutOfRange() bool { return u.bad != 0 }

// Into sets res.Usage to the counts read, and names "usage" in
// res.Truncated when a count was out of range.
func (u *UsageReader) Into(res *providers.Result) {
	res.Usage = u.Usage()
	if u.OutOfRange() {
		res.Cut("usage")
	}
}

func (u *UsageReader) has(i int) bool { return u.seen&(1<<i) != 0 }

// Read takes the counts of one usage object (OpenAI's and Anthropic's
// "usage", Gemini's "usageMetadata"); anything but an object is ignored.
func (u *UsageReader) Read(v gjson.Result) {
	if !v.IsObject() {
		return
	}
	v.ForEach(func(k, n gjson.Result) bool {
		switch k.String() {
		case "prompt_tokens":
			u.set(uPromptTokens, n)
		case "completion_tokens":
			u.set(uCompletionTokens, n)
		case "input_tokens":
			u.set(uInputTokens, n)
		case "output_tokens":
			u.set(uOutputTokens, n)
		case "prompt_tokens_details", "input_tokens_details":
			u.set(uCachedTokens, n.Get("cached_tokens"))
			u.set(uCacheWriteOpenAI, n.Get("cache_write_tokens"))
		case "completion_tokens_details":
			u.set(uReasoningTokens, n.Get("reasoning_tokens"))
		case "output_tokens_details":
			u.set(uReasoningTokens, n.Get("reasoning_tokens"))
			u.set(uReasoningTokens, n.Get("thinking_tokens"))
		case "cache_read_input_tokens":
			u.set(uCacheRead, n)
		case "cache_creation_input_tokens":
			u.set(uCacheCreation, n)
		case "cache_creation":
			u.set(uCacheCreation1h, n.Get("ephemeral_1h_input_tokens"))
		case "promptTokenCount":
			u.set(uGPrompt, n)
		case "candidatesTokenCount":
			u.set(uGCandidates, n)
		case "thoughtsTokenCount":
			u.set(uGThoughts, n)
		case "cachedContentTokenCount":
			u.set(uGCached, n)
		case "toolUsePromptTokenCount":
			u.set(uGToolUse, n)
		case "inputTokens", "inputTokenCount", "inputTextTokenCount", "prompt_token_count", "prompt_eval_count":
			u.set(uBInput, n)
		case "outputTokens", "outputTokenCount", "totalOutputTextTokenCount", "generation_token_count", "eval_count":
			u.set(uBOutput, n)
		case "cacheReadInputTokens", "cacheReadInputTokenCount":
			u.set(uBCacheRead, n)
		case "cacheWriteInputTokens", "cacheWriteInputTokenCount":
			u.set(uBCacheWrite, n)
		case "cacheDetails":
			u.cacheDetails(n)
		}
		return true
	})
}

// cacheDetails reads Bedrock's cache writes by time to live,
// [{"inputTokens": n, "ttl": "5m" | "1h"}]: the one-hour writes are summed.
func (u *UsageReader) cacheDetails(v gjson.Result) {
	if !v.IsArray() {
		return
	}
	sum, ok := 0, true
	v.ForEach(func(_, d gjson.Result) bool {
		if d.Get("ttl").String() != "1h" {
			return true
		}
		n, good := tokenCount(d.Get("inputTokens"))
		if !good || sum+n > MaxTokenCount {
			ok = false
			return false
		}
		sum += n
		return true
	})
	u.seen |= 1 << uBCacheWrite1h
	if ok {
		u.n[uBCacheWrite1h] = sum
		u.bad &^= 1 << uBCacheWrite1h
	} else {
		u.n[uBCacheWrite1h] = 0
		u.bad |= 1 << uBCacheWrite1h
	}
}

// Usage returns the counts read so far in the one meaning, or nil when no
// count was read or one was out of range.
func (u *UsageReader) Usage() *record.Usage {
	if u.seen == 0 || u.bad != 0 {
		return nil
	}
	var out record.Usage
	n := &u.n
	switch {
	case u.has(uGPrompt) || u.has(uGCandidates) || u.has(uGThoughts):
		out.InputTokens = n[uGPrompt] + n[uGToolUse]
		out.OutputTokens = n[uGCandidates] + n[uGThoughts]
		out.ReasoningTokens = n[uGThoughts]
		out.CachedTokens = n[uGCached]
	case u.has(uCacheRead) || u.has(uCacheCreation) || u.has(uCacheCreation1h):
		// Anthropic: the cache's tokens are not in input_tokens.
		out.InputTokens = n[uInputTokens] + n[uCacheRead] + n[uCacheCreation]
		out.OutputTokens = n[uOutputTokens]
		out.CachedTokens = n[uCacheRead]
		out.CacheWriteTokens = n[uCacheCreation]
		out.CacheWrite1hTokens = n[uCacheCreation1h]
		out.ReasoningTokens = n[uReasoningTokens]
	case u.has(uBInput) || u.has(uBOutput) || u.has(uBCacheRead) || u.has(uBCacheWrite):
		// Bedrock, Ollama: the cache's tokens are not in inputTokens.
		out.InputTokens = n[uBInput] + n[uBCacheRead] + n[uBCacheWrite]
		out.OutputTokens = n[uBOutput]
		out.CachedTokens = n[uBCacheRead]
		out.CacheWriteTokens = n[uBCacheWrite]
		out.CacheWrite1hTokens = min(n[uBCacheWrite1h], n[uBCacheWrite])
	default:
		out.InputTokens, out.OutputTokens = n[uInputTokens], n[uOutputTokens]
		if u.has(uPromptTokens) || u.has(uCompletionTokens) {
			out.InputTokens, out.OutputTokens = n[uPromptTokens], n[uCompletionTokens]
		}
		out.CachedTokens = n[uCachedTokens]
		out.CacheWriteTokens = n[uCacheWriteOpenAI]
		out.ReasoningTokens = n[uReasoningTokens]
	}
	out.TotalTokens = out.InputTokens + out.OutputTokens
	return &out
}

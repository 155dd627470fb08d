package anthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/record"
)

func TestStreams(t *testing.T) {
	p := anthropic.Provider{}

	res := p.ParseResponse(streamCall, streamResponse(testdata(t, "stream_text.sse")))
	assert.Equal(t, record.Outcome{Status: "ok", OK: true, ValueClass: "message", FinishReason: "end_turn", ResponseID: "msg_01Ju7oPaDmjgrhWq8gNP4AUj"}, res.Outcome)
	assert.Equal(t, "claude-3-opus-20240229", res.Model)
	assert.Equal(t, "1\n2\n3\n4\n5", res.Output.Text(), "text deltas in order; the ping in between ignored")
	assert.True(t, res.Finished, "message_stop seen")

	res = p.ParseResponse(streamCall, streamResponse(testdata(t, "stream_tool_use.sse")))
	assert.Equal(t, "tool_use", res.Outcome.FinishReason)
	assert.Equal(t, "I'll calculate the tip and get the waiter's name for you.", res.Output.Text())
	assert.Equal(t, []providers.ToolCall{
		{ID: "toolu_01VsaoaKxpzdz8vgY4hTGjE3", Name: "calculateTip", Arguments: `{"billAmount":50,"tipPercentage":15}`},
		// Its only input_json_delta is "": the input is content_block_start's {}.
		{ID: "toolu_01Uksi8drJHeC8rCj8yVUtCJ", Name: "getWaiterName", Arguments: `{}`},
	}, providertest.Calls(res.Output), "input_json_delta fragments assembled by block index")
	assert.True(t, res.Finished)

	res = p.ParseResponse(streamCall, streamResponse(testdata(t, "stream_thinking.sse")))
	assert.Equal(t, "# Adding 5 + 3\n\nLet me work through this step by step:\n\n**Step 1:** Start with the first number: **5**\n\n**Step 2:** Add the second number: **3**\n\n**Step 3:** Count up from 5, three times:\n- 5 + 1 = 6\n- 6 + 1 = 7\n- 7 + 1 = 8\n\n**Answer: 5 + 3 = 8**", res.Output.Text(),
		"thinking_delta and signature_delta are not output")
	assert.Equal(t, "msg_015p8Cc5938XnHxgs9GKuBm5", res.Outcome.ResponseID)
	assert.Equal(t, "claude-sonnet-4-5-20250929", res.Model)
	assert.True(t, res.Outcome.OK)
}

func TestStreamErrorMidway(t *testing.T) {
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "stream_error_midstream.sse")))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "overloaded", Retriable: true, ResponseID: "msg_01Ju7oPaDmjgrhWq8gNP4AUj"}, res.Outcome)
	assert.Equal(t, "Overloaded", res.ErrorMessage)
	assert.True(t, res.Finished, "the error is the stream's end")
	assert.Equal(t, "1\n2\n3", res.Output.Text(), "what came before the error")

	// An error type of its own, mid-stream: not the 500 it is read under.
	body := bytes.Replace(testdata(t, "stream_error_midstream.sse"), []byte(`"overloaded_error","message":"Overloaded"`), []byte(`"invalid_request_error","message":"prompt is too long: 201234 tokens > 200000 maximum"`), 1)
	res = anthropic.Provider{}.ParseResponse(streamCall, streamResponse(body))
	assert.Equal(t, record.ErrorContextLength, res.Outcome.ErrorType)
}

func TestStreamRefusal(t *testing.T) {
	body := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_r","model":"claude-sonnet-4-5","usage":{"input_tokens":9,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here is"}}` + "\n\n" +
		"event: message_delta\n" + `data: {"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null,"stop_details":{"type":"refusal","category":"bio","explanation":"This request touches a restricted area."}},"usage":{"output_tokens":4}}` + "\n\n" +
		"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse([]byte(body)))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "content_filter", FinishReason: "refusal", ResponseID: "msg_r"}, res.Outcome)
	assert.Equal(t, "the response was stopped by a refusal: bio (This request touches a restricted area.)", res.ErrorMessage)
	assert.True(t, res.Finished)
}

func TestStreamFraming(t *testing.T) {
	want := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "stream_tool_use.sse")))
	crlf := bytes.ReplaceAll(testdata(t, "stream_tool_use.sse"), []byte("\n"), []byte("\r\n"))
	got := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(crlf))
	assert.Equal(t, want, got, "frames ended by \\r\\n\\r\\n read as those ended by \\n\\n")

	// Without the event: lines, the data's "type" names each event.
	var bare bytes.Buffer
	for line := range bytes.Lines(testdata(t, "stream_tool_use.sse")) {
		if !bytes.HasPrefix(line, []byte("event:")) {
			bare.Write(line)
		}
	}
	got = anthropic.Provider{}.ParseResponse(streamCall, streamResponse(bare.Bytes()))
	assert.Equal(t, want, got)
}

func TestStreamWithoutMessageStop(t *testing.T) {
	full := testdata(t, "stream_thinking.sse")
	i := bytes.LastIndex(full, []byte("event: message_stop"))
	require.Positive(t, i)

	// Read to its end, but the end never came: not a success.
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(full[:i]))
	assert.Equal(t, record.Outcome{Status: "error", ErrorType: "incomplete", FinishReason: "end_turn", ResponseID: "msg_015p8Cc5938XnHxgs9GKuBm5"}, res.Outcome,
		"a stop reason in message_delta is not message_stop")
	assert.Equal(t, "the stream ended without message_stop", res.ErrorMessage)
	assert.False(t, res.Finished)
	assert.Equal(t, 211, res.Usage.OutputTokens, "what was read is kept")

	// Cut in the middle of an event: the cut event is not read.
	res = anthropic.Provider{}.ParseResponse(streamCall, streamResponse(full[:len(full)/2]))
	assert.Equal(t, record.ErrorIncomplete, res.Outcome.ErrorType)

	// Closed before its end (not EOF): the provider reports what it read,
	// the recorder knows why it stopped and says so.
	resp := streamResponse(full[:i])
	resp.EOF = false
	res = anthropic.Provider{}.ParseResponse(streamCall, resp)
	assert.True(t, res.Outcome.OK)
	assert.False(t, res.Finished)
}

func TestStreamHeadAndTail(t *testing.T) {
	for _, crlf := range []bool{false, true} {
		full := testdata(t, "stream_thinking.sse")
		if crlf {
			full = bytes.ReplaceAll(full, []byte("\n"), []byte("\r\n"))
		}
		want := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(full))
		// The recorder keeps a head and the last bytes of a long body: the
		// tail starts in the middle of an event.
		resp := streamResponse(full[:1000])
		resp.Tail, resp.Truncated = full[len(full)-1500:], true
		res := anthropic.Provider{}.ParseResponse(streamCall, resp)
		assert.True(t, res.Finished, "message_stop read from the tail (crlf %v)", crlf)
		assert.True(t, res.Outcome.OK)
		assert.Equal(t, want.Usage, res.Usage, "usage from message_start in the head and message_delta in the tail")
		assert.Equal(t, "end_turn", res.Outcome.FinishReason)
		assert.Equal(t, want.Outcome.ResponseID, res.Outcome.ResponseID)
	}
}

// A long unstreamed message cut by the capture still has its stop reason
// and usage, which follow its content.
func TestMessageHeadAndTail(t *testing.T) {
	full := testdata(t, "message_cache_write_1h.json")
	cut := bytes.Index(full, []byte("help you"))
	resp := response(200, full[:100])
	resp.Tail, resp.Truncated = full[cut:], true
	res := anthropic.Provider{}.ParseResponse(createCall, resp)
	assert.True(t, res.Outcome.OK)
	assert.True(t, res.Finished)
	assert.Equal(t, "end_turn", res.Outcome.FinishReason)
	assert.Equal(t, &record.Usage{InputTokens: 6008, OutputTokens: 16, TotalTokens: 6024, CacheWriteTokens: 6001, CacheWrite1hTokens: 6001}, res.Usage)
}

// TestGolden pins everything a payload gives, one file per payload in
// testdata/golden. Run with -update after a deliberate change, and read the
// diff.
func TestGolden(t *testing.T) {
	for _, name := range []string{
		"message.json", "message_max_tokens.json", "message_tool_use.json", "message_thinking.json", "message_thinking_tool_use.json",
		"message_redacted_thinking.json", "message_cache_write_1h.json", "message_cache_read.json",
		"stream_text.sse", "stream_tool_use.sse", "stream_thinking.sse", "stream_error_midstream.sse",
		"error_529_overloaded.json",
	} {
		t.Run(name, func(t *testing.T) {
			status := 200
			if bytes.HasPrefix([]byte(name), []byte("error_529")) {
				status = 529
			}
			resp := response(status, testdata(t, name))
			resp.Stream = bytes.HasSuffix([]byte(name), []byte(".sse"))
			res := anthropic.Provider{}.ParseResponse(createCall, resp)
			got, err := json.MarshalIndent(res, "", "  ")
			require.NoError(t, err)
			golden(t, "golden/"+name+".result.json", append(got, '\n'))
		})
	}
	for _, name := range []string{"request_message.json", "request_tools.json", "request_tool_result.json", "request_stream_thinking.json", "request_stream.json"} {
		t.Run(name, func(t *testing.T) {
			call, ok := anthropic.Provider{}.ParseRequest(request("POST", api, string(testdata(t, name))))
			require.True(t, ok)
			got, err := json.MarshalIndent(call, "", "  ")
			require.NoError(t, err)
			golden(t, "golden/"+name+".call.json", append(got, '\n'))
		})
	}
}

// A server that ignores "stream": true and answers with a whole message
// (or an error object) is read as one.
func TestStreamAnsweredWhole(t *testing.T) {
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "message.json")))
	assert.True(t, res.Outcome.OK)
	assert.True(t, res.Finished)
	assert.Equal(t, 48, res.Usage.TotalTokens)

	res = anthropic.Provider{}.ParseResponse(streamCall, streamResponse(testdata(t, "error_529_overloaded.json")))
	assert.Equal(t, record.ErrorOverloaded, res.Outcome.ErrorType)
}

// A fragment goes to the tool call whose block started last with its
// index: blocks of other indexes between them, or an index started again,
// do not mislead it.
func TestStreamFragmentsFindTheirBlock(t *testing.T) {
	start := func(i int, id string) string {
		return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":"f","input":{}}}`, i, id)
	}
	delta := func(i int, part string) string {
		return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, part)
	}
	var b bytes.Buffer
	for _, e := range []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		start(0, "a"), start(1, "b"), start(2, "c"),
		delta(0, `{"x":`), delta(2, `[2]`), delta(0, `1}`),
		start(1, "d"), delta(1, `"to d"`),
		`{"type":"message_stop"}`,
	} {
		b.WriteString("data: " + e + "\n\n")
	}
	res := anthropic.Provider{}.ParseResponse(streamCall, streamResponse(b.Bytes()))
	require.True(t, res.Outcome.OK, "%+v", res)
	assert.Equal(t, []providers.ToolCall{
		{ID: "a", Name: "f", Arguments: `{"x":1}`},
		{ID: "b", Name: "f", Arguments: `{}`},
		{ID: "c", Name: "f", Arguments: `[2]`},
		{ID: "d", Name: "f", Arguments: "to d"},
	}, providertest.Calls(res.Output))
}

// Thinking is the reasoning, not the output: a whole Message's thinking
// blocks and a stream's thinking deltas give the same text, a redacted
// block gives none, and several blocks are a blank line apart.
func TestThinkingIsReasoning(t *testing.T) {
	p := anthropic.Provider{}
	res := p.ParseResponse(createCall, response(200, testdata(t, "message_thinking_tool_use.json")))
	assert.Equal(t, `The user is asking about the weather in Boston. I have access to a get_weather function that takes a location parameter. I should call this function with "Boston" as the location.`, res.Output.Reasoning())
	assert.Empty(t, res.Output.Text())
	assert.Equal(t, []providers.ToolCall{{ID: "toolu_01E8myeoMN7KKGeCQnAgGd3F", Name: "get_weather", Arguments: `{"location":"Boston"}`}}, providertest.Calls(res.Output))

	res = p.ParseResponse(createCall, response(200, testdata(t, "message_redacted_thinking.json")))
	assert.Empty(t, res.Output.Reasoning(), "a redacted block has no text")
	assert.NotEmpty(t, res.Output.Text())

	streamed := response(200, testdata(t, "stream_thinking.sse"))
	streamed.Stream = true
	res = p.ParseResponse(createCall, streamed)
	assert.True(t, strings.HasPrefix(res.Output.Reasoning(), "This is a simple addition problem. Let me think through it step by step."), res.Output.Reasoning())
	assert.NotContains(t, res.Output.Text(), "Let me think through it")

	two := []byte(`{"type":"message","id":"m","content":[{"type":"thinking","thinking":"first","signature":"s"},{"type":"tool_use","id":"t","name":"f","input":{}},{"type":"thinking","thinking":"second","signature":"s"},{"type":"text","text":"done"}],"stop_reason":"end_turn"}`)
	res = p.ParseResponse(createCall, response(200, two))
	assert.Equal(t, "first\n\nsecond", res.Output.Reasoning())
	assert.Equal(t, "done", res.Output.Text())
}

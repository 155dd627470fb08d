package openai_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/providertest"
	"github.com/llmhistory/llmhistory/providers/openai"
)

var responsesCall = &providers.Call{MethodName: openai.MethodResponses}

// sse frames each event as a stream's "data:" line.
func sse(events ...string) []byte {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return []byte(b.String())
}

// A tool call streams in fragments: the first names it, the rest add to
// its arguments. Every form the API has sends them, in every order it can.
func TestStreamedToolCallFragments(t *testing.T) {
	chunk := func(delta string) string {
		return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `}]}`
	}
	tests := []struct {
		name   string
		call   *providers.Call
		stream []byte
		want   []providers.ToolCall
	}{
		{"tool calls, two in parallel, fragments interleaved", chatCall, sse(
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}`),
			chunk(`{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"search","arguments":"{\"q\""}}]}`),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"go\"}"}},{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`),
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`),
			[]providers.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "c2", Name: "search", Arguments: `{"q":"go"}`}}},
		{"a later name replaces the one before", chatCall, sse(
			chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"first","arguments":"[1,"}}]}`),
			chunk(`{"tool_calls":[{"index":0,"function":{"name":"second","arguments":"2]"}}]}`),
			`[DONE]`),
			[]providers.ToolCall{{ID: "c1", Name: "second", Arguments: `[1,2]`}}},
		{"legacy function_call, name and arguments in pieces", chatCall, sse(
			chunk(`{"function_call":{"name":"get_","arguments":""}}`),
			chunk(`{"function_call":{"name":"weather","arguments":"{\"a\":"}}`),
			chunk(`{"function_call":{"arguments":"1}"}}`),
			`[DONE]`),
			[]providers.ToolCall{{Name: "get_weather", Arguments: `{"a":1}`}}},
		{"legacy pieces and a tool call's, mixed, each to its own", chatCall, sse(
			chunk(`{"function_call":{"name":"old","arguments":"x"}}`),
			chunk(`{"tool_calls":[{"index":0,"function":{"name":"new","arguments":"y"}}]}`),
			chunk(`{"function_call":{"name":"+","arguments":"z"}}`),
			`[DONE]`),
			[]providers.ToolCall{{Name: "old+", Arguments: "xz"}, {Name: "new", Arguments: "y"}}},
		{"responses: deltas, then done", responsesCall, sse(
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"f"}}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\""}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":":1}"}`,
			`{"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"a\":1}"}`,
			`{"type":"response.completed","response":{"id":"r","status":"completed"}}`),
			[]providers.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"a":1}`}}},
		{"responses: deltas only, two calls", responsesCall, sse(
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"a","name":"f"}}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"custom_tool_call","call_id":"b","name":"g"}}`,
			`{"type":"response.custom_tool_call_input.delta","output_index":1,"delta":"B1"}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"A1"}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"A2"}`,
			`{"type":"response.custom_tool_call_input.delta","output_index":1,"delta":"B2"}`,
			`{"type":"response.completed","response":{"id":"r","status":"completed"}}`),
			[]providers.ToolCall{{ID: "a", Name: "f", Arguments: "A1A2"}, {ID: "b", Name: "g", Arguments: "B1B2"}}},
		{"responses: done replaces the deltas before it, not after", responsesCall, sse(
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"a","name":"f"}}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"lost"}`,
			`{"type":"response.function_call_arguments.done","output_index":0,"arguments":"kept"}`,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"+more"}`,
			`{"type":"response.completed","response":{"id":"r","status":"completed"}}`),
			[]providers.ToolCall{{ID: "a", Name: "f", Arguments: "kept+more"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := openai.Provider{}.ParseResponse(tt.call, streamResponse(tt.stream))
			require.True(t, res.Outcome.OK, "%+v", res)
			assert.Equal(t, tt.want, providertest.Calls(res.Output))
		})
	}
}

// A stream of many argument fragments costs memory in proportion to its
// length. Appending each fragment to the call's string copied all the
// arguments before it: for 1 MiB of deltas, a few GB allocated and about
// a second on the recorder's goroutine. Bytes allocated, not time: the
// count does not drift with the machine.
func TestStreamedToolCallsCostLinearMemory(t *testing.T) {
	const size = 1 << 20
	piece := strings.Repeat("x", 100)
	streams := []struct {
		name  string
		call  *providers.Call
		event string // one fragment of piece
		head  string // what opens the call
		calls int    // calls the fragments go to
	}{
		{"tool_calls deltas", chatCall,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + piece + `"}}]}}]}`, "", 1},
		{"many tool calls per chunk", chatCall,
			`{"choices":[{"index":0,"delta":{"tool_calls":[` + strings.TrimSuffix(strings.Repeat(`{"index":0,"function":{"arguments":"`+piece+`"}},{"index":1,"function":{"arguments":"`+piece+`"}},`, 4), ",") + `]}}]}`, "", 2},
		{"legacy function_call deltas", chatCall,
			`{"choices":[{"index":0,"delta":{"function_call":{"arguments":"` + piece + `"}}}]}`, "", 1},
		{"responses argument deltas", responsesCall,
			`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"` + piece + `"}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f"}}`, 1},
	}
	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			var events []string
			if s.head != "" {
				events = append(events, s.head)
			}
			n := size / (len(s.event) + 8)
			for range n {
				events = append(events, s.event)
			}
			body := sse(events...)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := openai.Provider{}.ParseResponse(s.call, streamResponse(body))
			runtime.ReadMemStats(&after)

			require.Len(t, providertest.Calls(res.Output), s.calls)
			total := 0
			for _, c := range providertest.Calls(res.Output) {
				total += len(c.Arguments)
			}
			assert.Equal(t, n*strings.Count(s.event, piece)*len(piece), total, "every fragment is in the arguments")
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, uint64(16*len(body)), fmt.Sprintf("%d bytes allocated to parse a %d-byte stream", allocated, len(body)))
		})
	}
}

package record_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// A record is written as one JSON line and read back unchanged.
func Example() {
	r := record.Record{
		CallID:     "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A",
		Timestamp:  "2026-11-21T09:30:00.000000Z",
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, "hi")}),
		Kwargs:     record.KwargsJSON(map[string]any{"model": "gpt-4o-mini"}),
		Outcome:    record.Success("chat.completion"),
		Depth:      record.Int(0),
	}
	var out strings.Builder
	sink := record.NewJSONL(&out)
	_ = sink.Append(context.Background(), r)
	_ = sink.Close()
	fmt.Print(out.String())

	back, err := record.ReadJSONL(strings.NewReader(out.String()))
	fmt.Println(len(back), err, back[0].MethodName, *back[0].Depth)
	// Output:
	// {"call_id":"01JD2Q8Z3XKQ4M9R7T5V6W8Y0A","timestamp":"2026-11-21T09:30:00.000000Z","speaker":"user","method_name":"openai.chat.completions.create","args":[{"role":"user","parts":[{"type":"text","content":"hi"}]}],"kwargs":{"model":"gpt-4o-mini"},"outcome_summary":{"status":"ok","ok":true,"retriable":false,"value_class":"chat.completion"},"depth":0,"history_record_appended":false,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[],"version":1}
	// 1 <nil> openai.chat.completions.create 0
}

// A turn of a tool loop in the message model: the answer a record keeps,
// and the next call's args, which carry the same answer back, the same
// bytes; readers take the text, the reasoning and the calls from the
// parts, whatever the provider.
func ExampleMessage() {
	answer := record.Message{Role: record.RoleAssistant, Parts: []record.Part{
		{Type: record.PartReasoning, Content: "The weather needs a lookup."},
		{Type: record.PartText, Content: "Checking."},
		// OpenAI sends arguments as a string of JSON: one encoding all the same.
		{Type: record.PartToolCall, ID: "call_1", Name: "get_weather", Arguments: []byte(`"{\"unit\": \"c\", \"city\": \"Paris\"}"`)},
	}}
	first := record.Record{Args: record.AppendMessages(nil, []record.Message{record.TextMessage(record.RoleUser, "Weather in Paris?")}), Output: &answer}
	next := record.AppendMessages(nil, []record.Message{
		record.TextMessage(record.RoleUser, "Weather in Paris?"),
		answer,
		{Role: record.RoleTool, Parts: []record.Part{{Type: record.PartToolResult, ID: "call_1", Content: `{"temp":18}`}}},
	})
	fmt.Println(string(first.Output.AppendJSON(nil)))
	for _, m := range record.Messages(next) {
		fmt.Printf("%s: %q\n", m.Role, m.Text())
	}
	fmt.Println(first.Output.Reasoning(), first.Output.Has(record.PartToolCall))
	fmt.Println("the answer in the next args, byte for byte:", strings.Contains(string(next), string(first.Output.AppendJSON(nil))))
	// Output:
	// {"role":"assistant","parts":[{"type":"reasoning","content":"The weather needs a lookup."},{"type":"text","content":"Checking."},{"type":"tool_call","id":"call_1","name":"get_weather","arguments":{"city":"Paris","unit":"c"}}]}
	// user: "Weather in Paris?"
	// assistant: "Checking."
	// tool: ""
	// The weather needs a lookup. true
	// the answer in the next args, byte for byte: true
}

// SafeJSON turns values encoding/json refuses into JSON, field by field.
func ExampleSafeJSON() {
	type node struct{ Next *node }
	loop := &node{}
	loop.Next = loop
	fmt.Println(string(record.SafeJSON(map[any]any{
		1:       math.NaN(),
		"bytes": []byte("hi"),
		"bad":   "caf\xe9",
		"fn":    strings.ToUpper,
		"loop":  loop,
	})))
	// Output:
	// {"1":"NaN","bad":"caf�","bytes":"aGk=","fn":"<func(string) string>","loop":{"Next":"<cycle: *record_test.node>"}}
}

// NormalizeHistory always yields a slice, keeping what it can.
func ExampleNormalizeHistory() {
	history := []any{
		map[string]any{"call_id": "a", "method_name": "tool.search", "speaker": "tool"},
		"not a record",
		map[string]any{"call_id": "b", "method_name": "openai.chat.completions.create"},
	}
	records, dropped := record.NormalizeHistory(history, nil)
	fmt.Println(len(records), dropped, records[0].CallID, records[1].CallID)

	records, dropped = record.NormalizeHistory(map[string]any{"oops": true}, nil)
	fmt.Println(len(records), dropped, records != nil)
	// Output:
	// 2 1 a b
	// 0 0 true
}

// Memory keeps a bounded history and a view per conversation.
func ExampleMemory_TraceTail() {
	m := record.NewMemory(100)
	for i, trace := range []string{"chat-1", "chat-2", "chat-1", "chat-1"} {
		_ = m.Append(context.Background(), record.Record{CallID: fmt.Sprint("call-", i), TraceID: trace, MethodName: "m"})
	}
	tail, total := m.TraceTail("chat-1", 2)
	fmt.Println(total, tail[0].CallID, tail[1].CallID)
	// Output:
	// 3 call-2 call-3
}

// The slog sink writes one log line per record, at Warn when the call failed.
func ExampleNewSlog() {
	h := slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the example's output stable
			}
			return a
		},
	})
	sink := record.NewSlog(slog.New(h))
	r := record.Record{CallID: "c1", MethodName: "gemini.models.generateContent", Speaker: "user",
		Outcome: record.Failure(record.ErrorRateLimit), ErrorType: record.ErrorRateLimit}
	_ = sink.Append(context.Background(), r)
	// Output:
	// {"level":"WARN","msg":"llm call","call_id":"c1","timestamp":"","speaker":"user","method_name":"gemini.models.generateContent","outcome_summary":{"status":"error","ok":false,"error_type":"rate_limit","retriable":true},"error_type":"rate_limit","history_record_appended":false,"conversation_history_size":0,"history_access_detected":false,"history_query_patterns":[]}
}

func ExampleRetriable() {
	for _, typ := range []string{record.ErrorRateLimit, record.ErrorQuota, record.ErrorOverloaded, record.ErrorAuth} {
		fmt.Println(typ, record.Retriable(typ))
	}
	fmt.Println(record.ErrorTypeForStatus(529))
	// Output:
	// rate_limit true
	// quota false
	// overloaded true
	// auth false
	// overloaded
}

// The small types print for people.
func ExampleUsage_String() {
	u := &record.Usage{InputTokens: 9, OutputTokens: 3, TotalTokens: 12, CachedTokens: 4}
	fmt.Println(u)
	fmt.Println(record.Failure(record.ErrorRateLimit))
	fmt.Println(record.Cost{USD: 0.000123, Table: "litellm-2026-07-24"})
	var none *record.Usage
	fmt.Println(none)
	// Output:
	// 12 tokens (9 in, 4 cached; 3 out)
	// error rate_limit (retriable)
	// $0.000123 (litellm-2026-07-24)
	// <nil>
}

package testgen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmhistory/llmhistory/eval/testgen"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/replay"
)

// A recorded go-openai call, retried once after a rate limit, becomes a
// cassette of two exchanges (the 429, then the answer) and a test.
func Example() {
	question := record.TextMessage(record.RoleUser, "What should I pack for Lisbon?")
	args, _ := json.Marshal([]record.Message{question})
	answer := record.TextMessage(record.RoleAssistant, "Light layers and good shoes.")
	r := record.Record{
		CallID: "01J0000000000000000000000", MethodName: "openai.chat.completions.create", TraceID: "trip-1",
		Args: args, Kwargs: json.RawMessage(`{"model":"gpt-4o-mini","stream":false}`),
		Outcome: record.Outcome{Status: "ok", OK: true, HTTPStatus: 200, FinishReason: "stop", ResponseID: "chatcmpl-1"},
		Output:  &answer, Attempts: 2, Model: "gpt-4o-mini",
		Usage: &record.Usage{InputTokens: 12, OutputTokens: 7, TotalTokens: 19},
	}
	out, err := testgen.Generate([]record.Record{r}, testgen.Options{Package: "trip"})
	if err != nil {
		panic(err)
	}
	its, err := replay.Read(bytes.NewReader(out.Cassette))
	if err != nil {
		panic(err)
	}
	for _, it := range its {
		fmt.Println(it.Request.Method, it.Request.URL.Path, "→", it.Response.Status)
	}
	for _, line := range strings.Split(string(out.Test), "\n") {
		if strings.HasPrefix(line, "func Test") || strings.Contains(line, "replay.ForTest") {
			fmt.Println(strings.TrimSpace(line))
		}
	}
	// Output:
	// POST /v1/chat/completions → 429
	// POST /v1/chat/completions → 200
	// func TestTraceTrip1(t *testing.T) {
	// cassette := replay.ForTest(t, "testdata/trip-1.jsonl")
}

package report_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// The recorder keeps a tool call's JSON arguments as program_source when
// the code is in them: the examples come from the code inside, not from
// the JSON around it.
func TestExamplesFromToolArguments(t *testing.T) {
	b := report.NewBuilder(report.Options{})
	b.Add(record.Record{
		CallID: "01A", Timestamp: "2026-11-22T10:00:00Z", Speaker: "agent", MethodName: "openai.chat.completions.create",
		Outcome:               record.Success("chat.completion"),
		ProgramSource:         `{"language":"ruby","code":"asked = conversation_history\n  .select { |r| r[:speaker] == \"user\" }\n  .last(3)"}`,
		HistoryAccessDetected: true,
		HistoryQueryPatterns:  []string{"filter", "slice"},
	})
	examples := map[string]string{}
	for _, p := range b.Report().Patterns {
		examples[p.Tag] = p.Example
	}
	require.Contains(t, examples, "filter")
	assert.Contains(t, examples["filter"], `.select { |r| r[:speaker] == "user" }`)
	assert.Contains(t, examples["slice"], ".last(3)")
	assert.NotContains(t, examples["filter"], `\n`, "the code, not its JSON escaping")
}

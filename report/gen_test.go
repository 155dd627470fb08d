package report_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// Realistic records for tests and benchmarks: chat calls of a few methods
// and models, some with code that reads the history, some failing and
// retried, grouped into traces of a few calls.

var (
	genMethods = []string{"openai.chat.completions.create", "gemini.models.generateContent", "openai.responses.create"}
	genModels  = []string{"gpt-4o-mini", "gemini-2.0-flash", "gpt-4.1"}
	genCode    = []string{
		"recent = context[:conversation_history].last(3)\nrecent.map { |r| r[:outcome_summary][:status] }",
		"h = context[:conversation_history]\nerrors = h.select { |r| !r[:outcome_summary][:ok] }\nerrors.count",
		"by_method = context[:conversation_history].group_by { |r| r[:method_name] }",
		"total = context[:conversation_history].sum { |r| r[:duration_ms] }",
		"puts 'hello'\n42",
		"last = conversation_history[-1]\nprint(len(conversation_history))",
		"# conversation_history is not used here\nx = 1",
	}
	genPatterns = [][]string{{"slice", "map"}, {"filter", "count"}, {"group"}, {"reduce"}, nil, {"slice", "count"}, nil}
	genErrors   = []string{record.ErrorRateLimit, record.ErrorServer, record.ErrorInvalidRequest, record.ErrorTimeout}
	genStart    = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
)

// genRecord returns the i-th record of a reproducible stream.
func genRecord(rng *rand.Rand, i int) record.Record {
	m := rng.IntN(len(genMethods))
	r := record.Record{
		CallID:     fmt.Sprintf("call-%08d", i),
		Timestamp:  record.FormatTime(genStart.Add(time.Duration(i) * 250 * time.Millisecond)),
		Speaker:    []string{record.SpeakerUser, record.SpeakerAgent, record.SpeakerTool}[i%3],
		MethodName: genMethods[m],
		Model:      genModels[m],
		Args:       record.ArgsJSON(map[string]any{"role": "user", "content": strings.Repeat("Summarise the last answer and plan the next step. ", 4)}),
		Kwargs:     record.KwargsJSON(map[string]any{"model": genModels[m], "temperature": 0.2}),
		Outcome:    record.Success("chat.completion"),
		TraceID:    fmt.Sprintf("trace-%05d", i/8),
		Depth:      record.Int(i % 4),
		DurationMS: math.Round(math.Exp(rng.NormFloat64()*0.6+6.2)*1000) / 1000,
		Attempts:   1,
		Usage:      &record.Usage{InputTokens: 300 + i%200, OutputTokens: 80 + i%50},

		HistoryRecordAppended:   true,
		HistoryGuidance:         true,
		ConversationHistorySize: i%8 + 1,
		HistoryQueryPatterns:    []string{},
	}
	r.Usage.TotalTokens = r.Usage.InputTokens + r.Usage.OutputTokens
	if i%8 > 0 {
		r.ParentCallID = fmt.Sprintf("call-%08d", i-1)
	}
	if i%3 == 1 {
		k := rng.IntN(len(genCode))
		r.ProgramSource = genCode[k]
		r.HistoryAccessDetected = genPatterns[k] != nil
		if genPatterns[k] != nil {
			r.HistoryQueryPatterns = genPatterns[k]
		}
	}
	if rng.IntN(20) == 0 {
		typ := genErrors[rng.IntN(len(genErrors))]
		r.Outcome = record.Failure(typ)
		r.ErrorType = typ
		r.ErrorMessage = "the provider said no"
		r.Usage = nil
		if r.Outcome.Retriable {
			r.Attempts = 2 + rng.IntN(4)
		}
	}
	// The recorder prices every record it can at record time.
	cost.Default().Apply(&r)
	return r
}

// writeRecords writes n generated records as JSONL to w.
func writeRecords(w io.Writer, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	sink := record.NewJSONLWith(w, record.JSONLOptions{FlushInterval: -1})
	for i := range n {
		if err := sink.Append(context.Background(), genRecord(rng, i)); err != nil {
			return err
		}
	}
	return sink.Close()
}

package report_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// A builder takes records one at a time and reports on them.
func Example() {
	b := report.NewBuilder(report.Options{MinEvidence: 1})
	for i, code := range []string{
		"recent = context[:conversation_history].last(3)",
		"errors = conversation_history.select { |r| !r[:outcome_summary][:ok] }",
	} {
		b.Add(record.Record{
			CallID:                fmt.Sprintf("c%d", i),
			Timestamp:             "2026-03-01T10:00:00Z",
			Speaker:               record.SpeakerAgent,
			MethodName:            "openai.chat.completions.create",
			Outcome:               record.Success("chat.completion"),
			DurationMS:            420,
			ProgramSource:         code,
			HistoryRecordAppended: true,
			HistoryGuidance:       true,
			HistoryAccessDetected: true,
			HistoryQueryPatterns:  []string{[]string{"slice", "filter"}[i]},
		})
	}
	r := b.Report()
	for _, p := range r.Patterns {
		fmt.Printf("%s: %d, e.g. %s\n", p.Tag, p.Records, p.Example)
	}
	for _, c := range r.Checklist {
		fmt.Printf("%-18s %s\n", c.ID, c.Verdict)
	}
	// Output:
	// filter: 1, e.g. errors = conversation_history.select { |r| !r[:outcome_summary][:ok] }
	// slice: 1, e.g. recent = context[:conversation_history].last(3)
	// append_success     met
	// guidance_presence  met
	// access_detected    met
	// no_duplicates      met
	// retries_collapsed  no data
	// evidence_stream    met
}

// Build reads JSON Lines; WriteMarkdown is the report for people.
func ExampleBuild() {
	jsonl := `{"call_id":"c1","timestamp":"2026-03-01T10:00:00Z","speaker":"user","method_name":"gemini.models.generateContent","args":[],"kwargs":{},"outcome_summary":{"status":"error","ok":false,"error_type":"rate_limit","retriable":true},"attempts":3,"history_record_appended":true,"conversation_history_size":1,"history_access_detected":false,"history_query_patterns":[],"version":1}
not a record
`
	r, err := report.Build(context.Background(), report.Options{}, report.Source{Name: "h.jsonl", R: strings.NewReader(jsonl)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Summary.Records, r.Summary.Calls, r.Errors[0].Type, r.BadInput.GarbledLines)
	in := r.Provenance.Inputs[0]
	fmt.Printf("%s: %d lines, %d record, %d bad\n", in.Name, in.Lines, in.Records, in.BadLines)
	fmt.Println(r.SummaryText()) // the paragraph under the title of the Markdown and HTML forms
	// Output:
	// 1 3 rate_limit 1
	// h.jsonl: 2 lines, 1 record, 1 bad
	// 1 call, 1 in error (100%). No call has a cost. Checklist: 3 of 6 met. History appended for 100% of calls, read in 0 calls. 3 HTTP attempts in all, retries included. At 2026-03-01 10:00:00 UTC. 1 line could not be read as records.
}

// Spend adds up the costs the records carry; Options.Prices prices every
// record again with one table instead.
func Example_spend() {
	b := report.NewBuilder(report.Options{})
	for i, c := range []struct {
		model string
		cost  *record.Cost // as the recorder set it
	}{
		{"gpt-4o", &record.Cost{USD: 0.0123, Table: "litellm-2026-03-03"}},
		{"gpt-4o", &record.Cost{USD: 12.34, Table: "litellm-2026-03-03"}},
		{"my-deployment", nil}, // a name no price table knows
	} {
		b.Add(record.Record{
			CallID: fmt.Sprintf("c%d", i), Timestamp: "2026-03-01T10:00:00Z", Speaker: record.SpeakerUser,
			MethodName: "openai.chat.completions.create", Model: c.model, Outcome: record.Success("chat.completion"),
			Usage: &record.Usage{InputTokens: 1000, CachedTokens: 250}, Cost: c.cost,
		})
	}
	s := b.Report().Spend
	fmt.Println(report.FormatUSD(s.USD), "on", s.PricedRecords, "records; unpriced:", s.UnpricedModels)
	fmt.Printf("%.0f%% of the input from the cache\n", s.Cache.CachedShare*100)
	// Output:
	// $12.35 on 2 records; unpriced: [{my-deployment 1}]
	// 25% of the input from the cache
}

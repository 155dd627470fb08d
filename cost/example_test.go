package cost_test

import (
	"fmt"
	"strings"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// A record is priced from its model and usage, with the name of the table
// that priced it.
func Example() {
	rec := record.Record{
		Model: "gpt-4o-2024-08-06",
		// 10,000 prompt tokens of which 6,000 read from the cache.
		Usage: &record.Usage{InputTokens: 10_000, CachedTokens: 6_000, OutputTokens: 500, TotalTokens: 10_500},
	}
	if cost.Default().Apply(&rec) {
		fmt.Printf("$%.4f (%s)\n", rec.Cost.USD, rec.Cost.Table)
	}

	// A deployment name is not a model: the call is not priced, and a
	// report counts it as such.
	rec.Model = "my-prod-gpt4o"
	fmt.Println(cost.Default().Apply(&rec), rec.Cost == nil)
	// Output:
	// $0.0225 (litellm-2026-03-03)
	// false true
}

// Names as providers return them resolve to the table's entries; a dated
// snapshot the table does not list is priced as its model, and nothing is
// matched by similarity.
func ExampleTable_Lookup() {
	for _, model := range []string{
		"gpt-4o-mini-2099-01-01",
		"models/gemini-2.5-flash-001",
		"projects/p/locations/us-east5/publishers/anthropic/models/claude-opus-4@20250514",
		"gpt-4o-mini-tts",
	} {
		p, name, ok := cost.Default().Lookup(model)
		fmt.Printf("%s → %q %v $%g/M input\n", model, name, ok, p.Input*1e6)
	}
	// Output:
	// gpt-4o-mini-2099-01-01 → "gpt-4o-mini" true $0.15/M input
	// models/gemini-2.5-flash-001 → "gemini-2.5-flash" true $0.3/M input
	// projects/p/locations/us-east5/publishers/anthropic/models/claude-opus-4@20250514 → "claude-opus-4-20250514" true $15/M input
	// gpt-4o-mini-tts → "" false $0/M input
}

// Prices of your own, from a file of per-million-token rates, make a new
// table under a new name.
func ExampleTable_LoadJSON() {
	const prices = `{"version": 1, "table": "acme-2026-11", "models": {
		"my-prod-gpt4o": {"input_per_mtok": 2.5, "output_per_mtok": 10, "cache_read_per_mtok": 1.25}}}`
	t, err := cost.Default().LoadJSON(strings.NewReader(prices))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, ok := t.Cost("my-prod-gpt4o", record.Usage{InputTokens: 1_000_000, OutputTokens: 100_000})
	fmt.Printf("%v $%.2f (%s)\n", ok, c.USD, c.Table)
	// Output:
	// true $3.50 (acme-2026-11)
}

// A report adds records up and says what its total is missing.
func ExampleSummary() {
	t := cost.Default()
	recs := []record.Record{
		{Model: "claude-sonnet-4-5-20250929", Usage: &record.Usage{InputTokens: 100_000, OutputTokens: 10_000}}, // $0.30 + $0.15
		{Model: "gemini-2.5-flash", Usage: &record.Usage{InputTokens: 100_000, OutputTokens: 10_000}},           // $0.03 + $0.025
		{Model: "my-deployment", Usage: &record.Usage{InputTokens: 1_000}},
		{Model: "gpt-4o", Outcome: record.Failure(record.ErrorRateLimit)},
	}
	var s cost.Summary
	for i := range recs {
		t.Apply(&recs[i])
		s.Add(&recs[i])
	}
	fmt.Printf("$%.3f over %d of %d calls; %d unpriced %v; %d without usage\n",
		s.USD, s.Priced, s.Calls, s.Unpriced, s.UnpricedModels, s.NoUsage)
	// Output:
	// $0.505 over 2 of 4 calls; 1 unpriced map[my-deployment:1]; 1 without usage
}

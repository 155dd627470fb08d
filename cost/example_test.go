package cost_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	// $0.0225 (litellm-2026-07-24)
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

// A newer LiteLLM file, read at run time, prices models released after
// the built-in table. Its table is named by the day the file was taken.
func ExampleLoadLiteLLM() {
	// An excerpt of LiteLLM's model_prices_and_context_window.json; a
	// program reads the whole file, downloaded from
	// https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json
	const file = `{
	  "claude-opus-9": {
	    "input_cost_per_token": 5e-06, "output_cost_per_token": 2.5e-05,
	    "cache_read_input_token_cost": 5e-07, "cache_creation_input_token_cost": 6.25e-06,
	    "litellm_provider": "anthropic", "mode": "chat"
	  },
	  "dall-e-9": {"output_cost_per_image": 0.04, "litellm_provider": "openai", "mode": "image_generation"}
	}`
	t, err := cost.LoadLiteLLM(strings.NewReader(file), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))
	if err != nil {
		fmt.Println(err)
		return
	}
	// 20,000 input tokens of which 15,000 read from the cache, 1,000 output:
	// 5,000 × $5/M + 15,000 × $0.50/M + 1,000 × $25/M = $0.025 + $0.0075 + $0.025.
	c, ok := t.Cost("claude-opus-9-20991231", record.Usage{InputTokens: 20_000, CachedTokens: 15_000, OutputTokens: 1_000})
	fmt.Printf("%v $%.4f (%s), %d model\n", ok, c.USD, c.Table, t.Len())
	// Output:
	// true $0.0575 (litellm-2026-11-20), 1 model
}

// LLMHISTORY_PRICES names a price file that Default, and so the recorder
// and the command, price with. FromEnv reads it now, and says what is
// wrong with it.
func ExampleFromEnv() {
	dir, err := os.MkdirTemp("", "prices")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	// A file named with its date; without one, its modification time dates it.
	path := filepath.Join(dir, "litellm-2026-11-20.json")
	err = os.WriteFile(path, []byte(`{"gpt-9": {"input_cost_per_token": 1e-06, "output_cost_per_token": 8e-06, "litellm_provider": "openai", "mode": "chat"}}`), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Setenv(cost.EnvPrices, path)
	defer os.Unsetenv(cost.EnvPrices)

	t, err := cost.FromEnv()
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := t.Date()
	fmt.Println(t.Name(), d.Format("Jan 2, 2006"))
	// Output:
	// litellm-2026-11-20 Nov 20, 2026
}

// Bedrock's model ids, inference profiles and ARNs resolve to LiteLLM's
// Bedrock prices; a US profile costs more than the global one.
func ExampleTable_Lookup_bedrock() {
	for _, model := range []string{
		"us.anthropic.claude-sonnet-4-6",
		"global.anthropic.claude-sonnet-4-6",
		"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-7",
	} {
		p, name, ok := cost.Builtin().Lookup(model)
		fmt.Printf("%s → %q %v $%.2f/M input\n", model, name, ok, p.Input*1e6)
	}
	// Output:
	// us.anthropic.claude-sonnet-4-6 → "us.anthropic.claude-sonnet-4-6" true $3.30/M input
	// global.anthropic.claude-sonnet-4-6 → "anthropic.claude-sonnet-4-6" true $3.00/M input
	// arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-7 → "anthropic.claude-opus-4-7" true $5.00/M input
}

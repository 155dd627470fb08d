package cost_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

func TestLoadJSON(t *testing.T) {
	const file = `{
	  "version": 1,
	  "table": "acme-2026-11",
	  "models": {
	    "My-Model@v2": {"input_per_mtok": 1.0, "output_per_mtok": 2},
	    "gemini-2.5-pro": {
	      "input_per_mtok": 1, "output_per_mtok": 8, "cache_read_per_mtok": 0.1,
	      "cache_write_per_mtok": 1.25, "cache_write_1h_per_mtok": 2, "reasoning_per_mtok": 9,
	      "long_context": {"above_tokens": 200000, "input_per_mtok": 2.5e0, "output_per_mtok": 1.5E1}
	    },
	    "embed": {"input_per_mtok": 0.02, "output_per_mtok": 0}
	  }
	}`
	tbl, err := cost.Default().LoadJSON(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name() != "acme-2026-11" || tbl.Len() != cost.Default().Len()+2 {
		t.Errorf("table %q with %d models; want acme-2026-11 with %d", tbl.Name(), tbl.Len(), cost.Default().Len()+2)
	}
	// Per-million rates become per-token rates, exactly the float64 of the
	// per-token literal: the decimal exponent moves, nothing is divided.
	want := map[string]cost.Price{
		"my-model-v2": {Rates: cost.Rates{Input: 1e-06, Output: 2e-06}},
		"gemini-2.5-pro": {
			Rates:            cost.Rates{Input: 1e-06, Output: 8e-06, CacheRead: 1e-07, CacheWrite: 1.25e-06, CacheWrite1h: 2e-06, Reasoning: 9e-06},
			LongContextAbove: 200_000,
			LongContext:      cost.Rates{Input: 2.5e-06, Output: 1.5e-05},
		},
		"embed": {Rates: cost.Rates{Input: 2e-08}},
	}
	for model, w := range want {
		p, name, ok := tbl.Lookup(model)
		if !ok || name != model || p != w {
			t.Errorf("Lookup(%q) = %q %+v, %v; want %+v", model, name, p, ok, w)
		}
	}
	// The file's names resolve like the table's: Vertex's '@', case.
	if _, name, _ := tbl.Lookup("MY-MODEL@v2"); name != "my-model-v2" {
		t.Errorf("Lookup(MY-MODEL@v2) = %q", name)
	}
	// And the records it prices say so.
	c, ok := tbl.Cost("my-model@v2", record.Usage{InputTokens: 1_000_000, OutputTokens: 500_000})
	if !ok || !closeTo(c.USD, 2) || c.Table != "acme-2026-11" {
		t.Errorf("Cost = %+v, %v; want $2 from acme-2026-11", c, ok)
	}
	// Models the file does not name keep the base table's prices.
	if p, _, _ := tbl.Lookup("gpt-4o"); p != mustLookup(t, cost.Default(), "gpt-4o") {
		t.Errorf("gpt-4o changed: %+v", p)
	}
}

func mustLookup(t *testing.T, tbl *cost.Table, model string) cost.Price {
	t.Helper()
	p, _, ok := tbl.Lookup(model)
	if !ok {
		t.Fatalf("%s: %q unknown", tbl.Name(), model)
	}
	return p
}

func TestLoadJSONName(t *testing.T) {
	tbl, err := cost.Default().LoadJSON(strings.NewReader(`{"models": {"x": {"input_per_mtok": 1, "output_per_mtok": 1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := cost.Default().Name() + "+custom"; tbl.Name() != want {
		t.Errorf("unnamed file: table %q, want %q", tbl.Name(), want)
	}
	// Onto an empty table, the file is the whole table.
	var empty cost.Table
	tbl, err = empty.LoadJSON(strings.NewReader(`{"table": "mine", "models": {"x": {"input_per_mtok": 1, "output_per_mtok": 1}}}`))
	if err != nil || tbl.Len() != 1 || tbl.Name() != "mine" {
		t.Errorf("onto the zero table: %v models, %q, %v", tbl.Len(), tbl.Name(), err)
	}
}

func TestLoadJSONErrors(t *testing.T) {
	cases := []struct{ name, file, says string }{
		{"not json", `prices`, "invalid character"},
		{"empty", ``, "EOF"},
		{"no models", `{"table": "x"}`, `no "models"`},
		{"misspelt rate", `{"models": {"x": {"input_per_mtok": 1, "output_per_mtok": 1, "cache_read_per_mtoken": 0.1}}}`, "unknown field"},
		{"unknown top field", `{"models": {}, "currency": "EUR"}`, "unknown field"},
		{"newer version", `{"version": 2, "models": {}}`, "version 2"},
		{"no output", `{"models": {"x": {"input_per_mtok": 1}}}`, "required"},
		{"no input", `{"models": {"x": {"output_per_mtok": 1}}}`, "required"},
		{"negative", `{"models": {"x": {"input_per_mtok": -1, "output_per_mtok": 1}}}`, "not a rate"},
		{"too large", `{"models": {"x": {"input_per_mtok": 1e400, "output_per_mtok": 1}}}`, "not a rate"},
		{"word for a rate", `{"models": {"x": {"input_per_mtok": "cheap", "output_per_mtok": 1}}}`, "invalid number"},
		{"null rate", `{"models": {"x": {"input_per_mtok": null, "output_per_mtok": 1}}}`, "required"},
		{"empty name", `{"models": {" ": {"input_per_mtok": 1, "output_per_mtok": 1}}}`, "empty name"},
		{"same name twice", `{"models": {"X": {"input_per_mtok": 1, "output_per_mtok": 1}, "x": {"input_per_mtok": 2, "output_per_mtok": 2}}}`, "same name"},
		{"long context without threshold", `{"models": {"x": {"input_per_mtok": 1, "output_per_mtok": 1, "long_context": {"input_per_mtok": 2}}}}`, "above_tokens"},
		{"long context bad rate", `{"models": {"x": {"input_per_mtok": 1, "output_per_mtok": 1, "long_context": {"above_tokens": 10, "output_per_mtok": -2}}}}`, "long_context: output_per_mtok"},
		{"trailing data", `{"models": {}} {"models": {}}`, "after the price object"},
	}
	for _, c := range cases {
		tbl, err := cost.Default().LoadJSON(strings.NewReader(c.file))
		if err == nil || tbl != nil {
			t.Errorf("%s: LoadJSON = %v, %v; want an error", c.name, tbl, err)
			continue
		}
		if !errors.Is(err, cost.ErrPriceFile) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %q; want ErrPriceFile saying %q", c.name, err, c.says)
		}
	}
	// A tiny rate is a rate: 1e-400 per million is zero per token.
	if _, err := cost.Default().LoadJSON(strings.NewReader(`{"models": {"x": {"input_per_mtok": 1e-400, "output_per_mtok": 1}}}`)); err != nil {
		t.Errorf("1e-400: %v", err)
	}
}

func TestLoadJSONTooLarge(t *testing.T) {
	big := `{"models": {}, "table": "` + strings.Repeat("x", 8<<20) + `"}`
	if _, err := cost.Default().LoadJSON(strings.NewReader(big)); !errors.Is(err, cost.ErrPriceFile) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an 8 MiB file: %v; want ErrPriceFile, larger than", err)
	}
}

func TestSummary(t *testing.T) {
	tbl := cost.Default()
	recs := []record.Record{
		{Model: "gpt-4o-mini", Usage: &record.Usage{InputTokens: 1_000_000}},     // $0.15
		{Model: "gpt-4o-mini", Usage: &record.Usage{OutputTokens: 1_000_000}},    // $0.60
		{Model: "my-deployment", Usage: &record.Usage{InputTokens: 10}},          // unknown model
		{Model: "my-deployment", Usage: &record.Usage{InputTokens: 20}},          // unknown model
		{Usage: &record.Usage{InputTokens: 20}},                                  // no model
		{Model: "gpt-4o", Outcome: record.Failure(record.ErrorRateLimit)},        // no usage
		{Model: "gpt-4o", Usage: &record.Usage{InputTokens: 1, CachedTokens: 2}}, // inconsistent usage
	}
	var s cost.Summary
	for i := range recs {
		tbl.Apply(&recs[i])
		s.Add(&recs[i])
	}
	if s.Calls != 7 || s.Priced != 2 || s.Unpriced != 4 || s.NoUsage != 1 || !closeTo(s.USD, 0.75) {
		t.Errorf("Summary = %+v; want 7 calls, 2 priced ($0.75), 4 unpriced, 1 without usage", s)
	}
	if len(s.UnpricedModels) != 3 || s.UnpricedModels["my-deployment"] != 2 || s.UnpricedModels[""] != 1 || s.UnpricedModels["gpt-4o"] != 1 {
		t.Errorf("UnpricedModels = %v", s.UnpricedModels)
	}
}

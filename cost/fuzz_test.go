package cost_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// FuzzLookup: resolution never panics, and is idempotent: the entry a name
// resolves to resolves to itself, with the same price.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		"gpt-4o-2024-08-06", "GPT-4o-mini-2099-01-01", " models/gemini-2.5-flash-001 ",
		"projects/p/locations/l/publishers/anthropic/models/claude-opus-4@20250514",
		"publishers/google/models/gemini-2.5-flash-preview-05-20", "azure/gpt-35-turbo-0125",
		"ft:gpt-4o-mini-2024-07-18:org::id", "gemini-2.0-flash-thinking-exp-01-21",
		"models/", "tunedModels/x", "a/models/b/models/c", "-", "--2024-08-06", "@", "ft:", "Ⅻ-ǅ-İ",
		"global.anthropic.claude-opus-4-7-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"arn:aws:bedrock:us-west-2:123456789012:inference-profile/global.anthropic.claude-sonnet-4-6",
		"arn:aws:bedrock:us-east-1::foundation-model/", "arn:::::inference-profile/x.y-v1:0", "global.", "a.-v1:0",
		"bedrock/anthropic.claude-sonnet-4-6-v2:3", "x.y-v1-v2-v3:4",
	} {
		f.Add(s)
	}
	tbl := cost.Default()
	f.Fuzz(func(t *testing.T, model string) {
		p, name, ok := tbl.Lookup(model)
		if !ok {
			if name != "" || p != (cost.Price{}) {
				t.Fatalf("Lookup(%q): not found, yet %q %+v", model, name, p)
			}
			return
		}
		p2, name2, ok2 := tbl.Lookup(name)
		if !ok2 || name2 != name || p2 != p {
			t.Fatalf("Lookup(%q) = %q, but Lookup(%q) = %q, %v", model, name, name, name2, ok2)
		}
		if _, ok := tbl.Cost(model, record.Usage{InputTokens: 1, OutputTokens: 1}); !ok {
			t.Fatalf("Cost(%q): a known model is not priced", model)
		}
	})
}

// FuzzLoadJSON: a price file either loads or fails with ErrPriceFile,
// never panics, and what it loads prices without negative or NaN figures
// and resolves idempotently.
func FuzzLoadJSON(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "table": "t", "models": {"m": {"input_per_mtok": 1, "output_per_mtok": 2}}}`,
		`{"models": {"M@1": {"input_per_mtok": 1e-3, "output_per_mtok": 2E+2, "cache_read_per_mtok": 0.1,
		  "cache_write_per_mtok": 1.25, "cache_write_1h_per_mtok": 2, "reasoning_per_mtok": 3,
		  "long_context": {"above_tokens": 200000, "input_per_mtok": 2.5}}}}`,
		`{"models": {"x": {"input_per_mtok": -1, "output_per_mtok": 1}}}`,
		`{"models": {}}`, `{}`, `[]`, `null`, ``, `{"models": {"x": {"input_per_mtok": 1e999, "output_per_mtok": 1}}}`,
	} {
		f.Add(s)
	}
	var empty cost.Table
	f.Fuzz(func(t *testing.T, file string) {
		tbl, err := empty.LoadJSON(strings.NewReader(file))
		if err != nil {
			if !errors.Is(err, cost.ErrPriceFile) || tbl != nil {
				t.Fatalf("LoadJSON: %v, %v; want nil and ErrPriceFile", tbl, err)
			}
			return
		}
		u := record.Usage{InputTokens: 300_000, CachedTokens: 1_000, CacheWriteTokens: 2_000, CacheWrite1hTokens: 500, OutputTokens: 5_000, ReasoningTokens: 1_000}
		for _, m := range tbl.Models() {
			p, name, ok := tbl.Lookup(m)
			if !ok || name != m {
				t.Fatalf("model %q resolves to %q, %v", m, name, ok)
			}
			if usd, ok := p.Cost(u); ok && !(usd >= 0) {
				t.Fatalf("model %q costs %v", m, usd)
			}
		}
	})
}

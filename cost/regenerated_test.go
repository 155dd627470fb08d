package cost_test

import (
	"os"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// Bills computed by hand from LiteLLM's rates of 2026-07-24, for the
// models the table of 2026-03-03 priced wrongly or not at all. Each
// comment is per-token rate × tokens; rates() pins the rates, so a
// regeneration that changes them says which bill to recompute.
func TestRegeneratedBills(t *testing.T) {
	t.Run("claude sonnet 4.6 at 300K input: standard rates across the 1M window", func(t *testing.T) {
		// Since 2026-03-13 Anthropic bills Sonnet 4.6 at its standard
		// rates whatever the prompt's length: input $3/M, output $15/M,
		// cache read $0.30/M, and no tier above 200K.
		rates(t, "claude-sonnet-4-6", cost.Price{Rates: cost.Rates{Input: 3e-06, Output: 1.5e-05, CacheRead: 3e-07, CacheWrite: 3.75e-06, CacheWrite1h: 6e-06}})
		// A 300,000-token prompt, 275,000 of it read from the cache, and
		// 10,000 output tokens:
		u := record.Usage{InputTokens: 300_000, CachedTokens: 275_000, OutputTokens: 10_000, TotalTokens: 310_000}
		//   fresh input   25,000 × 3e-06   = 0.0750
		//   cache read   275,000 × 3e-07   = 0.0825
		//   output        10,000 × 1.5e-05 = 0.1500
		//   total                            0.3075
		// The table of 2026-03-03 put the whole request in a tier above
		// 200K (input 6e-06, cache read 6e-07, output 2.25e-05):
		//   25,000 × 6e-06 + 275,000 × 6e-07 + 10,000 × 2.25e-05
		//   = 0.15 + 0.165 + 0.225 = 0.54.
		old := cost.Price{
			Rates:            cost.Rates{Input: 3e-06, Output: 1.5e-05, CacheRead: 3e-07, CacheWrite: 3.75e-06, CacheWrite1h: 6e-06},
			LongContextAbove: 200_000,
			LongContext:      cost.Rates{Input: 6e-06, Output: 2.25e-05, CacheRead: 6e-07, CacheWrite: 7.5e-06, CacheWrite1h: 1.2e-05},
		}
		wrong, _ := old.Cost(u)
		check(t, bill(t, "claude-sonnet-4-6", u), 0.3075, wrong, 0.54)

		// All 300,000 fresh and 1,000 output: 300,000 × 3e-06 + 1,000 ×
		// 1.5e-05 = 0.9 + 0.015 = 0.915 (the old tier: 1.8 + 0.0225).
		u = record.Usage{InputTokens: 300_000, OutputTokens: 1_000}
		if got := bill(t, "claude-sonnet-4-6", u); !closeTo(got, 0.915) {
			t.Errorf("300,000 fresh: %.10f, want 0.915", got)
		}
		// A dated Sonnet 4.6 name the table does not list is priced the
		// same, with no tier either.
		if got := bill(t, "claude-sonnet-4-6-20991231", u); !closeTo(got, 0.915) {
			t.Errorf("claude-sonnet-4-6-20991231: %.10f, want 0.915", got)
		}
	})

	t.Run("claude opus 4.6 at 300K input", func(t *testing.T) {
		rates(t, "claude-opus-4-6", cost.Price{Rates: cost.Rates{Input: 5e-06, Output: 2.5e-05, CacheRead: 5e-07, CacheWrite: 6.25e-06, CacheWrite1h: 1e-05}})
		u := record.Usage{InputTokens: 300_000, OutputTokens: 2_000}
		//   input   300,000 × 5e-06   = 1.50
		//   output    2,000 × 2.5e-05 = 0.05
		//   total                       1.55 (the old tier: 3.00 + 0.075)
		if got := bill(t, "claude-opus-4-6", u); !closeTo(got, 1.55) {
			t.Errorf("%.10f, want 1.55", got)
		}
	})

	t.Run("claude opus 4.7, released 2026-04-16", func(t *testing.T) {
		// input $5/M, output $25/M, cache read $0.50/M, 5-minute write
		// $6.25/M, 1-hour write $10/M.
		rates(t, "claude-opus-4-7-20260416", cost.Price{Rates: cost.Rates{Input: 5e-06, Output: 2.5e-05, CacheRead: 5e-07, CacheWrite: 6.25e-06, CacheWrite1h: 1e-05}})
		// 20,000 input: 10,000 read from the cache, 5,000 written to it
		// (2,000 of them for an hour); 2,000 output.
		u := record.Usage{InputTokens: 20_000, CachedTokens: 10_000, CacheWriteTokens: 5_000, CacheWrite1hTokens: 2_000, OutputTokens: 2_000}
		//   fresh input     5,000 × 5e-06    = 0.025
		//   cache read     10,000 × 5e-07    = 0.005
		//   5-minute write  3,000 × 6.25e-06 = 0.01875
		//   1-hour write    2,000 × 1e-05    = 0.02
		//   output          2,000 × 2.5e-05  = 0.05
		//   total                              0.11875
		if got := bill(t, "claude-opus-4-7-20260416", u); !closeTo(got, 0.11875) {
			t.Errorf("%.10f, want 0.11875", got)
		}
	})

	t.Run("gpt-5.5, released 2026-04-23, both tiers", func(t *testing.T) {
		// Up to 272,000 input tokens: input $5/M, output $30/M, cache read
		// $0.50/M; above, for the whole request: $10/M, $45/M, $1/M.
		rates(t, "gpt-5.5-2026-04-23", cost.Price{
			Rates:            cost.Rates{Input: 5e-06, Output: 3e-05, CacheRead: 5e-07},
			LongContextAbove: 272_000,
			LongContext:      cost.Rates{Input: 1e-05, Output: 4.5e-05, CacheRead: 1e-06},
		})
		// prompt_tokens 100,000 of which cached 40,000; completion 5,000
		// of which reasoning 2,000 (priced as output).
		u := record.Usage{InputTokens: 100_000, CachedTokens: 40_000, OutputTokens: 5_000, ReasoningTokens: 2_000}
		//   fresh input   60,000 × 5e-06 = 0.30
		//   cache read    40,000 × 5e-07 = 0.02
		//   output         5,000 × 3e-05 = 0.15
		//   total                          0.47
		if got := bill(t, "gpt-5.5-2026-04-23", u); !closeTo(got, 0.47) {
			t.Errorf("below 272K: %.10f, want 0.47", got)
		}
		// 300,000 input (above 272,000), 1,000 output:
		//   300,000 × 1e-05 + 1,000 × 4.5e-05 = 3.0 + 0.045 = 3.045
		u = record.Usage{InputTokens: 300_000, OutputTokens: 1_000}
		if got := bill(t, "gpt-5.5", u); !closeTo(got, 3.045) {
			t.Errorf("above 272K: %.10f, want 3.045", got)
		}
	})

	t.Run("gpt-5.4, released 2026-03-05", func(t *testing.T) {
		rates(t, "gpt-5.4", cost.Price{
			Rates:            cost.Rates{Input: 2.5e-06, Output: 1.5e-05, CacheRead: 2.5e-07},
			LongContextAbove: 272_000,
			LongContext:      cost.Rates{Input: 5e-06, Output: 2.25e-05, CacheRead: 5e-07},
		})
		//   10,000 × 2.5e-06 + 1,000 × 1.5e-05 = 0.025 + 0.015 = 0.04
		if got := bill(t, "gpt-5.4-2026-03-05", record.Usage{InputTokens: 10_000, OutputTokens: 1_000}); !closeTo(got, 0.04) {
			t.Errorf("%.10f, want 0.04", got)
		}
	})

	t.Run("claude sonnet 4.5 keeps its tier above 200K", func(t *testing.T) {
		// LiteLLM still prices Sonnet 4.5 above 200,000 input tokens at
		// input $6/M and output $22.50/M, for the whole request.
		//   250,000 × 6e-06 + 1,000 × 2.25e-05 = 1.5 + 0.0225 = 1.5225
		if got := bill(t, "claude-sonnet-4-5", record.Usage{InputTokens: 250_000, OutputTokens: 1_000}); !closeTo(got, 1.5225) {
			t.Errorf("%.10f, want 1.5225", got)
		}
	})

	t.Run("bedrock inference profiles", func(t *testing.T) {
		// The US profile of Sonnet 4.6 costs 10% more than the model in
		// its own region, and the global profile the same:
		//   us:     10,000 × 3.3e-06 + 1,000 × 1.65e-05 = 0.033 + 0.0165 = 0.0495
		//   global: 10,000 × 3e-06   + 1,000 × 1.5e-05  = 0.030 + 0.015  = 0.045
		u := record.Usage{InputTokens: 10_000, OutputTokens: 1_000}
		if got := bill(t, "us.anthropic.claude-sonnet-4-6", u); !closeTo(got, 0.0495) {
			t.Errorf("us.: %.10f, want 0.0495", got)
		}
		if got := bill(t, "global.anthropic.claude-sonnet-4-6", u); !closeTo(got, 0.045) {
			t.Errorf("global.: %.10f, want 0.045", got)
		}
		if got := bill(t, "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-6", u); !closeTo(got, 0.0495) {
			t.Errorf("an inference-profile ARN: %.10f, want 0.0495", got)
		}
	})
}

// LoadLiteLLM reads LiteLLM's own entries (an excerpt of the file the
// table was generated from) into the prices the generator wrote: the
// run-time loader and the generator convert the same way.
func TestLoadLiteLLMMatchesBuiltin(t *testing.T) {
	f, err := os.Open("testdata/litellm_excerpt.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	date := time.Date(2026, 11, 20, 15, 4, 5, 0, time.FixedZone("", -8*3600))
	tbl, err := cost.LoadLiteLLM(f, date)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name() != "litellm-2026-11-20" {
		t.Errorf("Name() = %q; want the date of the file, in UTC", tbl.Name())
	}
	if d, ok := tbl.Date(); !ok || !d.Equal(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Date() = %v, %v", d, ok)
	}
	for _, m := range []string{"claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7", "claude-sonnet-4-5", "gpt-5.5", "gpt-5.4", "gemini-2.5-pro", "anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-6", "global.anthropic.claude-sonnet-4-6"} {
		got, gotName, ok := tbl.Lookup(m)
		want, wantName, _ := cost.Builtin().Lookup(m)
		if !ok || got != want || gotName != wantName {
			t.Errorf("%s: loaded %q %+v, %v; built in %q %+v", m, gotName, got, ok, wantName, want)
		}
	}
	// The table is the file's alone: a model it does not hold is unknown,
	// not the built-in table's.
	if _, _, ok := tbl.Lookup("gpt-4o"); ok {
		t.Error("gpt-4o, which the file lacks, is priced")
	}
	// The file's placeholder for a model without a price is no price.
	if _, _, ok := tbl.Lookup("anthropic.claude-mythos-preview"); ok {
		t.Error("a model LiteLLM prices at 0 on Bedrock is priced")
	}
	c, ok := tbl.Cost("claude-sonnet-4-6", record.Usage{InputTokens: 300_000, CachedTokens: 275_000, OutputTokens: 10_000})
	if !ok || !closeTo(c.USD, 0.3075) || c.Table != "litellm-2026-11-20" {
		t.Errorf("Cost = %+v, %v; want $0.3075 from litellm-2026-11-20", c, ok)
	}
}

package cost_test

import (
	"math"
	"testing"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// close reports whether got is want within a relative 1e-12: float64 sums
// of six products are exact to about 1e-16, so anything looser than 1e-12
// would be a different figure, not rounding.
func closeTo(got, want float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= 1e-12*math.Max(math.Abs(got), math.Abs(want))
}

// rates looks model up in the default table and checks that the rates the
// golden bills below were computed from are still the table's: after a
// regeneration that changed them, this says which, and the bill's
// comment must be recomputed by hand.
func rates(t *testing.T, model string, want cost.Price) cost.Price {
	t.Helper()
	p, name, ok := cost.Default().Lookup(model)
	if !ok {
		t.Fatalf("Lookup(%q): unknown to %s", model, cost.Default().Name())
	}
	if p != want {
		t.Fatalf("Lookup(%q) = %s %+v; the bill below was computed by hand from %+v", model, name, p, want)
	}
	return p
}

func bill(t *testing.T, model string, u record.Usage) float64 {
	t.Helper()
	c, ok := cost.Default().Cost(model, u)
	if !ok {
		t.Fatalf("Cost(%q, %+v): not priced", model, u)
	}
	if c.Table != cost.Default().Name() {
		t.Errorf("Cost.Table = %q, want %q", c.Table, cost.Default().Name())
	}
	return c.USD
}

// Each golden bill is computed by hand in its comment from the table's
// rates, and set against the figure a tool gets that counts some tokens
// twice. The wrong figures are computed here, the way those tools do, so
// that the test shows the difference rather than asserting a constant.
func TestGoldenBills(t *testing.T) {
	t.Run("openai gpt-4o with cached tokens", func(t *testing.T) {
		// gpt-4o: input $2.50/M, output $10/M, cache read $1.25/M.
		p := rates(t, "gpt-4o-2024-08-06", cost.Price{Rates: cost.Rates{Input: 2.5e-06, Output: 1e-05, CacheRead: 1.25e-06}})
		// prompt_tokens 10,000 of which cached_tokens 6,000; completion 500.
		u := record.Usage{InputTokens: 10_000, CachedTokens: 6_000, OutputTokens: 500, TotalTokens: 10_500}
		//   fresh input   4,000 × 2.5e-06  = 0.0100
		//   cache read    6,000 × 1.25e-06 = 0.0075
		//   output          500 × 1e-05    = 0.0050
		//   total                            0.0225
		const want = 0.0225
		// The double count: prompt_tokens all at the input rate, and the
		// cached part again at the cache rate: 0.025 + 0.0075 + 0.005.
		wrong := float64(u.InputTokens)*p.Input + float64(u.CachedTokens)*p.CacheRead + float64(u.OutputTokens)*p.Output
		check(t, bill(t, "gpt-4o-2024-08-06", u), want, wrong, 0.0375)
	})

	t.Run("gemini 2.5 pro above 200k", func(t *testing.T) {
		// gemini-2.5-pro: up to 200,000 input tokens input $1.25/M, output
		// $10/M, cache read $0.125/M; above, for the whole request, input
		// $2.50/M, output $15/M, cache read $0.25/M. Reasoning (thoughts)
		// is priced as output.
		p := rates(t, "gemini-2.5-pro", cost.Price{
			Rates:            cost.Rates{Input: 1.25e-06, Output: 1e-05, CacheRead: 1.25e-07},
			LongContextAbove: 200_000,
			LongContext:      cost.Rates{Input: 2.5e-06, Output: 1.5e-05, CacheRead: 2.5e-07, CacheWrite: 2.5e-07},
		})
		// promptTokenCount 250,000 of which cachedContentTokenCount
		// 100,000; candidates 1,000 + thoughts 3,000 = 4,000 output.
		u := record.Usage{InputTokens: 250_000, CachedTokens: 100_000, OutputTokens: 4_000, ReasoningTokens: 3_000, TotalTokens: 254_000}
		//   fresh input  150,000 × 2.5e-06 = 0.375
		//   cache read   100,000 × 2.5e-07 = 0.025
		//   output         1,000 × 1.5e-05 = 0.015
		//   reasoning      3,000 × 1.5e-05 = 0.045
		//   total                            0.460
		const want = 0.46
		// The double count: thoughts added on top of an output count that
		// already holds them: 7,000 output tokens, 0.105 instead of 0.06.
		l := p.LongContext
		wrong := float64(u.InputTokens-u.CachedTokens)*l.Input + float64(u.CachedTokens)*l.CacheRead + float64(u.OutputTokens+u.ReasoningTokens)*l.Output
		check(t, bill(t, "gemini-2.5-pro", u), want, wrong, 0.505)

		// The same usage at 200,000 input tokens is the base tier: 100,000
		// fresh × 1.25e-06 + 100,000 cached × 1.25e-07 + 4,000 × 1e-05
		// = 0.125 + 0.0125 + 0.04 = 0.1775.
		u.InputTokens = 200_000
		if got := bill(t, "gemini-2.5-pro", u); !closeTo(got, 0.1775) {
			t.Errorf("at 200,000 input tokens: %.10f, want 0.1775 (the base tier)", got)
		}
		// One token more and the whole request moves to the long tier:
		// 100,001 × 2.5e-06 + 100,000 × 2.5e-07 + 4,000 × 1.5e-05
		// = 0.2500025 + 0.025 + 0.06 = 0.3350025.
		u.InputTokens = 200_001
		if got := bill(t, "gemini-2.5-pro", u); !closeTo(got, 0.3350025) {
			t.Errorf("at 200,001 input tokens: %.10f, want 0.3350025 (the long tier)", got)
		}
	})

	t.Run("anthropic claude sonnet 4.5 with 5m and 1h cache writes", func(t *testing.T) {
		// claude-sonnet-4-5: input $3/M, output $15/M, cache read $0.30/M,
		// 5-minute write $3.75/M, 1-hour write $6/M (2× input: derived,
		// LiteLLM lacks it).
		p := rates(t, "claude-sonnet-4-5-20250929", cost.Price{
			Rates:            cost.Rates{Input: 3e-06, Output: 1.5e-05, CacheRead: 3e-07, CacheWrite: 3.75e-06, CacheWrite1h: 6e-06},
			LongContextAbove: 200_000,
			LongContext:      cost.Rates{Input: 6e-06, Output: 2.25e-05, CacheRead: 6e-07, CacheWrite: 7.5e-06, CacheWrite1h: 1.2e-05},
		})
		// Anthropic's usage: input_tokens 5,000, cache_read_input_tokens
		// 30,000, cache_creation_input_tokens 15,000 of which 5,000 with
		// the 1-hour lifetime; output 2,000. Usage's InputTokens is their
		// sum, 50,000.
		u := record.Usage{InputTokens: 50_000, CachedTokens: 30_000, CacheWriteTokens: 15_000, CacheWrite1hTokens: 5_000, OutputTokens: 2_000, TotalTokens: 52_000}
		//   fresh input    5,000 × 3e-06    = 0.0150
		//   cache read    30,000 × 3e-07    = 0.0090
		//   5m write      10,000 × 3.75e-06 = 0.0375
		//   1h write       5,000 × 6e-06    = 0.0300
		//   output         2,000 × 1.5e-05  = 0.0300
		//   total                             0.1215
		const want = 0.1215
		got := bill(t, "claude-sonnet-4-5-20250929", u)
		// The double count: the cache tokens, already in InputTokens, added
		// on top again: 50,000 at the input rate plus the cache parts at
		// their rates, 0.15 + 0.009 + 0.0375 + 0.03 + 0.03.
		wrong := float64(u.InputTokens)*p.Input + float64(u.CachedTokens)*p.CacheRead +
			float64(u.CacheWriteTokens-u.CacheWrite1hTokens)*p.CacheWrite + float64(u.CacheWrite1hTokens)*p.CacheWrite1h +
			float64(u.OutputTokens)*p.Output
		check(t, got, want, wrong, 0.2565)
		// And the undercount: every write at the 5-minute rate,
		// 15,000 × 3.75e-06 = 0.05625 instead of 0.0675.
		under := float64(u.InputTokens-u.CachedTokens-u.CacheWriteTokens)*p.Input + float64(u.CachedTokens)*p.CacheRead +
			float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output
		check(t, got, want, under, 0.11025)
	})
}

func check(t *testing.T, got, want, wrong, wrongWant float64) {
	t.Helper()
	if !closeTo(got, want) {
		t.Errorf("cost = %.12f, want %.12f", got, want)
	}
	if !closeTo(wrong, wrongWant) {
		t.Errorf("the wrong tool's figure = %.12f, want %.12f: the comparison is not the one described", wrong, wrongWant)
	}
	if closeTo(got, wrong) {
		t.Errorf("cost %.12f equals the double-counted %.12f", got, wrong)
	}
}

// The fallbacks of Rates: a rate the table lacks is never free.
func TestFallbacks(t *testing.T) {
	u := record.Usage{InputTokens: 1_000, CachedTokens: 200, CacheWriteTokens: 300, CacheWrite1hTokens: 100, OutputTokens: 400, ReasoningTokens: 150}
	cases := []struct {
		name string
		p    cost.Price
		want float64
	}{
		// Only input and output: cache reads and writes at the input rate,
		// reasoning at the output rate: 1,000 × 1e-06 + 400 × 2e-06.
		{"input and output only", cost.Price{Rates: cost.Rates{Input: 1e-06, Output: 2e-06}}, 0.0018},
		// A cache write rate but no 1-hour rate: the 1-hour writes at the
		// write rate. 500 × 1e-06 + 200 × 1e-07 + 300 × 1.5e-06 + 400 × 2e-06
		// = 0.0005 + 0.00002 + 0.00045 + 0.0008.
		{"no 1h rate", cost.Price{Rates: cost.Rates{Input: 1e-06, Output: 2e-06, CacheRead: 1e-07, CacheWrite: 1.5e-06}}, 0.00177},
		// A reasoning rate of its own: 250 × 2e-06 + 150 × 5e-06 for the
		// output, 500 × 1e-06 + 200 × 1e-07 + 200 × 1.5e-06 + 100 × 3e-06
		// for the input: 0.0005 + 0.00075 + 0.0005 + 0.00002 + 0.0003 + 0.0003.
		{"reasoning priced apart", cost.Price{Rates: cost.Rates{Input: 1e-06, Output: 2e-06, CacheRead: 1e-07, CacheWrite: 1.5e-06, CacheWrite1h: 3e-06, Reasoning: 5e-06}}, 0.00237},
		// A free model is free, fallbacks and all.
		{"free", cost.Price{}, 0},
	}
	for _, c := range cases {
		got, ok := c.p.Cost(u)
		if !ok || !closeTo(got, c.want) {
			t.Errorf("%s: Cost = %.12f, %v; want %.12f, true", c.name, got, ok, c.want)
		}
	}
}

// A long-context tier that lacks a rate takes the base rate; the
// remaining fallbacks then apply within the tier.
func TestLongContextFallbacks(t *testing.T) {
	p := cost.Price{
		Rates:            cost.Rates{Input: 1e-06, Output: 2e-06, CacheRead: 1e-07},
		LongContextAbove: 1_000,
		LongContext:      cost.Rates{Input: 3e-06}, // output and cache read: the base's
	}
	u := record.Usage{InputTokens: 1_001, CachedTokens: 1, OutputTokens: 10, ReasoningTokens: 4}
	// 1,000 × 3e-06 + 1 × 1e-07 + 10 × 2e-06 = 0.003 + 0.0000001 + 0.00002.
	if got, ok := p.Cost(u); !ok || !closeTo(got, 0.0030201) {
		t.Errorf("Cost = %.12f, %v; want 0.0030201", got, ok)
	}
	// Without a base cache rate either, cached tokens are the tier's input.
	p.CacheRead = 0
	// 1,001 × 3e-06 + 10 × 2e-06 = 0.003003 + 0.00002.
	if got, ok := p.Cost(u); !ok || !closeTo(got, 0.003023) {
		t.Errorf("no cache rate anywhere: Cost = %.12f, %v; want 0.003023", got, ok)
	}
}

// Usage that breaks its one meaning is not priced: any figure would be a
// guess, and a provider mapping that adds parts on top shows as unpriced
// calls instead of wrong spend.
func TestInconsistentUsage(t *testing.T) {
	p := cost.Price{Rates: cost.Rates{Input: 1e-06, Output: 2e-06}}
	for _, u := range []record.Usage{
		{InputTokens: 100, CachedTokens: 101},
		{InputTokens: 100, CachedTokens: 60, CacheWriteTokens: 41},
		{InputTokens: 100, CacheWriteTokens: 10, CacheWrite1hTokens: 11},
		{OutputTokens: 10, ReasoningTokens: 11},
		{InputTokens: -1},
		{OutputTokens: -1},
		{InputTokens: 10, CachedTokens: -1},
		{InputTokens: 10, CacheWriteTokens: -1, CacheWrite1hTokens: -2},
		{OutputTokens: 10, ReasoningTokens: -1},
	} {
		if got, ok := p.Cost(u); ok {
			t.Errorf("Cost(%+v) = %v, true; want not priced", u, got)
		}
	}
	// Zero usage of a known model costs zero, and is priced.
	if got, ok := p.Cost(record.Usage{}); !ok || got != 0 {
		t.Errorf("Cost(zero usage) = %v, %v; want 0, true", got, ok)
	}
}

func TestBadRates(t *testing.T) {
	u := record.Usage{InputTokens: 10, OutputTokens: 10}
	for _, p := range []cost.Price{
		{Rates: cost.Rates{Input: -1e-06, Output: 1e-06}},
		{Rates: cost.Rates{Input: math.NaN(), Output: 1e-06}},
		{Rates: cost.Rates{Input: math.Inf(1), Output: 1e-06}},
		{Rates: cost.Rates{Input: math.MaxFloat64, Output: math.MaxFloat64}},
	} {
		if got, ok := p.Cost(u); ok {
			t.Errorf("Cost at %+v = %v, true; want not priced", p, got)
		}
	}
}

func TestApply(t *testing.T) {
	tbl := cost.Default()
	r := record.Record{Model: "gpt-4o-mini-2024-07-18", Usage: &record.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}}
	if !tbl.Apply(&r) || r.Cost == nil {
		t.Fatalf("Apply: not priced")
	}
	// gpt-4o-mini: $0.15/M input, $0.60/M output.
	if !closeTo(r.Cost.USD, 0.75) || r.Cost.Table != tbl.Name() {
		t.Errorf("Cost = %+v, want 0.75 from %s", *r.Cost, tbl.Name())
	}

	// A record that cannot be priced loses any cost it had: it must not
	// keep a figure from another table.
	for _, r := range []record.Record{
		{Model: "my-prod-deployment", Usage: &record.Usage{InputTokens: 10}},
		{Model: "gpt-4o"},
		{Usage: &record.Usage{InputTokens: 10}},
		{Model: "gpt-4o", Usage: &record.Usage{InputTokens: 10, CachedTokens: 11}},
	} {
		r.Cost = &record.Cost{USD: 1, Table: "other"}
		if tbl.Apply(&r) || r.Cost != nil {
			t.Errorf("Apply(%q, %+v) = priced %+v; want unpriced and no cost", r.Model, r.Usage, r.Cost)
		}
	}
}

// A nil *Table is the default table, and the zero Table prices nothing.
func TestZeroValues(t *testing.T) {
	var nilTable *cost.Table
	u := record.Usage{InputTokens: 10, OutputTokens: 10}
	c, ok := nilTable.Cost("gpt-4o", u)
	want, _ := cost.Default().Cost("gpt-4o", u)
	if !ok || c != want || nilTable.Name() != cost.Default().Name() || nilTable.Len() != cost.Default().Len() {
		t.Errorf("nil table: %+v, %v, %q; want the default table's %+v", c, ok, nilTable.Name(), want)
	}
	var zero cost.Table
	if c, ok := zero.Cost("gpt-4o", u); ok {
		t.Errorf("zero table priced gpt-4o: %+v", c)
	}
	if _, _, ok := zero.Lookup("gpt-4o"); ok || zero.Len() != 0 || zero.Name() != "" {
		t.Errorf("zero table is not empty")
	}
}

func TestWith(t *testing.T) {
	base := cost.Default()
	mine := cost.Price{Rates: cost.Rates{Input: 1e-06, Output: 1e-06}}
	t2 := base.With("acme-2026-11", map[string]cost.Price{
		"My-Deployment": mine,
		"gpt-4o":        mine,
		"":              mine, // ignored
	})
	if t2.Name() != "acme-2026-11" || t2.Len() != base.Len()+1 {
		t.Errorf("With: name %q, %d models; want acme-2026-11, %d", t2.Name(), t2.Len(), base.Len()+1)
	}
	if p, name, ok := t2.Lookup("my-deployment"); !ok || p != mine || name != "my-deployment" {
		t.Errorf("Lookup(my-deployment) = %+v, %q, %v", p, name, ok)
	}
	// The override reaches the names that resolve to it.
	if p, _, _ := t2.Lookup("gpt-4o-2099-01-01"); p != mine {
		t.Errorf("gpt-4o-2099-01-01 does not resolve to the override: %+v", p)
	}
	// The base table is unchanged.
	if p, _, _ := base.Lookup("gpt-4o"); p == mine {
		t.Errorf("With changed the default table")
	}
	if _, _, ok := base.Lookup("my-deployment"); ok {
		t.Errorf("With added to the default table")
	}
	c, _ := t2.Cost("gpt-4o", record.Usage{InputTokens: 1})
	if c.Table != "acme-2026-11" {
		t.Errorf("Cost.Table = %q, want the new table's name", c.Table)
	}
	if got := base.With("", nil).Name(); got != base.Name()+"+custom" {
		t.Errorf("With(\"\") named %q, want %q", got, base.Name()+"+custom")
	}
	if got := cost.NewTable("mine", map[string]cost.Price{"x": mine}); got.Len() != 1 || got.Name() != "mine" {
		t.Errorf("NewTable: %d models named %q", got.Len(), got.Name())
	}
}

// Tables are read by the recorder's goroutine, a report and an exporter at
// once, and the default table is built by whichever asks first: run under
// -race, this shows none of that races.
func TestConcurrentUse(t *testing.T) {
	done := make(chan float64)
	for i := range 8 {
		go func() {
			tbl := cost.Default()
			if i%2 == 1 {
				tbl = tbl.With("", map[string]cost.Price{"x": {Rates: cost.Rates{Input: 1e-06}}})
			}
			c, _ := tbl.Cost("gpt-4o", record.Usage{InputTokens: 1_000_000})
			done <- c.USD
		}()
	}
	for range 8 {
		if usd := <-done; !closeTo(usd, 2.5) {
			t.Errorf("gpt-4o, 1M input tokens: $%v, want $2.50", usd)
		}
	}
}

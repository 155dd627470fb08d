package cost

import (
	"math"

	"github.com/llmhistory/llmhistory/record"
)

// Rates are per-token prices in US dollars, one for each part of
// [record.Usage]. A zero rate is one the table lacks, and is priced as
// follows (never as free):
//
//   - CacheRead and CacheWrite: as Input;
//   - CacheWrite1h: as CacheWrite (after its own fallback);
//   - Reasoning: as Output.
//
// A model that really is free has Input and Output zero, and so every
// fallback is zero too.
type Rates struct {
	Input        float64 // a prompt token neither read from nor written to the cache
	Output       float64 // a generated token that is not reasoning
	CacheRead    float64 // a prompt token read from the cache
	CacheWrite   float64 // a prompt token written to the cache for the default lifetime (Anthropic: 5 minutes)
	CacheWrite1h float64 // a prompt token written to the cache for one hour (Anthropic)
	Reasoning    float64 // a reasoning (thinking) token, where priced apart from output
}

// Price is what one model costs: its Rates, and for models whose price
// rises with the prompt's length, a second set of rates for requests whose
// InputTokens exceed LongContextAbove (Gemini 2.5 Pro and Claude Sonnet 4
// above 200,000 tokens). The whole request is then priced at LongContext,
// as the providers bill it, not only the tokens past the threshold.
//
// A LongContext rate that is zero is the base rate, where the base has
// one; then the fallbacks of [Rates] apply within the tier.
type Price struct {
	Rates
	LongContextAbove int   // input tokens; 0: one tier
	LongContext      Rates // rates when InputTokens > LongContextAbove
}

// rates returns the rates that apply to a request of inputTokens, with
// every fallback resolved.
func (p *Price) rates(inputTokens int) Rates {
	if p.LongContextAbove <= 0 || inputTokens <= p.LongContextAbove {
		return p.Rates.filled()
	}
	l, b := p.LongContext, p.Rates
	if l.Input == 0 {
		l.Input = b.Input
	}
	if l.Output == 0 {
		l.Output = b.Output
	}
	if l.CacheRead == 0 {
		l.CacheRead = b.CacheRead
	}
	if l.CacheWrite == 0 {
		l.CacheWrite = b.CacheWrite
	}
	if l.CacheWrite1h == 0 {
		l.CacheWrite1h = b.CacheWrite1h
	}
	if l.Reasoning == 0 {
		l.Reasoning = b.Reasoning
	}
	return l.filled()
}

// nonNegative is false for a negative or NaN rate.
func (r *Rates) nonNegative() bool {
	return r.Input >= 0 && r.Output >= 0 && r.CacheRead >= 0 &&
		r.CacheWrite >= 0 && r.CacheWrite1h >= 0 && r.Reasoning >= 0
}

func (r Rates) filled() Rates {
	if r.CacheRead == 0 {
		r.CacheRead = r.Input
	}
	if r.CacheWrite == 0 {
		r.CacheWrite = r.Input
	}
	if r.CacheWrite1h == 0 {
		r.CacheWrite1h = r.CacheWrite
	}
	if r.Reasoning == 0 {
		r.Reasoning = r.Output
	}
	return r
}

// Cost returns what a call with usage u cost at price p, in US dollars.
// Every token is priced exactly once, by the one meaning of
// [record.Usage]: the cache counts are parts of InputTokens and reasoning
// is part of OutputTokens, so
//
//	(InputTokens − CachedTokens − CacheWriteTokens) × Input
//	+ CachedTokens × CacheRead
//	+ (CacheWriteTokens − CacheWrite1hTokens) × CacheWrite
//	+ CacheWrite1hTokens × CacheWrite1h
//	+ (OutputTokens − ReasoningTokens) × Output
//	+ ReasoningTokens × Reasoning
//
// at the rates of the tier the request's InputTokens fall in.
//
// It reports false, and no cost, for usage that breaks that meaning: a
// negative count, or parts larger than their whole (CachedTokens +
// CacheWriteTokens > InputTokens, CacheWrite1hTokens > CacheWriteTokens,
// ReasoningTokens > OutputTokens): any figure for such usage would be a
// guess. It also reports false for a price whose rates are negative or not
// finite. TotalTokens is not used.
func (p Price) Cost(u record.Usage) (float64, bool) {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedTokens < 0 ||
		u.CacheWriteTokens < 0 || u.CacheWrite1hTokens < 0 || u.ReasoningTokens < 0 {
		return 0, false
	}
	// Non-negative counts: neither subtraction can overflow.
	fresh := u.InputTokens - u.CachedTokens - u.CacheWriteTokens
	write5m := u.CacheWriteTokens - u.CacheWrite1hTokens
	visible := u.OutputTokens - u.ReasoningTokens
	if fresh < 0 || write5m < 0 || visible < 0 {
		return 0, false
	}
	r := p.rates(u.InputTokens)
	if !r.nonNegative() {
		return 0, false
	}
	usd := float64(fresh)*r.Input +
		float64(u.CachedTokens)*r.CacheRead +
		float64(write5m)*r.CacheWrite +
		float64(u.CacheWrite1hTokens)*r.CacheWrite1h +
		float64(visible)*r.Output +
		float64(u.ReasoningTokens)*r.Reasoning
	// An infinite rate, or a product too large for float64, shows here
	// as +Inf or NaN (∞ × 0 tokens).
	if !(usd >= 0) || math.IsInf(usd, 1) {
		return 0, false
	}
	return usd, true
}

// Cost prices one call: the model as a provider returned it, resolved by
// [Table.Lookup], and its usage. It reports false, and no cost, when the
// model is unknown or the usage is inconsistent (see [Price.Cost]); an
// unknown model is never priced at zero.
func (t *Table) Cost(model string, u record.Usage) (record.Cost, bool) {
	t = t.orDefault()
	e, ok := t.find(model)
	if !ok {
		return record.Cost{}, false
	}
	usd, ok := e.price.Cost(u)
	if !ok {
		return record.Cost{}, false
	}
	return record.Cost{USD: usd, Table: t.name}, true
}

// Apply prices r from its Model and Usage and sets r.Cost. When r cannot
// be priced (no model, no usage, an unknown model, inconsistent usage) it
// sets r.Cost to nil, so that a record never carries a cost from another
// table, and reports false: that record is an unpriced call.
//
// Apply allocates the one [record.Cost] it points r at; [Table.Cost] does
// not allocate.
func (t *Table) Apply(r *record.Record) bool {
	if r.Usage == nil || r.Model == "" {
		r.Cost = nil
		return false
	}
	c, ok := t.Cost(r.Model, *r.Usage)
	if !ok {
		r.Cost = nil
		return false
	}
	r.Cost = &c
	return true
}

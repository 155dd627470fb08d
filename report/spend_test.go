package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// spendRecords is a small history whose spend figures are worked out by
// hand in TestSpend.
func spendRecords() []record.Record {
	priced := func(r record.Record, usd float64, table string) record.Record {
		r.Cost = &record.Cost{USD: usd, Table: table}
		return r
	}
	usage := func(in, cached, written int) *record.Usage {
		return &record.Usage{InputTokens: in, CachedTokens: cached, CacheWriteTokens: written, OutputTokens: 10, TotalTokens: in + 10}
	}

	r1 := call("r1", 0) // ok, once: user, T1
	r1.Model, r1.TraceID, r1.Usage = "m-a", "T1", usage(1000, 400, 0)
	r1 = priced(r1, 0.10, "t-A")

	r2 := call("r2", 1) // ok after 3 attempts: agent, T2
	r2.Model, r2.TraceID, r2.Speaker, r2.Attempts, r2.Usage = "m-a", "T2", record.SpeakerAgent, 3, usage(500, 0, 100)
	r2 = priced(r2, 0.30, "t-A")

	r3 := call("r3", 2) // failed once, with usage: a stream cut half way
	r3.Model, r3.TraceID, r3.Speaker, r3.Usage = "m-b", "T1", record.SpeakerTool, usage(200, 0, 0)
	r3.Outcome = record.Failure(record.ErrorIncomplete)
	r3 = priced(r3, 0.05, "t-A")

	r4 := call("r4", 3) // failed twice, no usage: unpriced, no usage
	r4.Model, r4.TraceID, r4.Attempts = "m-b", "T1", 2
	r4.Outcome = record.Failure(record.ErrorRateLimit)

	r5 := call("r5", 4) // usage, a model no table knows
	r5.Model, r5.TraceID, r5.Usage = "my-deploy", "T4", usage(100, 0, 0)

	r6 := call("r6", 5) // usage, no model at all
	r6.Model, r6.TraceID, r6.Usage = "", "T4", usage(50, 0, 0)

	r7 := call("r7", 6) // failed after 2 attempts, with usage: user, T3, another table
	r7.Model, r7.TraceID, r7.Attempts, r7.Usage = "m-c", "T3", 2, usage(300, 150, 0)
	r7.Outcome = record.Failure(record.ErrorIncomplete)
	r7 = priced(r7, 0.20, "t-B")

	return []record.Record{r1, r2, r3, r4, r5, r6, r7}
}

// Every spend figure of a small history, worked out by hand:
// priced r1 $0.10, r2 $0.30, r3 $0.05, r7 $0.20 = $0.65.
func TestSpend(t *testing.T) {
	r := build(t, report.Options{}, encode(t, spendRecords()...))
	s := r.Spend

	assert.InDelta(t, 0.65, s.USD, 1e-12)
	assert.Equal(t, int64(4), s.PricedRecords)
	assert.Equal(t, int64(2), s.UnpricedRecords, "r5 and r6: usage without a price")
	assert.Equal(t, int64(1), s.NoUsageRecords, "r4")
	assert.Equal(t, []report.Count{{Name: "(none)", Count: 1}, {Name: "my-deploy", Count: 1}}, s.UnpricedModels)
	assert.Equal(t, []report.Count{{Name: "t-A", Count: 3}, {Name: "t-B", Count: 1}}, r.Provenance.PriceTables)
	assert.Empty(t, r.Provenance.RepricedWith)

	assert.Equal(t, roundShares([]report.SpendBy{
		{Name: "m-a", Records: 2, USD: 0.4, Share: 0.4 / 0.65},
		{Name: "m-c", Records: 1, USD: 0.2, Share: 0.2 / 0.65},
		{Name: "m-b", Records: 1, USD: 0.05, Share: 0.05 / 0.65},
	}), roundShares(s.Models))
	assert.Equal(t, roundShares([]report.SpendBy{
		{Name: "agent", Records: 1, USD: 0.3, Share: 0.3 / 0.65},
		{Name: "user", Records: 2, USD: 0.3, Share: 0.3 / 0.65}, // r1 + r7; a tie, by name
		{Name: "tool", Records: 1, USD: 0.05, Share: 0.05 / 0.65},
	}), roundShares(s.Speakers))

	// Failed: r3, r4, r7 ended in error; r3 and r7 have a cost.
	// Retried: r2, r4, r7 took more than one attempt; r2 and r7 a cost.
	assert.Equal(t, int64(3), s.Failed.Records)
	assert.Equal(t, int64(2), s.Failed.PricedRecords)
	assert.InDelta(t, 0.25, s.Failed.USD, 1e-12)
	assert.InDelta(t, 0.25/0.65, s.Failed.Share, 1e-12)
	assert.Equal(t, int64(3), s.Retried.Records)
	assert.Equal(t, int64(2), s.Retried.PricedRecords)
	assert.InDelta(t, 0.50, s.Retried.USD, 1e-12)
	assert.InDelta(t, 0.50/0.65, s.Retried.Share, 1e-12)

	// T2 $0.30, T3 $0.20, T1 $0.10 + $0.05; T4 has no cost and is not listed.
	assert.True(t, s.Traces.Exact)
	assert.Equal(t, int64(4), s.Traces.PricedRecords)
	assert.InDelta(t, 0.65, s.Traces.USD, 1e-12)
	require.Len(t, s.Traces.Top, 3)
	for i, want := range []struct {
		id  string
		usd float64
	}{{"T2", 0.30}, {"T3", 0.20}, {"T1", 0.15}} {
		assert.Equal(t, want.id, s.Traces.Top[i].TraceID)
		assert.InDelta(t, want.usd, s.Traces.Top[i].USD, 1e-12)
		assert.InDelta(t, want.usd/0.65, s.Traces.Top[i].Share, 1e-12)
		assert.Zero(t, s.Traces.Top[i].MaxOvercountUSD)
	}

	// Input over the records with usage: 1000 + 500 + 200 + 100 + 50 + 300.
	assert.Equal(t, report.Cache{InputTokens: 2150, CachedTokens: 550, CacheWriteTokens: 100, CachedShare: 550.0 / 2150}, s.Cache)
	byModel := map[string][3]int64{}
	for _, tk := range r.Tokens {
		byModel[tk.Model] = [3]int64{tk.InputTokens, tk.CachedTokens, tk.CacheWriteTokens}
		assert.Equal(t, float64(tk.CachedTokens)/float64(tk.InputTokens), tk.CachedShare, tk.Model)
	}
	assert.Equal(t, map[string][3]int64{"m-a": {1500, 400, 100}, "m-b": {200, 0, 0}, "m-c": {300, 150, 0}, "my-deploy": {100, 0, 0}, "(none)": {50, 0, 0}}, byModel)

	md, page := formats(t, r)
	for _, want := range []string{
		"Costs: as the records carry them, from the price tables t-A (3 records), t-B (1 record).",
		"Spend $0.65 on 4 priced calls; 2 calls used tokens but are unpriced.",
		"$0.65 on 4 of 7 records.",
		"| all records | 7 | 4 | $0.65 | 100% |",
		"| ended in error (canceled included) | 3 | 2 | $0.25 | 38.5% |",
		"| needed retries (attempts > 1) | 3 | 2 | $0.50 | 76.9% |",
		"| m-a | 2 | $0.40 | 61.5% |",
		"| user | 2 | $0.30 | 46.2% |",
		"Records with a trace cost $0.65 (100% of the spend, 4 priced records). Spend per trace is exact.",
		"| T2 | $0.30 | 46.2% |\n| T3 | $0.20 | 30.8% |\n| T1 | $0.15 | 23.1% |\n",
		"Input served from the prompt cache: 550 of 2,150 input tokens (25.6%). Written to the cache: 100 tokens.",
		"| m-a | 1,500 | 400 | 26.7% | 100 |",
		"| usage, but a model the price table does not know | 2 | 28.6% |",
		"| no usage (most are failed calls) | 1 | 14.3% |",
		"| Model most often unpriced | Records |\n|---|--:|\n| (none) | 1 |\n| my-deploy | 1 |\n",
	} {
		assert.Contains(t, md, want)
	}
	for _, want := range []string{
		"Spend $0.65 on 4 priced calls; 2 calls used tokens but are unpriced.",
		`<tr><td>ended in error (canceled included)</td><td class="n">3</td><td class="n">2</td><td class="n">$0.25</td><td class="n">38.5%</td></tr>`,
		`<tr><td>needed retries (attempts &gt; 1)</td><td class="n">3</td><td class="n">2</td><td class="n">$0.50</td><td class="n">76.9%</td></tr>`,
		`<tr><td>m-a</td><td class="n">2</td><td class="n">$0.40</td><td class="n">61.5%</td></tr>`,
		`<tr><td>T2</td><td class="n">$0.30</td><td class="n">46.2%</td></tr>`,
		`<tr><td>m-a</td><td class="n">1,500</td><td class="n">400</td><td class="n">26.7%</td><td class="n">100</td></tr>`,
		`<tr><td>my-deploy</td><td class="n">1</td></tr>`,
	} {
		assert.Contains(t, page, want)
	}

	// The JSON in dollars, as numbers, under stable keys.
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var top struct {
		Provenance map[string]any
		Spend      map[string]any
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &top))
	for _, key := range []string{"price_tables", "repriced_with", "prices_from"} {
		assert.Contains(t, top.Provenance, key)
	}
	for _, key := range []string{"usd", "priced_records", "unpriced_records", "no_usage_records", "unpriced_models", "invalid_costs",
		"models", "speakers", "failed", "retried", "traces", "cache", "over_time"} {
		assert.Contains(t, top.Spend, key)
	}
	assert.Equal(t, 0.65, top.Spend["usd"], "rounded to 12 digits: no float residue")
}

// roundShares rounds shares to 9 decimals, for comparing a share with
// the fraction it should be.
func roundShares(rows []report.SpendBy) []report.SpendBy {
	for i := range rows {
		rows[i].Share = math.Round(rows[i].Share*1e9) / 1e9
	}
	return rows
}

// With Options.Prices, every record is priced again with that table: its
// own cost is ignored, and a model the table does not know is unpriced
// even when the record carried a cost.
func TestSpendRepriced(t *testing.T) {
	prices := cost.NewTable("acme-2026-11", map[string]cost.Price{
		"m-a": {Rates: cost.Rates{Input: 1e-6, Output: 2e-6, CacheRead: 1e-7}},
	})
	r := build(t, report.Options{Prices: prices, PricesFrom: "prices.json"}, encode(t, spendRecords()...))
	s := r.Spend
	// r1: (1000-400)×1e-6 + 400×1e-7 + 10×2e-6 = 0.00066;
	// r2: (500-100)×1e-6 + 100×1e-6 (no cache write rate: input) + 10×2e-6 = 0.00052.
	assert.InDelta(t, 0.00118, s.USD, 1e-15)
	assert.Equal(t, int64(2), s.PricedRecords)
	assert.Equal(t, int64(4), s.UnpricedRecords, "r3, r7 carried a cost, but acme does not know m-b, m-c")
	assert.Equal(t, []report.Count{{Name: "(none)", Count: 1}, {Name: "m-b", Count: 1}, {Name: "m-c", Count: 1}, {Name: "my-deploy", Count: 1}}, s.UnpricedModels)
	assert.Equal(t, []report.Count{{Name: "acme-2026-11", Count: 2}}, r.Provenance.PriceTables)
	assert.Equal(t, "acme-2026-11", r.Provenance.RepricedWith)
	assert.Equal(t, "prices.json", r.Provenance.PricesFrom)
	md, _ := formats(t, r)
	assert.Contains(t, md, "Costs: every record priced again for this report with the price table acme-2026-11, from prices.json, whatever cost it carried.")
	assert.Contains(t, md, "| m-a | 2 | $0.00118 | 100% |")
}

// The most expensive traces are found in bounded memory: past the
// counter's capacity each spend is an upper bound, too high by at most its
// overcount, itself at most the whole spend over the capacity, and the
// report says so.
func TestExpensiveTracesBounded(t *testing.T) {
	const capacity = 4
	b := report.NewBuilder(report.Options{TraceCapacity: capacity, TopTraces: 3})
	truth := map[string]float64{}
	var total float64
	for i := range 3000 {
		r := call(fmt.Sprintf("c%d", i), 0)
		r.TraceID = fmt.Sprintf("cheap%d", i%700)
		usd := 0.001
		if i%4 != 0 {
			r.TraceID = fmt.Sprintf("dear%d", i%3)
			usd = 0.01 * float64(1+i%3)
		}
		r.Cost = &record.Cost{USD: usd, Table: "t"}
		truth[r.TraceID] += usd
		total += usd
		b.Add(r)
	}
	rep := b.Report()
	tr := rep.Spend.Traces
	assert.False(t, tr.Exact)
	assert.Equal(t, capacity, tr.Tracked)
	assert.Positive(t, tr.MaxOvercountUSD)
	assert.LessOrEqual(t, tr.MaxOvercountUSD, total/capacity+1e-9)
	require.Len(t, tr.Top, 3)
	for i, tc := range tr.Top {
		assert.Equal(t, fmt.Sprintf("dear%d", 2-i), tc.TraceID, "the dearest first")
		assert.GreaterOrEqual(t, tc.USD+1e-9, truth[tc.TraceID], "an upper bound")
		assert.LessOrEqual(t, tc.USD-tc.MaxOvercountUSD, truth[tc.TraceID]+1e-9, "too high by at most its overcount")
	}
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "More than 4 distinct traces with a cost: the spend of each trace listed is an upper bound")
	md, _ := formats(t, rep)
	assert.Contains(t, md, "| Trace | Spend | Share | Overcount at most |")
	assert.Contains(t, md, "More traces than the counter holds: each trace's spend is an upper bound")
}

// A cost that is not a price (a file edited by hand, a broken writer) is
// counted apart and the record is unpriced: it can neither lower the
// spend nor make it infinite.
func TestInvalidCosts(t *testing.T) {
	ok := call("ok", 0)
	ok.Usage = &record.Usage{InputTokens: 10, OutputTokens: 1, TotalTokens: 11}
	ok.Cost = &record.Cost{USD: 0.5, Table: "t"}
	neg, huge, big := ok, ok, ok
	neg.CallID, neg.Cost = "neg", &record.Cost{USD: -3, Table: "t"}
	huge.CallID, huge.Cost = "huge", &record.Cost{USD: 1e308, Table: "t"}
	big.CallID, big.Cost = "big", &record.Cost{USD: 1e308, Table: "t"}
	r := build(t, report.Options{}, encode(t, ok, neg, huge, big))
	assert.Equal(t, 0.5, r.Spend.USD)
	assert.Equal(t, int64(1), r.Spend.PricedRecords)
	assert.Equal(t, int64(3), r.Spend.InvalidCosts)
	assert.Equal(t, int64(3), r.Spend.UnpricedRecords)
	assert.Contains(t, strings.Join(r.Notes, "\n"), "3 records carried a cost that is not a price (negative, or more than $1,000,000.00 for one call): counted as unpriced.")
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js), "every figure finite")
}

// Spend over time: buckets of one width from the records' span, every
// record in the bucket of its start, records out of order included, and
// the buckets add up to the whole.
func TestSpendOverTime(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var recs []record.Record
	// 30 minutes of calls, the second half of them first: out of order.
	for i := range 60 {
		at := start.Add(time.Duration((i+30)%60) * 30 * time.Second)
		r := call(fmt.Sprintf("c%d", i), 0)
		r.Timestamp = record.FormatTime(at)
		r.Cost = &record.Cost{USD: 0.01, Table: "t"}
		if at.Minute() == 7 { // the 10:07 bucket costs more
			r.Cost.USD = 0.5
		}
		recs = append(recs, r)
	}
	ot := build(t, report.Options{}, encode(t, recs...)).Spend.OverTime
	// 29.5 minutes: 1-minute buckets are 30, 20-second ones 89 > 60.
	assert.Equal(t, 60.0, ot.BucketSeconds)
	require.Len(t, ot.Buckets, 30)
	assert.Equal(t, "2026-03-01T10:00:00.000000Z", ot.Buckets[0].Start)
	assert.Equal(t, "2026-03-01T10:29:00.000000Z", ot.Buckets[29].Start)
	var sum float64
	for i, b := range ot.Buckets {
		assert.Equal(t, int64(2), b.Records, b.Start)
		want := 0.02
		if i == 7 {
			want = 1.0
		}
		assert.InDelta(t, want, b.USD, 1e-12, b.Start)
		sum += b.USD
	}
	assert.InDelta(t, 0.58+1.0, sum, 1e-12)

	// A record from another century makes the buckets wide, not many.
	recs[0].Timestamp = "1999-12-31T23:59:59Z"
	ot = build(t, report.Options{}, encode(t, recs...)).Spend.OverTime
	assert.LessOrEqual(t, len(ot.Buckets), 60)
	sum = 0
	var n int64
	for _, b := range ot.Buckets {
		sum += b.USD
		n += b.Records
	}
	assert.Equal(t, int64(60), n, "every record in a bucket")
	assert.InDelta(t, 0.58+1.0, sum, 1e-12)
}

// The HTML draws the spend over time: a column per bucket with a cost, a
// dollar scale, and times below.
func TestSpendChart(t *testing.T) {
	rep := build(t, report.Options{}, encode(t, spendRecords()...))
	var page bytes.Buffer
	require.NoError(t, rep.WriteHTML(&page))
	s := page.String()
	// r1..r7 start at seconds 0..6: one-second buckets... no, 100 ms ones
	// (6 s span: 61 of 100 ms is one too many, so 200 ms: 31 buckets),
	// of which 4 have a cost.
	assert.Equal(t, 4, svgCharts(s)["chart-spend"])
	assert.Contains(t, s, "Spend per 200 ms (UTC)")
	assert.Contains(t, s, `text-anchor="end">$0.30</text>`, "the dollar scale")
	assert.Contains(t, s, `text-anchor="middle">10:00:00.000</text>`, "the first bucket's time")

	empty := build(t, report.Options{}, encode(t, call("c1", 0)))
	page.Reset()
	require.NoError(t, empty.WriteHTML(&page))
	assert.Contains(t, page.String(), "No record has a cost.")
	assert.Zero(t, svgCharts(page.String())["chart-spend"])
}

// The report warns, in every format, when records are more than
// StalePriceDays newer than the price table that priced them, and names
// the table, its date and the newest record it priced.
func TestStalePrices(t *testing.T) {
	at := func(r record.Record, ts, table string) record.Record {
		r.Timestamp = ts
		r.Usage = &record.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
		r.Cost = &record.Cost{USD: 0.01, Table: table}
		return r
	}
	recs := []record.Record{
		// 2026-03-03 to 2026-11-20 is 262 days; the newest record counts.
		at(call("a", 0), "2026-06-01T10:00:00Z", "litellm-2026-03-03"),
		at(call("b", 1), "2026-11-20T10:00:00Z", "litellm-2026-03-03"),
		// 90 days exactly, to the hour of the record: not stale yet.
		at(call("c", 2), "2026-10-22T00:00:00Z", "litellm-2026-07-24"),
		// A table whose name carries no date cannot be judged.
		at(call("d", 3), "2026-11-20T10:00:00Z", "acme-2026-11"),
		// A hostile name is shown without its markup.
		at(call("e", 4), "2027-01-01T00:00:00Z", "<b>[x](http://e)</b>-2026-01-01"),
	}
	rep := build(t, report.Options{}, encode(t, recs...))
	assert.Equal(t, []report.StalePrices{
		{Table: "<b>[x](http://e)</b>-2026-01-01", TableDate: "2026-01-01", NewestRecord: "2027-01-01T00:00:00.000000Z", DaysNewer: 365},
		{Table: "litellm-2026-03-03", TableDate: "2026-03-03", NewestRecord: "2026-11-20T10:00:00.000000Z", DaysNewer: 262},
	}, rep.Spend.StalePrices)

	const warning = "Stale prices: the price tables ?b??x??http???e???b?-2026-01-01 (of 2026-01-01) is 365 days older than the newest record it priced (of 2027-01-01), " +
		"litellm-2026-03-03 (of 2026-03-03) is 262 days older than the newest record it priced (of 2026-11-20). " +
		"Models released since are unpriced, and prices changed since are wrong. Price the records again with LiteLLM's current file: llmhistory report -prices model_prices_and_context_window.json"
	var js, md, html bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	require.NoError(t, rep.WriteMarkdown(&md))
	require.NoError(t, rep.WriteHTML(&html))
	var back report.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, rep.Spend.StalePrices, back.Spend.StalePrices, "JSON: spend.stale_prices")
	assert.True(t, slicesContainPrefix(back.Notes, warning), "JSON: a note says it: %q", back.Notes)
	assert.Contains(t, md.String(), "## Spend\n\n")
	assert.Contains(t, md.String(), "> **Warning.** "+warning)
	assert.Contains(t, html.String(), `<p class="warn"><strong>Warning.</strong> `+strings.ReplaceAll(warning, "'", "&#39;"))

	// Records as new as their table: no warning, and an empty list.
	rep = build(t, report.Options{}, encode(t, recs[2], recs[3]))
	assert.Equal(t, []report.StalePrices{}, rep.Spend.StalePrices)
	js.Reset()
	require.NoError(t, rep.WriteJSON(&js))
	assert.Contains(t, js.String(), `"stale_prices": []`)
	md.Reset()
	require.NoError(t, rep.WriteMarkdown(&md))
	assert.NotContains(t, md.String(), "Stale prices")

	// Priced again for the report: the table of Options.Prices is judged.
	old := cost.NewTable("litellm-2026-03-03", map[string]cost.Price{"gpt-4o-mini": {Rates: cost.Rates{Input: 1e-06, Output: 1e-06}}})
	rep = build(t, report.Options{Prices: old}, encode(t, recs[2], recs[3]))
	require.Len(t, rep.Spend.StalePrices, 1)
	assert.Equal(t, report.StalePrices{Table: "litellm-2026-03-03", TableDate: "2026-03-03", NewestRecord: "2026-11-20T10:00:00.000000Z", DaysNewer: 262}, rep.Spend.StalePrices[0])
}

func slicesContainPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// Calls to a local model (Ollama's native API) are counted as local:
// neither priced nor unpriced, even repriced with a table that knows a
// model of the same name.
func TestSpendLocal(t *testing.T) {
	r1 := call("r1", 0)
	r1.Model, r1.Usage = "m-a", &record.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	r1.Cost = &record.Cost{USD: 0.5, Table: "t-A"}
	local := func(id string, at int, method string) record.Record {
		r := call(id, at)
		r.MethodName, r.Model = method, "m-a" // a local model named as a priced one
		r.Usage = &record.Usage{InputTokens: 16, OutputTokens: 22, TotalTokens: 38}
		return r
	}
	records := []record.Record{r1, local("r2", 1, "ollama.chat"), local("r3", 2, "ollama.embed")}

	rep := build(t, report.Options{}, encode(t, records...))
	s := rep.Spend
	assert.Equal(t, int64(1), s.PricedRecords)
	assert.Equal(t, int64(2), s.LocalRecords)
	assert.Zero(t, s.UnpricedRecords, "local is not unpriced")
	md, html := formats(t, rep)
	assert.Contains(t, md, "Spend $0.50, every call that used tokens priced. 2 calls ran on a local model, not priced.")
	assert.Contains(t, md, "| local: a model on the caller's machine (Ollama), nothing to price | 2 | 66.7% |")
	assert.Contains(t, html, "local: a model on the caller&#39;s machine (Ollama), nothing to price")

	prices := cost.NewTable("acme-2026-11", map[string]cost.Price{"m-a": {Rates: cost.Rates{Input: 1e-6, Output: 2e-6}}})
	s = build(t, report.Options{Prices: prices}, encode(t, records...)).Spend
	assert.Equal(t, int64(1), s.PricedRecords, "repricing leaves local calls alone")
	assert.Equal(t, int64(2), s.LocalRecords)
}

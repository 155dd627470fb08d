package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/record"
)

// maxCallUSD is the most one call may cost before its cost is taken for
// damage: the dearest model at its longest context costs a few dollars a
// call. The bound also keeps the sums finite whatever a file holds.
const maxCallUSD = 1e6

// spender gathers the spend figures of a Builder.
type spender struct {
	sum     cost.Summary // totals, unpriced calls by reason and model, tables
	own     record.Cost  // the cost of the record being added, when repriced
	invalid int64        // costs that were not prices

	models, speakers *spendCounter

	failed, retried spendSum

	traceSpend spendSum // priced records with a trace
	traces     *topK[float64]

	input, cached, cacheWrite int64 // over the records with usage

	timeline timeline

	// newestPriced is the newest start, in ms, of the records each dated
	// table priced, for the staleness warning; at most MaxKeys tables.
	newestPriced map[string]int64
}

type spendSum struct {
	records int64
	usd     float64
}

func (s *spendSum) add(usd float64) {
	s.records++
	s.usd += usd
}

func newSpender(o Options) spender {
	return spender{
		sum:      cost.Summary{MaxNames: o.MaxKeys},
		models:   newSpendCounter(o.MaxKeys),
		speakers: newSpendCounter(o.MaxKeys),
		traces:   newTopK[float64](o.TraceCapacity),

		newestPriced: make(map[string]int64),
	}
}

// costOf returns the cost of r this report counts: the one Options.Prices
// gives when set, else the one r carries; nil when unpriced. A cost that
// is not a price (negative, not a number, more than maxCallUSD) is
// counted as invalid and the record as unpriced.
func (b *Builder) costOf(r *record.Record) *record.Cost {
	c := r.Cost
	if p := b.opts.Prices; p != nil {
		c = nil
		if r.Usage != nil && r.Model != "" && !cost.Local(r.MethodName) {
			var ok bool
			if b.spend.own, ok = p.Cost(r.Model, *r.Usage); ok {
				c = &b.spend.own
			}
		}
	}
	if c != nil && !(c.USD >= 0 && c.USD <= maxCallUSD) {
		b.spend.invalid++
		c = nil
	}
	return c
}

// addSpend counts the spend of r, Add's own copy of the record, whose
// Cost it sets to the cost the report counts; model is r's label,
// attempts at least 1, and at its start when timed.
func (b *Builder) addSpend(r *record.Record, model string, attempts int, at time.Time, timed bool) {
	s := &b.spend
	r.Cost = b.costOf(r)
	s.sum.Add(r)
	var usd float64
	if r.Cost != nil {
		usd = r.Cost.USD
		s.models.add(model, usd)
		s.speakers.add(label(r.Speaker), usd)
		if !r.Outcome.OK {
			s.failed.add(usd)
		}
		if attempts > 1 {
			s.retried.add(usd)
		}
		if r.TraceID != "" {
			s.traceSpend.add(usd)
			if usd > 0 {
				// A trace that cost nothing is never among the dearest:
				// it must not take a counter from one that did.
				s.traces.add(r.TraceID, usd)
			}
		}
	}
	if r.Usage != nil {
		s.input += int64(r.Usage.InputTokens)
		s.cached += int64(r.Usage.CachedTokens)
		s.cacheWrite += int64(r.Usage.CacheWriteTokens)
	}
	if timed {
		s.timeline.add(at.UnixMilli(), usd)
		if r.Cost != nil {
			s.notePriced(r.Cost.Table, at.UnixMilli())
		}
	}
}

// maxTableName bounds the table names kept for the staleness warning: a
// name is a few tens of bytes, and a longer one is damage.
const maxTableName = 256

// notePriced keeps the newest start of the records table priced, for a
// table whose name carries a date.
func (s *spender) notePriced(table string, ms int64) {
	if newest, ok := s.newestPriced[table]; ok {
		s.newestPriced[table] = max(newest, ms)
		return
	}
	if len(s.newestPriced) >= s.models.max || len(table) > maxTableName {
		return
	}
	if _, dated := cost.DateOf(table); dated {
		s.newestPriced[table] = ms
	}
}

// stalePrices lists the tables that priced a record more than
// StalePriceDays newer than themselves, the stalest first.
func (s *spender) stalePrices() []StalePrices {
	out := []StalePrices{}
	for table, newest := range s.newestPriced {
		d, _ := cost.DateOf(table)
		age := time.UnixMilli(newest).Sub(d)
		if age <= StalePriceDays*24*time.Hour {
			continue
		}
		out = append(out, StalePrices{
			Table:        table,
			TableDate:    d.Format(time.DateOnly),
			NewestRecord: record.FormatTime(time.UnixMilli(newest)),
			DaysNewer:    int(age / (24 * time.Hour)),
		})
	}
	slices.SortFunc(out, func(a, b StalePrices) int {
		return cmp.Or(cmp.Compare(b.DaysNewer, a.DaysNewer), strings.Compare(a.Table, b.Table))
	})
	return out
}

// spendCounter sums spend by name for at most max distinct names; the
// spend of names that arrive once it is full is summed in other.
type spendCounter struct {
	max   int
	m     map[string]*spendSum
	other spendSum
}

func newSpendCounter(max int) *spendCounter {
	return &spendCounter{max: max, m: make(map[string]*spendSum)}
}

func (c *spendCounter) add(key string, usd float64) {
	key = keyOf(key)
	s, ok := c.m[key]
	if !ok {
		if len(c.m) >= c.max {
			c.other.add(usd)
			return
		}
		s = new(spendSum)
		c.m[key] = s
	}
	s.add(usd)
}

// rows returns the spend by name, most first, ties by name, "(other)" last.
func (c *spendCounter) rows(total float64) []SpendBy {
	out := []SpendBy{}
	for k, s := range c.m {
		out = append(out, SpendBy{Name: k, Records: s.records, USD: dollars(s.usd), Share: share(s.usd, total)})
	}
	slices.SortFunc(out, func(a, b SpendBy) int {
		return cmp.Or(cmp.Compare(b.USD, a.USD), strings.Compare(a.Name, b.Name))
	})
	if c.other.records > 0 {
		out = append(out, SpendBy{Name: "(other)", Records: c.other.records, USD: dollars(c.other.usd), Share: share(c.other.usd, total)})
	}
	return out
}

// dollars rounds a sum of dollars to 12 significant digits: far below a
// cent on any bill, and enough to write 0.000123 rather than the
// 0.00012300000000000001 that float sums leave.
func dollars(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

// share is part over whole, 0 when whole is 0, never above 1.
func share(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return min(part/whole, 1)
}

// names lists a Summary's counts by name, most first, ties by name, with
// "(none)" for "" and the Summary's (other) last, at most n of them
// (n <= 0: all).
func names(m map[string]int, n int) []Count {
	out := []Count{}
	var other int
	for k, c := range m {
		if k == cost.OtherNames {
			other = c
			continue
		}
		out = append(out, Count{Name: label(k), Count: int64(c)})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name))
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	if other > 0 {
		out = append(out, Count{Name: "(other)", Count: int64(other)})
	}
	return out
}

// maxUnpricedModels is how many of the models most often unpriced are
// listed.
const maxUnpricedModels = 10

func (b *Builder) spendReport() Spend {
	s := &b.spend
	total := s.sum.USD
	out := Spend{
		USD:             dollars(total),
		PricedRecords:   int64(s.sum.Priced),
		UnpricedRecords: int64(s.sum.Unpriced),
		NoUsageRecords:  int64(s.sum.NoUsage),
		LocalRecords:    int64(s.sum.Local),
		UnpricedModels:  names(s.sum.UnpricedModels, maxUnpricedModels),
		InvalidCosts:    s.invalid,
		Models:          s.models.rows(total),
		Speakers:        s.speakers.rows(total),
		Failed:          SpendShare{Records: b.failed, PricedRecords: s.failed.records, USD: dollars(s.failed.usd), Share: share(s.failed.usd, total)},
		Retried:         SpendShare{Records: b.retried, PricedRecords: s.retried.records, USD: dollars(s.retried.usd), Share: share(s.retried.usd, total)},
		Cache: Cache{
			InputTokens:      s.input,
			CachedTokens:     s.cached,
			CacheWriteTokens: s.cacheWrite,
			CachedShare:      rate(s.cached, s.input),
		},
		OverTime:    s.timeline.report(maxChartBuckets),
		StalePrices: s.stalePrices(),
	}
	out.Traces = SpendTraces{
		PricedRecords: s.traceSpend.records,
		USD:           dollars(s.traceSpend.usd),
		Share:         share(s.traceSpend.usd, total),
		Tracked:       len(s.traces.heap),
		Exact:         !s.traces.replaced,
		Top:           []TraceSpend{},
	}
	if s.traces.replaced {
		out.Traces.MaxOvercountUSD = dollars(s.traces.minCount())
	}
	for _, e := range s.traces.top(b.opts.TopTraces) {
		out.Traces.Top = append(out.Traces.Top, TraceSpend{TraceID: e.key, USD: dollars(e.count), Share: share(e.count, total), MaxOvercountUSD: dollars(e.err)})
	}
	return out
}

// Spend over time, in bounded memory: records are summed into buckets of
// a width from the ladder below, aligned to multiples of that width since
// the Unix epoch. Each width divides the next, so a bucket always lies
// within one bucket of any wider width: when a timestamp falls outside
// the span the buckets hold, they are merged into the narrowest wider
// width whose buckets hold the new span, exactly. At most
// maxTimelineBuckets are held; the report shows them merged to at most
// maxChartBuckets. The widest width holds any span RFC 3339 can write
// (10,000 years) in about 10 buckets.
var bucketWidths = [...]int64{ // milliseconds
	1, 2, 10, 20, 100, 200, // ms
	1_000, 2_000, 10_000, 20_000, // s
	60_000, 120_000, 600_000, 1_200_000, // min
	3_600_000, 7_200_000, 21_600_000, 43_200_000, // h
	86_400_000, 172_800_000, 864_000_000, 2_592_000_000, 7_776_000_000, // 1, 2, 10, 30, 90 days
	31_104_000_000, 311_040_000_000, 3_110_400_000_000, 31_104_000_000_000, // 360 days to 360,000
}

const (
	maxTimelineBuckets = 512
	maxChartBuckets    = 60
)

// timeline is the spend and records per bucket; see bucketWidths.
type timeline struct {
	level      int   // index of the width in bucketWidths
	lo         int64 // start of bucket 0, ms since the epoch
	minT, maxT int64 // the earliest and latest timestamps, ms
	n          int64 // records added
	usd        []float64
	records    []int64
	spare      timelineBuf // the other buffers, for merging without garbage
}

type timelineBuf struct {
	usd     []float64
	records []int64
}

// floorDiv is a/b rounded toward minus infinity, for times before 1970.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// buckets is how many buckets of width w the span [lo, hi] touches.
func buckets(lo, hi, w int64) int64 { return floorDiv(hi, w) - floorDiv(lo, w) + 1 }

func (tl *timeline) add(ms int64, usd float64) {
	if tl.n == 0 {
		tl.usd = make([]float64, maxTimelineBuckets)
		tl.records = make([]int64, maxTimelineBuckets)
		tl.minT, tl.maxT = ms, ms
		tl.level = 0
		tl.lo = floorDiv(ms, bucketWidths[0]) * bucketWidths[0]
	}
	tl.n++
	w := bucketWidths[tl.level]
	i := floorDiv(ms-tl.lo, w)
	if i < 0 || i >= maxTimelineBuckets {
		tl.minT, tl.maxT = min(tl.minT, ms), max(tl.maxT, ms)
		tl.refit()
		w = bucketWidths[tl.level]
		i = floorDiv(ms-tl.lo, w)
	}
	tl.minT, tl.maxT = min(tl.minT, ms), max(tl.maxT, ms)
	i = min(max(i, 0), maxTimelineBuckets-1) // only past the widest width
	tl.usd[i] += usd
	tl.records[i]++
}

// fitLevel returns the first level at or after from whose buckets hold
// [lo, hi] in at most n.
func fitLevel(from int, lo, hi int64, n int) int {
	for l := from; l < len(bucketWidths); l++ {
		if buckets(lo, hi, bucketWidths[l]) <= int64(n) {
			return l
		}
	}
	return len(bucketWidths) - 1
}

// refit moves the buckets to the narrowest width, at the current one or
// wider, that holds [minT, maxT], starting at minT's bucket.
func (tl *timeline) refit() {
	level := fitLevel(tl.level, tl.minT, tl.maxT, maxTimelineBuckets)
	w, oldW := bucketWidths[level], bucketWidths[tl.level]
	lo := floorDiv(tl.minT, w) * w
	if tl.spare.usd == nil {
		tl.spare = timelineBuf{usd: make([]float64, maxTimelineBuckets), records: make([]int64, maxTimelineBuckets)}
	}
	nu, nr := tl.spare.usd, tl.spare.records
	clear(nu)
	clear(nr)
	for i, n := range tl.records {
		if n == 0 {
			continue
		}
		j := floorDiv(tl.lo+int64(i)*oldW-lo, w)
		j = min(max(j, 0), maxTimelineBuckets-1)
		nu[j] += tl.usd[i]
		nr[j] += n
	}
	tl.spare = timelineBuf{usd: tl.usd, records: tl.records}
	tl.usd, tl.records, tl.level, tl.lo = nu, nr, level, lo
}

// report merges the buckets into the narrowest width that shows the span
// in at most n buckets, and lists every one of them, empty ones included.
func (tl *timeline) report(n int) SpendOverTime {
	out := SpendOverTime{Buckets: []SpendBucket{}}
	if tl.n == 0 {
		return out
	}
	level := fitLevel(tl.level, tl.minT, tl.maxT, n)
	w, oldW := bucketWidths[level], bucketWidths[tl.level]
	lo := floorDiv(tl.minT, w) * w
	count := buckets(tl.minT, tl.maxT, w)
	usd, recs := make([]float64, count), make([]int64, count)
	for i, k := range tl.records {
		if k == 0 {
			continue
		}
		j := min(max(floorDiv(tl.lo+int64(i)*oldW-lo, w), 0), count-1)
		usd[j] += tl.usd[i]
		recs[j] += k
	}
	out.BucketSeconds = float64(w) / 1000
	for j := range count {
		out.Buckets = append(out.Buckets, SpendBucket{
			Start:   record.FormatTime(time.UnixMilli(lo + j*w)),
			Records: recs[j],
			USD:     dollars(usd[j]),
		})
	}
	return out
}

// spendNotes say where a spend figure was cut or is an estimate.
func (b *Builder) spendNotes(r *Report) []string {
	s := r.Spend
	var notes []string
	if b.spend.models.other.records > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct models with a cost: the spend of the rest is summed under (other).", b.opts.MaxKeys))
	}
	if b.spend.speakers.other.records > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct speakers with a cost: the spend of the rest is summed under (other).", b.opts.MaxKeys))
	}
	if b.spend.sum.UnpricedModels[cost.OtherNames] > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct unpriced models: the rest are counted under (other).", b.opts.MaxKeys))
	}
	if b.spend.sum.Tables[cost.OtherNames] > 0 {
		notes = append(notes, fmt.Sprintf("More than %d distinct price tables: the rest are counted under (other).", b.opts.MaxKeys))
	}
	if !s.Traces.Exact {
		notes = append(notes, fmt.Sprintf("More than %d distinct traces with a cost: the spend of each trace listed is an upper bound, too high by at most %s.", b.opts.TraceCapacity, money(s.Traces.MaxOvercountUSD)))
	}
	if t := r.stalePricesText(); t != "" {
		notes = append(notes, t)
	}
	if s.InvalidCosts > 0 {
		notes = append(notes, fmt.Sprintf("%s carried a cost that is not a price (negative, or more than %s for one call): counted as unpriced.", plural(s.InvalidCosts, "record", "records"), money(maxCallUSD)))
	}
	return notes
}

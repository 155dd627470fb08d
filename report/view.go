package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/llmhistory/llmhistory/record"
)

// What the Markdown and HTML forms both show is worded here, once, so the
// two never give one figure two names.

// human writes a duration given in milliseconds in the unit a person reads
// it in, to three significant digits: 200 µs, 40.9 ms, 5.6 s, 2 min 5 s.
func human(ms float64) string {
	switch {
	case math.IsNaN(ms) || ms < 0:
		return "–"
	case ms == 0:
		return "0 s"
	}
	if us := sig3(ms * 1000); us < 1000 {
		return trimFloat(us) + " µs"
	}
	if v := sig3(ms); v < 1000 {
		return trimFloat(v) + " ms"
	}
	if s := sig3(ms / 1000); s < 60 {
		return trimFloat(s) + " s"
	}
	secs := int64(math.Round(ms / 1000))
	if secs < 3600 {
		return fmt.Sprintf("%d min %d s", secs/60, secs%60)
	}
	mins := int64(math.Round(ms / 60000))
	return fmt.Sprintf("%d h %d min", mins/60, mins%60)
}

// sig3 rounds v to three significant digits.
func sig3(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// when writes an RFC 3339 timestamp of a record for people, to the second:
// "2026-03-01 10:00:04 UTC". Anything else is shown as it is.
func when(ts string) string {
	t, err := record.ParseTime(ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

// piece is a part of a sentence: text, or a timestamp, which the HTML form
// keeps on one line.
type piece struct {
	Text string
	TS   bool
}

type sentence []piece

func (s *sentence) add(format string, args ...any) {
	*s = append(*s, piece{Text: fmt.Sprintf(format, args...)})
}
func (s *sentence) ts(ts string) { *s = append(*s, piece{Text: when(ts), TS: true}) }

func (s sentence) String() string {
	var sb strings.Builder
	for _, p := range s {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// provenance is the line that says where the report comes from.
func (r *Report) provenance() sentence {
	p := r.Provenance
	var s sentence
	s.add("Made ")
	s.ts(p.GeneratedAt)
	s.add(" by %s", p.Tool)
	switch len(p.Inputs) {
	case 0:
		s.add(".")
	case 1:
		in := p.Inputs[0]
		s.add(" from %s: %s read, %s, %s", in.Name, plural(in.Lines, "line", "lines"), plural(in.Records, "record", "records"), plural(in.BadLines, "bad line", "bad lines"))
		if in.Torn {
			s.add(", a torn last line skipped")
		}
		s.add(".")
	default:
		s.add(" from %s: %s read, %s, %s.", plural(int64(len(p.Inputs)), "input", "inputs"),
			plural(p.Lines, "line", "lines"), plural(r.Summary.Records, "record", "records"), plural(p.BadLines, "bad line", "bad lines"))
	}
	if c := r.pricing(); c != "" {
		s.add("%s", c)
	}
	return s
}

// row is one line of a table of figures.
type row struct {
	Label string
	Count int64
	Share string // "" when the table has no share column
}

// callRows are the rows of the Calls table. ok, error and canceled
// partition the records; "error" counts the canceled too, as
// error_records does in the JSON, and says so.
func (r *Report) callRows() []row {
	s := r.Summary
	return []row{
		{Label: "records (logical calls)", Count: s.Records},
		{Label: "HTTP calls (attempts)", Count: s.Calls},
		{Label: "ok", Count: s.OKRecords},
		{Label: "error (canceled included)", Count: s.ErrorRecords},
		{Label: "… of which canceled", Count: s.CanceledRecords},
	}
}

// historyRows are the rows of the History telemetry table.
func (r *Report) historyRows() []row {
	h, n := r.History, r.Summary.Records
	return []row{
		{"history record appended", h.Appended, percent(h.Appended, n)},
		{"history guidance in the prompt", h.Guidance, percent(h.Guidance, n)},
		{"history access detected", h.Access, percent(h.Access, n)},
		{"with program source", h.WithProgramSource, percent(h.WithProgramSource, n)},
		{"… of which history access detected", h.AccessWithProgramSource, percent(h.AccessWithProgramSource, h.WithProgramSource)},
		{"program source mentions conversation_history", h.ReferencesHistory, percent(h.ReferencesHistory, h.WithProgramSource)},
		{"… of which no access detected", h.ReferencesWithoutAccess, percent(h.ReferencesWithoutAccess, h.ReferencesHistory)},
	}
}

// retriesText is the sentence over the attempts table.
func (r *Report) retriesText() string {
	return fmt.Sprintf("Records retried: %s, with %s beyond the first in all; each retried call is one record.",
		num(r.Retries.RetriedRecords), plural(r.Retries.ExtraAttempts, "attempt", "attempts"))
}

// tracesText is the sentence over the largest traces.
func (r *Report) tracesText() string {
	t := r.Traces
	if t.Exact {
		return fmt.Sprintf("%s in %s; %s without a trace. Counts are exact.",
			plural(t.WithTrace, "record", "records"), plural(int64(t.Tracked), "trace", "traces"), plural(t.WithoutTrace, "record", "records"))
	}
	return fmt.Sprintf("%s with a trace; %s without. More traces than the counter holds: each count is an upper bound, too high by at most the overcount shown (%s at most).",
		plural(t.WithTrace, "record", "records"), num(t.WithoutTrace), num(t.MaxOvercount))
}

// spanSentence is "From <first> to <last> (<span>)." for the Calls section.
func (r *Report) spanSentence() sentence {
	s := r.Summary
	var out sentence
	if s.FirstTimestamp == "" {
		return out
	}
	out.add("From ")
	out.ts(s.FirstTimestamp)
	out.add(" to ")
	out.ts(s.LastTimestamp)
	out.add(" (%s).", human(s.SpanSeconds*1000))
	return out
}

const latencyNote = "Per logical call, retries included. Quantiles are within 1% of the true value."

// firstChunkNote follows latencyNote when some record was streamed.
const firstChunkNote = "Time to first chunk, for the streamed calls only: from the call's start to the first bytes of the response body."

// streamed reports whether some record carries a time to first chunk.
func (r *Report) streamed() bool {
	for _, l := range r.Latency {
		if l.FirstChunkCount > 0 {
			return true
		}
	}
	return false
}

// latencyText is the sentence over the latency table.
func (r *Report) latencyText() string {
	if r.streamed() {
		return latencyNote + " " + firstChunkNote
	}
	return latencyNote
}

// latencyHeader names the latency table's columns after the method's: the
// time to first chunk only when some record was streamed.
func (r *Report) latencyHeader() []string {
	h := []string{"Records", "p50", "p90", "p99", "max"}
	if r.streamed() {
		h = append(h, "Streamed", "First chunk p50", "First chunk p95", "First chunk max")
	}
	return h
}

// latencyCells are the cells of l's row after its method, as latencyHeader
// names them: "–" for a figure over no record.
func (r *Report) latencyCells(l Latency) []string {
	ms := func(n int64, v float64) string {
		if n == 0 {
			return "–"
		}
		return human(v)
	}
	c := []string{num(l.Records), ms(l.Records, l.P50MS), ms(l.Records, l.P90MS), ms(l.Records, l.P99MS), ms(l.Records, l.MaxMS)}
	if r.streamed() {
		n := l.FirstChunkCount
		c = append(c, num(n), ms(n, l.FirstChunkP50MS), ms(n, l.FirstChunkP95MS), ms(n, l.FirstChunkMaxMS))
	}
	return c
}

// badInputText is the sentence over the bad lines.
func (r *Report) badInputText() string {
	b := r.BadInput
	return fmt.Sprintf("Lines that are not records, skipped: %s. Inputs that ended in a torn line (a crash in mid-write; the line was skipped): %s.",
		num(b.GarbledLines), num(b.TornTails))
}

// money writes US dollars for people: to the cent from a dollar up
// ($12.34, $1,234.56), to three significant digits below it ($0.50,
// $0.0123, $0.000036), and "<$0.000001" for a positive amount below a
// millionth of a dollar, which no bill shows.
func money(usd float64) string {
	switch {
	case math.IsNaN(usd) || usd < 0:
		return "–"
	case usd == 0:
		return "$0"
	case usd < 1e-6:
		return "<$0.000001"
	}
	if usd >= 0.995 { // rounds to a dollar or more
		s := strconv.FormatFloat(usd, 'f', 2, 64)
		whole, cents, _ := strings.Cut(s, ".")
		var sb strings.Builder
		for i, c := range whole {
			if i > 0 && (len(whole)-i)%3 == 0 {
				sb.WriteByte(',')
			}
			sb.WriteRune(c)
		}
		return "$" + sb.String() + "." + cents
	}
	v := sig3(usd)
	decimals := max(2, 2-int(math.Floor(math.Log10(v))))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	for decimals > 2 && strings.HasSuffix(s, "0") {
		s, decimals = s[:len(s)-1], decimals-1
	}
	return "$" + s
}

// shareText writes part/whole as a percentage with one decimal, as
// percent does for counts: never 100% for less than all, nor 0.0% for
// more than nothing.
func shareText(part, whole float64) string {
	if whole <= 0 {
		return "–"
	}
	if part >= whole {
		return "100%"
	}
	p := math.Round(part*1000/whole) / 10
	p = min(p, 99.9)
	if part > 0 {
		p = max(p, 0.1)
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// maxTablesNamed is how many price tables the provenance names.
const maxTablesNamed = 5

// pricing is the sentence of the provenance that says where the costs
// come from; "" when no record carries one and none was priced again.
func (r *Report) pricing() string {
	p := r.Provenance
	if p.RepricedWith != "" {
		s := " Costs: every record priced again for this report with the price table " + p.RepricedWith
		if p.PricesFrom != "" {
			s += ", from " + p.PricesFrom
		}
		return s + ", whatever cost it carried."
	}
	if len(p.PriceTables) == 0 {
		return ""
	}
	var parts []string
	for i, t := range p.PriceTables {
		if i == maxTablesNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(p.PriceTables)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", t.Name, plural(t.Count, "record", "records")))
	}
	table := "the price table "
	if len(p.PriceTables) > 1 {
		table = "the price tables "
	}
	return " Costs: as the records carry them, from " + table + strings.Join(parts, ", ") + "."
}

// spendSentence is the summary's sentence on spend. A call that used no
// tokens (most failed ones) cost nothing, and is not unpriced.
func (r *Report) spendSentence() string {
	s := r.Spend
	local := ""
	if s.LocalRecords > 0 {
		local = fmt.Sprintf(" %s ran on a local model, not priced.", plural(s.LocalRecords, "call", "calls"))
	}
	switch {
	case s.PricedRecords == 0:
		return " No call has a cost." + local
	case s.UnpricedRecords == 0:
		return fmt.Sprintf(" Spend %s, every call that used tokens priced.%s", money(s.USD), local)
	}
	return fmt.Sprintf(" Spend %s on %s; %s used tokens but %s unpriced.%s", money(s.USD),
		plural(s.PricedRecords, "priced call", "priced calls"), plural(s.UnpricedRecords, "call", "calls"),
		map[bool]string{true: "is", false: "are"}[s.UnpricedRecords == 1], local)
}

// spendText is the sentence that opens the Spend section.
func (r *Report) spendText() string {
	s := r.Spend
	if s.PricedRecords == 0 {
		local := ""
		if s.LocalRecords > 0 {
			local = fmt.Sprintf(", %s of a local model (Ollama), which costs nothing per token", num(s.LocalRecords))
		}
		return fmt.Sprintf("No record has a cost: %s without usage, %s with usage but a model the price table does not know%s.",
			num(s.NoUsageRecords), num(s.UnpricedRecords), local)
	}
	return fmt.Sprintf("%s on %s of %s. Each record is priced on its last attempt's usage: for a call that needed retries, what the earlier attempts cost, if anything, is not in its record. A record can both need retries and end in error.",
		money(s.USD), num(s.PricedRecords), plural(r.Summary.Records, "record", "records"))
}

// stalePricesText warns that the prices are older than the records they
// priced by more than StalePriceDays, and says how to price them again;
// "" when they are not.
func (r *Report) stalePricesText() string {
	st := r.Spend.StalePrices
	if len(st) == 0 {
		return ""
	}
	var parts []string
	for i, t := range st {
		if i == maxTablesNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(st)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (of %s) is %s older than the newest record it priced (of %s)",
			plainName(t.Table), t.TableDate, plural(int64(t.DaysNewer), "day", "days"), t.NewestRecord[:min(len(t.NewestRecord), len("2006-01-02"))]))
	}
	table := "the price table "
	if len(st) > 1 {
		table = "the price tables "
	}
	return "Stale prices: " + table + strings.Join(parts, ", ") + ". Models released since are unpriced, and prices changed since are wrong. " +
		"Price the records again with LiteLLM's current file: llmhistory report -prices model_prices_and_context_window.json " +
		"(from https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json), " +
		"and set LLMHISTORY_PRICES to it where the records are made."
}

// plainName is a name from the records, for a sentence every format
// shows as it is: letters, digits and . + - _ only, any other character
// as '?', so that a damaged or hostile name cannot add markup.
func plainName(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.ContainsRune(".+-_", c):
			return c
		}
		return '?'
	}, s)
}

// spendRow is one line of the table of spend shares.
type spendRow struct {
	Label           string
	Records, Priced int64
	USD             float64
	Share           string
}

// spendRows are the rows of the spend shares table: the whole, and the
// records that failed or needed retries.
func (r *Report) spendRows() []spendRow {
	s := r.Spend
	row := func(label string, records int64, sh SpendShare) spendRow {
		return spendRow{label, records, sh.PricedRecords, sh.USD, shareText(sh.USD, s.USD)}
	}
	return []spendRow{
		{"all records", r.Summary.Records, s.PricedRecords, s.USD, shareText(s.USD, s.USD)},
		row("ended in error (canceled included)", s.Failed.Records, s.Failed),
		row("needed retries (attempts > 1)", s.Retried.Records, s.Retried),
	}
}

// traceSpendText is the sentence over the most expensive traces.
func (r *Report) traceSpendText() string {
	t := r.Spend.Traces
	s := fmt.Sprintf("Records with a trace cost %s (%s of the spend, %s).",
		money(t.USD), shareText(t.USD, r.Spend.USD), plural(t.PricedRecords, "priced record", "priced records"))
	if t.Exact {
		return s + " Spend per trace is exact."
	}
	return s + fmt.Sprintf(" More traces than the counter holds: each trace's spend is an upper bound, too high by at most the overcount shown (%s at most).", money(t.MaxOvercountUSD))
}

// cacheText is the sentence on the input served from the prompt cache.
func (r *Report) cacheText() string {
	c := r.Spend.Cache
	if c.InputTokens == 0 {
		return "No record reports input tokens."
	}
	s := fmt.Sprintf("Input served from the prompt cache: %s of %s (%s).",
		num(c.CachedTokens), plural(c.InputTokens, "input token", "input tokens"), percent(c.CachedTokens, c.InputTokens))
	if c.CacheWriteTokens > 0 {
		s += fmt.Sprintf(" Written to the cache: %s.", plural(c.CacheWriteTokens, "token", "tokens"))
	}
	return s
}

// unpricedRows are the reasons a record has no cost.
func (r *Report) unpricedRows() []row {
	s := r.Spend
	rows := []row{
		{Label: "usage, but a model the price table does not know", Count: s.UnpricedRecords, Share: percent(s.UnpricedRecords, r.Summary.Records)},
		{Label: "no usage (most are failed calls)", Count: s.NoUsageRecords, Share: percent(s.NoUsageRecords, r.Summary.Records)},
	}
	if s.LocalRecords > 0 {
		rows = append(rows, row{Label: "local: a model on the caller's machine (Ollama), nothing to price", Count: s.LocalRecords, Share: percent(s.LocalRecords, r.Summary.Records)})
	}
	return rows
}

// FormatUSD writes US dollars as the report does, for people: to the cent
// from a dollar up ($12.34, $1,234.56), to three significant digits below
// ($0.50, $0.0123, $0.000036), and "<$0.000001" for a positive amount too
// small for any bill.
func FormatUSD(usd float64) string { return money(usd) }

// nested reports whether any record is nested under another, or of an
// unknown depth: otherwise a depth table is one row of zeros' worth.
func (r *Report) nested() bool {
	for _, d := range r.Depth {
		if d.Count > 0 && d.Name != "0" {
			return true
		}
	}
	return false
}

package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteMarkdown writes the report as Markdown for people: a title, a
// summary paragraph, the evidence-review checklist, then one table per
// figure. Record contents are escaped, so a method name cannot break a
// table or inject markup.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := &mdWriter{w: bw}
	r.markdown(m)
	if m.err != nil {
		return m.err
	}
	return bw.Flush()
}

type mdWriter struct {
	w   *bufio.Writer
	err error
}

func (m *mdWriter) printf(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// table writes a header row and rows; cells are written as given, so
// record contents must go through md first. Columns are left-aligned, or
// right-aligned when their header's align letter is 'r'.
func (m *mdWriter) table(align string, header []string, rows [][]string) {
	m.printf("| %s |\n|", strings.Join(header, " | "))
	for i := range header {
		if i < len(align) && align[i] == 'r' {
			m.printf("--:|")
		} else {
			m.printf("---|")
		}
	}
	m.printf("\n")
	for _, row := range rows {
		m.printf("| %s |\n", strings.Join(row, " | "))
	}
	m.printf("\n")
}

// md escapes text from a record for a Markdown table cell: one line, with
// the marks that mean something inside a cell (emphasis, code, links,
// HTML, the cell border) backslash-escaped. An underscore inside a word
// cannot start emphasis, so rate_limit stays as it is.
func md(s string) string { return mdLine(s, 200) }

// mdLine is md for a line of up to n runes: the provenance, whose names
// and price tables may make it longer than a cell.
func mdLine(s string, n int) string {
	s = oneLine(s, n)
	var sb strings.Builder
	for i, c := range s {
		switch {
		case strings.ContainsRune("\\`*[]<>|~&", c):
			sb.WriteByte('\\')
		case c == '_' && (i == 0 || i == len(s)-1 || !isWordByte(s[i-1]) || !isWordByte(s[i+1])):
			sb.WriteByte('\\')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

func isWordByte(c byte) bool {
	return c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// plural says "1 line" or "n lines".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return num(n) + " " + many
}

// code shows an example span as inline code; backticks inside are handled
// by a longer fence.
func code(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(oneLine(s, 200), "|", "\\|")
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var sb strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

func (r *Report) metCount() (met int) {
	for _, c := range r.Checklist {
		if c.Verdict == Met {
			met++
		}
	}
	return met
}

// SummaryText is the report's summary paragraph.
func (r *Report) SummaryText() string { return r.summary().String() }

// summary is a few short sentences, the key figures first: how many calls
// and how many failed, what they cost, the checklist, then the history
// figures and the time span.
func (r *Report) summary() sentence {
	s := r.Summary
	var out sentence
	if s.Records == 0 {
		out.add("The input holds no records, so no figure below says anything yet.")
		if r.BadInput.GarbledLines > 0 {
			out.add(" %s could not be read as records.", plural(r.BadInput.GarbledLines, "line", "lines"))
		}
		return out
	}
	h := r.History
	out.add("%s", plural(s.Records, "call", "calls"))
	switch s.ErrorRecords {
	case 0:
		out.add(", none in error.")
	default:
		out.add(", %s in error (%s).", num(s.ErrorRecords), percent(s.ErrorRecords, s.Records))
	}
	out.add("%s Checklist: %d of %d met.", r.spendSentence(), r.metCount(), len(r.Checklist))
	out.add(" History appended for %s of calls, read in %s", percent(h.Appended, s.Records), plural(h.Access, "call", "calls"))
	if h.WithProgramSource > 0 {
		out.add(" (%s of the %s with program source)", percent(h.AccessWithProgramSource, h.WithProgramSource), num(h.WithProgramSource))
	}
	out.add(".")
	if s.Calls != s.Records {
		out.add(" %s in all, retries included.", plural(s.Calls, "HTTP attempt", "HTTP attempts"))
	}
	switch {
	case s.FirstTimestamp == "":
	case s.FirstTimestamp == s.LastTimestamp:
		out.add(" At ")
		out.ts(s.FirstTimestamp)
		out.add(".")
	default:
		out.add(" From ")
		out.ts(s.FirstTimestamp)
		out.add(" to ")
		out.ts(s.LastTimestamp)
		out.add(".")
	}
	if n := r.BadInput.GarbledLines; n > 0 {
		out.add(" %s could not be read as records.", plural(n, "line", "lines"))
	}
	return out
}

func (r *Report) markdown(m *mdWriter) {
	s := r.Summary
	m.printf("# LLM call history: evidence report\n\n%s\n\n", mdLine(r.provenance().String(), 4000))
	if ins := r.Provenance.Inputs; len(ins) > 1 {
		var rows [][]string
		for _, in := range ins {
			torn := ""
			if in.Torn {
				torn = "yes"
			}
			rows = append(rows, []string{md(in.Name), num(in.Lines), num(in.Records), num(in.BadLines), torn})
		}
		m.table("lrrrl", []string{"Input", "Lines", "Records", "Bad lines", "Torn last line"}, rows)
	}
	m.printf("%s\n\n", r.SummaryText())

	m.printf("## Evidence-review checklist\n\n")
	var rows [][]string
	for _, c := range r.Checklist {
		rows = append(rows, []string{c.Item, md(c.Figure), "**" + c.Verdict + "**"})
	}
	m.table("lll", []string{"Item", "Figure", "Verdict"}, rows)

	m.printf("## History telemetry\n\n")
	rows = rows[:0]
	for _, hr := range r.historyRows() {
		rows = append(rows, []string{md(hr.Label), num(hr.Count), hr.Share})
	}
	m.table("lrr", []string{"Figure", "Records", "Share"}, rows)
	m.printf("Conversation history size: at most %d, mean %s.\n\n", r.History.MaxHistorySize, trimFloat(r.History.MeanHistorySize))

	m.printf("## History query patterns\n\n")
	if len(r.Patterns) == 0 {
		m.printf("No record carries a query pattern tag.\n\n")
	} else {
		rows = rows[:0]
		for _, p := range r.Patterns {
			rows = append(rows, []string{md(p.Tag), num(p.Records), percent(p.Records, r.History.Access), code(p.Example)})
		}
		m.table("lrrl", []string{"Tag", "Records", "Of access", "Example"}, rows)
	}

	m.printf("## Calls\n\n")
	rows = rows[:0]
	for _, cr := range r.callRows() {
		rows = append(rows, []string{cr.Label, num(cr.Count)})
	}
	m.table("lr", []string{"Figure", "Count"}, rows)
	if span := r.spanSentence(); len(span) > 0 {
		m.printf("%s\n\n", span)
	}
	if len(r.Providers) > 0 {
		m.printf("### Providers\n\n")
		rows = rows[:0]
		for _, p := range r.Providers {
			rows = append(rows, []string{md(p.Name), num(p.Records), num(p.Calls), num(p.Errors), num(p.InputTokens), num(p.OutputTokens), num(p.TotalTokens)})
		}
		m.table("lrrrrrr", []string{"Provider", "Records", "HTTP calls", "Errors", "Input tokens", "Output tokens", "Total tokens"}, rows)
	}
	for _, sec := range []struct {
		title, col string
		counts     []Count
	}{{"Speakers", "Speaker", r.Speakers}, {"Methods", "Method", r.Methods}, {"Models", "Model", r.Models}} {
		if len(sec.counts) == 0 {
			continue
		}
		m.printf("### %s\n\n", sec.title)
		rows = rows[:0]
		for _, c := range sec.counts {
			rows = append(rows, []string{md(c.Name), num(c.Count), percent(c.Count, s.Records)})
		}
		m.table("lrr", []string{sec.col, "Records", "Share"}, rows)
	}

	for _, sec := range []struct {
		title, col string
		groups     []Group
	}{{"Users", "User", r.Users}, {"Tags", "Tag", r.Tags}} {
		if !attributed(sec.groups) {
			continue
		}
		m.printf("### %s\n\n", sec.title)
		rows = rows[:0]
		for _, g := range sec.groups {
			rows = append(rows, []string{md(g.Name), num(g.Records), num(g.Errors), num(g.TotalTokens), money(g.USD), msText(g.P50MS), msText(g.P95MS)})
		}
		m.table("lrrrrrr", []string{sec.col, "Records", "Errors", "Tokens", "Spend", "p50", "p95"}, rows)
	}

	m.printf("## Errors\n\n")
	if len(r.Errors) == 0 {
		m.printf("No record ended in error.\n\n")
	} else {
		rows = rows[:0]
		for _, e := range r.Errors {
			rows = append(rows, []string{md(e.Type), num(e.Count), num(e.Retriable), percent(e.Retriable, e.Count)})
		}
		m.table("lrrr", []string{"Error type", "Records", "Retriable", "Retriable share"}, rows)
	}

	m.printf("## Retries\n\n%s\n\n", r.retriesText())
	rows = rows[:0]
	for _, c := range r.Retries.Histogram {
		if c.Count > 0 {
			rows = append(rows, []string{c.Name, num(c.Count)})
		}
	}
	if len(rows) > 0 {
		m.table("rr", []string{"Attempts", "Records"}, rows)
	}

	m.printf("## Latency\n\n")
	if len(r.Latency) == 0 {
		m.printf("No record carries a duration.\n\n")
	} else {
		m.printf("%s\n\n", r.latencyText())
		rows = rows[:0]
		for _, l := range r.Latency {
			rows = append(rows, append([]string{md(l.Method)}, r.latencyCells(l)...))
		}
		header := append([]string{"Method"}, r.latencyHeader()...)
		m.table("l"+strings.Repeat("r", len(header)-1), header, rows)
	}

	m.printf("## Tokens\n\n")
	if len(r.Tokens) == 0 {
		m.printf("No record carries usage.\n\n")
	} else {
		rows = rows[:0]
		for _, t := range r.Tokens {
			rows = append(rows, []string{md(t.Model), num(t.Records), num(t.InputTokens), num(t.OutputTokens), num(t.TotalTokens)})
		}
		m.table("lrrrr", []string{"Model", "Records", "Input", "Output", "Total"}, rows)
	}

	r.markdownSpend(m)

	if r.nested() {
		m.printf("## Depth\n\n")
		rows = rows[:0]
		for _, c := range r.Depth {
			if c.Count > 0 {
				rows = append(rows, []string{c.Name, num(c.Count), percent(c.Count, s.Records)})
			}
		}
		m.table("rrr", []string{"Depth", "Records", "Share"}, rows)
	}

	m.printf("## Largest traces\n\n")
	t := r.Traces
	if len(t.Top) == 0 {
		m.printf("No record carries a trace id.\n\n")
	} else {
		m.printf("%s\n\n", r.tracesText())
		rows = rows[:0]
		for _, tc := range t.Top {
			row := []string{md(tc.TraceID), num(tc.Records)}
			if !t.Exact {
				row = append(row, num(tc.MaxOvercount))
			}
			rows = append(rows, row)
		}
		header := []string{"Trace", "Records"}
		if !t.Exact {
			header = append(header, "Overcount at most")
		}
		m.table("lrr", header, rows)
	}

	r.markdownScores(m)

	m.printf("## Bad input\n\n")
	b := r.BadInput
	if b.GarbledLines == 0 && b.TornTails == 0 {
		m.printf("Every line was a record.\n\n")
	} else {
		m.printf("%s\n\n", r.badInputText())
		if len(b.FirstGarbled) > 0 {
			rows = rows[:0]
			for _, l := range b.FirstGarbled {
				rows = append(rows, []string{md(l.Source) + ":" + strconv.Itoa(l.Line), md(l.Message)})
			}
			m.table("ll", []string{"Line", "Reason"}, rows)
		}
		for _, src := range b.TornSources {
			m.printf("- torn last line: %s\n", md(src))
		}
		if len(b.TornSources) > 0 {
			m.printf("\n")
		}
	}

	if len(r.Notes) > 0 {
		m.printf("## Notes\n\n")
		for _, n := range r.Notes {
			m.printf("- %s\n", n)
		}
		m.printf("\n")
	}
}

func (r *Report) markdownSpend(m *mdWriter) {
	s := r.Spend
	if r.Summary.Records == 0 {
		m.printf("## Spend\n\nNo records.\n\n")
		return
	}
	m.printf("## Spend\n\n%s\n\n", r.spendText())
	if t := r.stalePricesText(); t != "" {
		m.printf("> **Warning.** %s\n\n", mdLine(t, 4000))
	}
	var rows [][]string
	if s.PricedRecords > 0 {
		for _, sr := range r.spendRows() {
			rows = append(rows, []string{sr.Label, num(sr.Records), num(sr.Priced), money(sr.USD), sr.Share})
		}
		m.table("lrrrr", []string{"Records", "Count", "Priced", "Spend", "Share of spend"}, rows)

		for _, sec := range []struct {
			title, col string
			rows       []SpendBy
		}{{"Spend by model", "Model", s.Models}, {"Spend by speaker", "Speaker", s.Speakers}} {
			m.printf("### %s\n\n", sec.title)
			rows = rows[:0]
			for _, b := range sec.rows {
				rows = append(rows, []string{md(b.Name), num(b.Records), money(b.USD), shareText(b.USD, s.USD)})
			}
			m.table("lrrr", []string{sec.col, "Priced records", "Spend", "Share"}, rows)
		}

		m.printf("### Most expensive traces\n\n")
		t := s.Traces
		if len(t.Top) == 0 {
			m.printf("No priced record carries a trace id.\n\n")
		} else {
			m.printf("%s\n\n", r.traceSpendText())
			rows = rows[:0]
			for _, tc := range t.Top {
				row := []string{md(tc.TraceID), money(tc.USD), shareText(tc.USD, s.USD)}
				if !t.Exact {
					row = append(row, money(tc.MaxOvercountUSD))
				}
				rows = append(rows, row)
			}
			header := []string{"Trace", "Spend", "Share"}
			if !t.Exact {
				header = append(header, "Overcount at most")
			}
			m.table("lrrr", header, rows)
		}
	}

	m.printf("### Input served from cache\n\n%s\n\n", r.cacheText())
	rows = rows[:0]
	for _, t := range r.Tokens {
		if t.InputTokens > 0 {
			rows = append(rows, []string{md(t.Model), num(t.InputTokens), num(t.CachedTokens), percent(t.CachedTokens, t.InputTokens), num(t.CacheWriteTokens)})
		}
	}
	if len(rows) > 0 && s.Cache.CachedTokens+s.Cache.CacheWriteTokens > 0 {
		m.table("lrrrr", []string{"Model", "Input tokens", "Read from cache", "Share", "Written to cache"}, rows)
	}

	m.printf("### Unpriced calls\n\n")
	if s.UnpricedRecords+s.NoUsageRecords+s.LocalRecords == 0 {
		m.printf("Every record was priced.\n\n")
		return
	}
	rows = rows[:0]
	for _, ur := range r.unpricedRows() {
		if ur.Count > 0 {
			rows = append(rows, []string{ur.Label, num(ur.Count), ur.Share})
		}
	}
	m.table("lrr", []string{"Reason", "Records", "Share of records"}, rows)
	if len(s.UnpricedModels) > 0 {
		rows = rows[:0]
		for _, c := range s.UnpricedModels {
			rows = append(rows, []string{md(c.Name), num(c.Count)})
		}
		m.table("lr", []string{"Model most often unpriced", "Records"}, rows)
	}
}

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
func md(s string) string {
	s = oneLine(s, 200)
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

func ms(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (r *Report) metCount() (met int) {
	for _, c := range r.Checklist {
		if c.Verdict == Met {
			met++
		}
	}
	return met
}

// SummaryText is the report's summary paragraph.
func (r *Report) SummaryText() string {
	s := r.Summary
	if s.Records == 0 {
		text := "The input holds no records, so no figure below says anything yet."
		if r.BadInput.GarbledLines > 0 {
			text += fmt.Sprintf(" %s could not be read as records.", plural(r.BadInput.GarbledLines, "line", "lines"))
		}
		return text
	}
	h := r.History
	text := fmt.Sprintf("%s made %s", plural(s.Records, "record (logical call)", "records (logical calls)"), plural(s.Calls, "HTTP call", "HTTP calls"))
	if s.FirstTimestamp != "" {
		text += fmt.Sprintf(" from %s to %s", s.FirstTimestamp, s.LastTimestamp)
	}
	text += fmt.Sprintf(". Appended to the history: %s of records; history guidance in the prompt: %s. History access was detected in %s of all records",
		percent(h.Appended, s.Records), percent(h.Guidance, s.Records), percent(h.Access, s.Records))
	if h.WithProgramSource > 0 {
		text += fmt.Sprintf(" and in %s of the %s with program source", percent(h.AccessWithProgramSource, h.WithProgramSource), num(h.WithProgramSource))
	} else {
		text += "; no record carries program source"
	}
	text += fmt.Sprintf(". Records that ended in error: %s. Checklist items met: %d of %d.", num(s.ErrorRecords), r.metCount(), len(r.Checklist))
	if n := r.BadInput.GarbledLines; n > 0 {
		text += fmt.Sprintf(" %s could not be read as records.", plural(n, "line", "lines"))
	}
	return text
}

func (r *Report) markdown(m *mdWriter) {
	s, h := r.Summary, r.History
	m.printf("# LLM call history: evidence report\n\n%s\n\n", r.SummaryText())

	m.printf("## Evidence-review checklist\n\n")
	var rows [][]string
	for _, c := range r.Checklist {
		rows = append(rows, []string{c.Item, md(c.Figure), "**" + c.Verdict + "**"})
	}
	m.table("lll", []string{"Item", "Figure", "Verdict"}, rows)

	m.printf("## History telemetry\n\n")
	m.table("lrr", []string{"Figure", "Records", "Share"}, [][]string{
		{"history record appended", num(h.Appended), percent(h.Appended, s.Records)},
		{"history guidance in the prompt", num(h.Guidance), percent(h.Guidance, s.Records)},
		{"history access detected", num(h.Access), percent(h.Access, s.Records)},
		{"with program source", num(h.WithProgramSource), percent(h.WithProgramSource, s.Records)},
		{"… of which history access detected", num(h.AccessWithProgramSource), percent(h.AccessWithProgramSource, h.WithProgramSource)},
		{"program source mentions conversation\\_history", num(h.ReferencesHistory), percent(h.ReferencesHistory, h.WithProgramSource)},
		{"… of which no access detected", num(h.ReferencesWithoutAccess), percent(h.ReferencesWithoutAccess, h.ReferencesHistory)},
	})
	m.printf("Conversation history size: at most %d, mean %s.\n\n", h.MaxHistorySize, ms(h.MeanHistorySize))

	m.printf("## History query patterns\n\n")
	if len(r.Patterns) == 0 {
		m.printf("No record carries a query pattern tag.\n\n")
	} else {
		rows = rows[:0]
		for _, p := range r.Patterns {
			rows = append(rows, []string{md(p.Tag), num(p.Records), percent(p.Records, h.Access), code(p.Example)})
		}
		m.table("lrrl", []string{"Tag", "Records", "Of access", "Example"}, rows)
	}

	m.printf("## Calls\n\n")
	m.table("lr", []string{"Figure", "Count"}, [][]string{
		{"records (logical calls)", num(s.Records)},
		{"HTTP calls (attempts)", num(s.Calls)},
		{"ok", num(s.OKRecords)},
		{"error", num(s.ErrorRecords - s.CanceledRecords)},
		{"canceled", num(s.CanceledRecords)},
	})
	if s.FirstTimestamp != "" {
		m.printf("From %s to %s (%s s).\n\n", s.FirstTimestamp, s.LastTimestamp, ms(s.SpanSeconds))
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

	m.printf("## Retries\n\nRecords retried: %s, with %s attempts beyond the first in all; each retried call is one record.\n\n",
		num(r.Retries.RetriedRecords), num(r.Retries.ExtraAttempts))
	rows = rows[:0]
	for _, c := range r.Retries.Histogram {
		rows = append(rows, []string{c.Name, num(c.Count)})
	}
	m.table("rr", []string{"Attempts", "Records"}, rows)

	m.printf("## Latency\n\n")
	if len(r.Latency) == 0 {
		m.printf("No record carries a duration.\n\n")
	} else {
		m.printf("Milliseconds per logical call, retries included. Quantiles are within 1%% of the true value.\n\n")
		rows = rows[:0]
		for _, l := range r.Latency {
			rows = append(rows, []string{md(l.Method), num(l.Records), ms(l.P50MS), ms(l.P90MS), ms(l.P99MS), ms(l.MaxMS)})
		}
		m.table("lrrrrr", []string{"Method", "Records", "p50", "p90", "p99", "max"}, rows)
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

	m.printf("## Depth\n\n")
	rows = rows[:0]
	for _, c := range r.Depth {
		if c.Count > 0 {
			rows = append(rows, []string{c.Name, num(c.Count), percent(c.Count, s.Records)})
		}
	}
	if len(rows) == 0 {
		m.printf("No records.\n\n")
	} else {
		m.table("rrr", []string{"Depth", "Records", "Share"}, rows)
	}

	m.printf("## Largest traces\n\n")
	t := r.Traces
	if len(t.Top) == 0 {
		m.printf("No record carries a trace id.\n\n")
	} else {
		if t.Exact {
			m.printf("%s records in %s traces; %s records without a trace. Counts are exact.\n\n", num(t.WithTrace), num(int64(t.Tracked)), num(t.WithoutTrace))
		} else {
			m.printf("%s records with a trace; %s without. More traces than the counter holds: each count is an upper bound, too high by at most the overcount shown (%s at most).\n\n",
				num(t.WithTrace), num(t.WithoutTrace), num(t.MaxOvercount))
		}
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

	m.printf("## Bad input\n\n")
	b := r.BadInput
	if b.GarbledLines == 0 && b.TornTails == 0 {
		m.printf("Every line was a record.\n\n")
	} else {
		m.printf("Garbled lines skipped: %s. Sources that ended in a torn line (a crash in mid-write; the line was skipped): %s.\n\n", num(b.GarbledLines), num(b.TornTails))
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

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
		return s
	case 1:
		in := p.Inputs[0]
		s.add(" from %s: %s read, %s, %s", in.Name, plural(in.Lines, "line", "lines"), plural(in.Records, "record", "records"), plural(in.BadLines, "bad line", "bad lines"))
		if in.Torn {
			s.add(", a torn last line skipped")
		}
		s.add(".")
		return s
	}
	s.add(" from %s: %s read, %s, %s.", plural(int64(len(p.Inputs)), "input", "inputs"),
		plural(p.Lines, "line", "lines"), plural(r.Summary.Records, "record", "records"), plural(p.BadLines, "bad line", "bad lines"))
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

// badInputText is the sentence over the bad lines.
func (r *Report) badInputText() string {
	b := r.BadInput
	return fmt.Sprintf("Lines that are not records, skipped: %s. Inputs that ended in a torn line (a crash in mid-write; the line was skipped): %s.",
		num(b.GarbledLines), num(b.TornTails))
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

func init() {
	register("query", "ask a store for records, conversations or figures", runQuery)
}

const queryAbout = `Query asks the store at URL (sqlite:FILE or postgres://...) for the
records its filters select, newest first, a page at a time; with -traces,
for the conversations (traces) that have such a record; with -group, for
figures grouped by time, user, tag, model, provider, method, error type
or trace: calls, errors, tokens, spend, and latency p50 and p95; with
-call, for one record; with -describe, for what the store holds.

Filters (all given must hold):
  -since, -until  a time (2026-11-23, 2026-11-23T10:00:00Z) or a duration
                  back from now (24h, 90m)
  -user, -trace, -model, -provider, -method, -status (ok, error, canceled),
  -error-type (rate_limit, timeout, ...), -min-cost (US dollars),
  -min-duration (1.5s), -tag (each given), -meta KEY=VALUE (each given),
  -text WORDS (every word, where it entered its conversation, or in the
  output or error message), -score (each given: helpfulness<0.5,
  thumbs=false, topic=off_topic, helpfulness for any, !helpfulness for
  none; on a record or on its conversation)

Flags may come before or after URL. Output: a table, or with -format
jsonl one JSON object per line: records as the JSONL sink writes them
(args whole, unless -no-args), groups and conversations as objects. When
there are more records than a page (-n), the last line on standard error
gives the -cursor of the next.

Examples:
  llmhistory query sqlite:history.db -user user-42 -since 12h
  llmhistory query sqlite:history.db -traces -text refund
  llmhistory query sqlite:history.db -traces -score 'helpfulness<0.5'
  llmhistory query postgres://llm@db/history -group day,model -since 168h
  llmhistory query sqlite:history.db -trace demo-1a2b -format jsonl

Exit status: 0 when the store answered, 1 when it could not be opened or
read, 2 for bad flags.`

// listFlag gathers a flag given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runQuery(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("query", "[flags] URL", queryAbout, io)
	ff := filterFlagsOn(fs)
	n := fs.Int("n", 20, "records or conversations per page (`N`, at most 1000)")
	cursor := fs.String("cursor", "", "continue after the page that gave this `cursor`")
	format := fs.String("format", "table", "output `format`: table or jsonl")
	noArgs := fs.Bool("no-args", false, "with -format jsonl, leave records' args out ([])")
	traces := fs.Bool("traces", false, "list the conversations that have a selected record, instead of records")
	groupBy := fs.String("group", "", "figures grouped by these `dimensions`, comma-separated: hour, day, user, tag, model, provider, method, error_type, trace")
	call := fs.String("call", "", "print the one record with this call `id`")
	describe := fs.Bool("describe", false, "say what the store holds")
	positional, code := parseInterleaved(fs, args, io)
	if code >= 0 {
		return code
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(io.err, "llmhistory query: "+format+"\n", args...)
		return code
	}
	switch {
	case len(positional) != 1:
		fail(exitUsage, "want exactly one store URL")
		fs.Usage()
		return exitUsage
	case !isStoreURL(positional[0]):
		return fail(exitUsage, "%q is not a store URL: want sqlite:FILE or postgres://... (for a JSONL file, import it first: llmhistory import FILE --into sqlite:history.db)", positional[0])
	case *format != "table" && *format != "jsonl":
		return fail(exitUsage, "-format must be table or jsonl, not %q", *format)
	case *n < 1 || *n > 1000:
		return fail(exitUsage, "-n must be from 1 to 1000, not %d", *n)
	}
	f, err := ff.filter(time.Now())
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	var by []store.GroupBy
	if *groupBy != "" {
		for _, g := range strings.Split(*groupBy, ",") {
			by = append(by, store.GroupBy(strings.TrimSpace(g)))
		}
	}
	modes := 0
	for _, on := range []bool{*traces, *groupBy != "", *call != "", *describe} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return fail(exitUsage, "-traces, -group, -call and -describe ask different questions: give one")
	}

	s, err := openStoreReader(ctx, positional[0])
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer s.Close()
	q := &querier{s: s, io: io, jsonl: *format == "jsonl", noArgs: *noArgs}
	switch {
	case *describe:
		err = q.describe(ctx)
	case *call != "":
		err = q.get(ctx, *call)
	case *groupBy != "":
		err = q.aggregate(ctx, store.AggregateQuery{Filter: f, By: by})
		if errors.Is(err, store.ErrBadGroup) {
			return fail(exitUsage, "-group: %v", err)
		}
	case *traces:
		err = q.traces(ctx, store.Query{Filter: f, Limit: *n, Cursor: *cursor})
	default:
		err = q.records(ctx, store.Query{Filter: f, Limit: *n, Cursor: *cursor, NoArgs: *noArgs || !q.jsonl})
	}
	if errors.Is(err, store.ErrBadCursor) {
		return fail(exitUsage, "-cursor: %v", err)
	}
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	return exitOK
}

// parseWhen reads a time (RFC 3339, or a date) or a duration back from
// now; "" is the zero time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a time (2026-11-23, 2026-11-23T10:00:00Z) nor a duration (24h)", s)
}

// querier prints what a store answers.
type querier struct {
	s      *store.Store
	io     stdio
	jsonl  bool
	noArgs bool
}

func (q *querier) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = q.io.out.Write(append(b, '\n'))
	return err
}

func (q *querier) record(r record.Record) error {
	_, err := q.io.out.Write(append(r.AppendJSON(nil), '\n'))
	return err
}

func (q *querier) table() *tabwriter.Writer {
	return tabwriter.NewWriter(q.io.out, 0, 0, 2, ' ', 0)
}

func (q *querier) records(ctx context.Context, sq store.Query) error {
	p, err := q.s.Query(ctx, sq)
	if err != nil {
		return err
	}
	if q.jsonl {
		for _, r := range p.Records {
			if err := q.record(r); err != nil {
				return err
			}
		}
	} else {
		w := q.table()
		fmt.Fprintln(w, "TIME\tCALL ID\tTRACE\tUSER\tMODEL\tOUTCOME\tMS\tTOKENS\tUSD")
		for _, r := range p.Records {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", shortTime(r.Timestamp), r.CallID, dash(r.TraceID), dash(r.UserID), dash(r.Model),
				outcome(r), ms(r.DurationMS), tokens(r.Usage), usd(r.Cost))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	q.next(p.Next, len(p.Records), "record", "records")
	return nil
}

// next says how to get the page after, or how many there were.
func (q *querier) next(cursor string, n int, one, many string) {
	if cursor != "" {
		fmt.Fprintf(q.io.err, "llmhistory query: %s; more with -cursor %s\n", plural(int64(n), one, many), cursor)
		return
	}
	fmt.Fprintf(q.io.err, "llmhistory query: %s\n", plural(int64(n), one, many))
}

func (q *querier) traces(ctx context.Context, sq store.Query) error {
	p, err := q.s.Traces(ctx, sq)
	if err != nil {
		return err
	}
	if q.jsonl {
		for _, t := range p.Traces {
			if err := q.line(traceJSON(t)); err != nil {
				return err
			}
		}
	} else {
		w := q.table()
		fmt.Fprintln(w, "LAST\tTRACE\tCALLS\tERRORS\tUSER\tMODEL\tTOKENS\tUSD\tFIRST")
		for _, t := range p.Traces {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Last.Format(time.DateTime), t.TraceID, t.Calls, t.Errors,
				dash(t.UserID), dash(t.Model), group(t.TotalTokens), fmt.Sprintf("%.4f", t.CostUSD), t.First.Format(time.DateTime))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	q.next(p.Next, len(p.Traces), "conversation", "conversations")
	return nil
}

func traceJSON(t store.TraceSummary) map[string]any {
	return map[string]any{"trace_id": t.TraceID, "first": t.First.Format(time.RFC3339Nano), "last": t.Last.Format(time.RFC3339Nano),
		"calls": t.Calls, "errors": t.Errors, "total_tokens": t.TotalTokens, "cost_usd": t.CostUSD,
		"user_id": t.UserID, "model": t.Model, "duration_ms": t.DurationMS, "last_call_id": t.LastCallID}
}

func (q *querier) aggregate(ctx context.Context, aq store.AggregateQuery) error {
	groups, err := q.s.Aggregate(ctx, aq)
	if err != nil {
		return err
	}
	if q.jsonl {
		for _, g := range groups {
			obj := map[string]any{"calls": g.Calls, "errors": g.Errors, "input_tokens": g.InputTokens, "output_tokens": g.OutputTokens,
				"total_tokens": g.TotalTokens, "cost_usd": g.CostUSD, "latency_p50_ms": g.LatencyP50MS, "latency_p95_ms": g.LatencyP95MS}
			for i, dim := range aq.By {
				obj[string(dim)] = g.Key[i]
			}
			if err := q.line(obj); err != nil {
				return err
			}
		}
	} else {
		w := q.table()
		var head []string
		for _, dim := range aq.By {
			head = append(head, strings.ToUpper(string(dim)))
		}
		head = append(head, "CALLS", "ERRORS", "IN TOKENS", "OUT TOKENS", "USD", "P50 MS", "P95 MS")
		fmt.Fprintln(w, strings.Join(head, "\t"))
		for _, g := range groups {
			var cells []string
			for _, k := range g.Key {
				cells = append(cells, dash(k))
			}
			cells = append(cells, group(g.Calls), group(g.Errors), group(g.InputTokens), group(g.OutputTokens),
				fmt.Sprintf("%.4f", g.CostUSD), ms(g.LatencyP50MS), ms(g.LatencyP95MS))
			fmt.Fprintln(w, strings.Join(cells, "\t"))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(q.io.err, "llmhistory query: %s\n", plural(int64(len(groups)), "group", "groups"))
	return nil
}

func (q *querier) get(ctx context.Context, callID string) error {
	r, err := q.s.Get(ctx, callID)
	if err != nil {
		return err
	}
	if q.noArgs {
		r.Args = nil
	}
	if q.jsonl {
		return q.record(r)
	}
	var pretty strings.Builder
	enc := json.NewEncoder(&pretty)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err = q.io.out.Write([]byte(pretty.String()))
	return err
}

func (q *querier) describe(ctx context.Context) error {
	d, err := q.s.Describe(ctx)
	if err != nil {
		return err
	}
	if q.jsonl {
		return q.line(map[string]any{"url": d.URL, "dialect": d.Dialect.String(), "schema_version": d.SchemaVersion,
			"records": d.Records, "messages": d.Messages, "traces": d.Traces, "bytes": d.Bytes,
			"oldest": timeOrEmpty(d.Oldest), "newest": timeOrEmpty(d.Newest), "retention": q.s.Retention().String()})
	}
	w := q.table()
	fmt.Fprintf(w, "store\t%s (%s, schema version %d)\n", d.URL, d.Dialect, d.SchemaVersion)
	fmt.Fprintf(w, "records\t%s in %s\n", group(d.Records), plural(d.Traces, "trace", "traces"))
	fmt.Fprintf(w, "messages\t%s, stored once each\n", group(d.Messages))
	if d.Records > 0 {
		fmt.Fprintf(w, "from\t%s to %s\n", d.Oldest.Format(time.RFC3339), d.Newest.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "size\t%s bytes\n", group(d.Bytes))
	fmt.Fprintf(w, "retention\t%s\n", q.s.Retention())
	return w.Flush()
}

func timeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

func shortTime(ts string) string {
	t, err := record.ParseTime(ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func outcome(r record.Record) string {
	if r.Outcome.OK {
		return r.Outcome.Status
	}
	if t := r.FailureType(); t != "" {
		return r.Outcome.Status + ":" + t
	}
	return r.Outcome.Status
}

func ms(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func tokens(u *record.Usage) string {
	if u == nil {
		return "-"
	}
	return group(int64(u.TotalTokens))
}

func usd(c *record.Cost) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.6f", c.USD)
}

package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GroupBy is a dimension an aggregate is grouped by.
type GroupBy string

// The dimensions of [AggregateQuery].By.
const (
	ByHour      GroupBy = "hour"  // UTC hour of the timestamp
	ByDay       GroupBy = "day"   // UTC day of the timestamp
	ByUser      GroupBy = "user"  // user_id
	ByTag       GroupBy = "tag"   // each tag: a record with two counts in both groups
	ByModel     GroupBy = "model" // model
	ByProvider  GroupBy = "provider"
	ByMethod    GroupBy = "method"
	ByErrorType GroupBy = "error_type"
	ByTrace     GroupBy = "trace"
)

// GroupBys lists every dimension, for a command's help.
func GroupBys() []GroupBy {
	return []GroupBy{ByHour, ByDay, ByUser, ByTag, ByModel, ByProvider, ByMethod, ByErrorType, ByTrace}
}

// AggregateQuery asks for figures of the records a filter selects,
// grouped by the dimensions of By (none: one group of all).
type AggregateQuery struct {
	Filter
	By []GroupBy
}

// Group is the figures of one group of an aggregate.
type Group struct {
	// Key holds the group's value for each dimension of By, in order: an
	// hour or a day as RFC 3339 ("2026-11-23T10:00:00Z"), other
	// dimensions as they are, "" for records without one (no user, no
	// tag, no error).
	Key []string
	// Time is the start of the group's hour or day, when grouped by one.
	Time time.Time

	Calls        int64
	Errors       int64 // calls whose outcome was not "ok"
	InputTokens  int64
	OutputTokens int64
	TotalTokens  int64
	CostUSD      float64 // the sum of the costs of the priced calls
	// LatencyP50 and LatencyP95 are the median and 95th percentile of
	// duration_ms over the group's calls that have one (linear
	// interpolation, as PostgreSQL's percentile_cont), 0 when none has.
	LatencyP50MS, LatencyP95MS float64
}

// ErrBadGroup: a dimension Aggregate does not know, or one given twice.
var ErrBadGroup = fmt.Errorf("store: unknown group")

// groupExpr is the SQL of a dimension over records r (and tags t).
func groupExpr(g GroupBy) (string, bool) {
	switch g {
	case ByHour:
		return "r.ts / 3600000000", true
	case ByDay:
		return "r.ts / 86400000000", true
	case ByUser:
		return "coalesce(r.user_id, '')", true
	case ByTag:
		return "coalesce(t.value, '')", true
	case ByModel:
		return "coalesce(r.model, '')", true
	case ByProvider:
		return "r.provider", true
	case ByMethod:
		return "r.method", true
	case ByErrorType:
		return "coalesce(r.error_type, '')", true
	case ByTrace:
		return "coalesce(r.trace_id, '')", true
	}
	return "", false
}

// Aggregate returns the figures of the records q selects, one [Group] per
// combination of the values of q.By, ordered by key (times ascending).
// On SQLite, an aggregate that groups and filters only by time (whole
// hours), model, provider, method, status and error type reads hourly
// rollups rather than the records (its latency percentiles are then
// within half a percent); others read the records that match.
// docs/store.md has the figures.
func (s *Store) Aggregate(ctx context.Context, q AggregateQuery) ([]Group, error) {
	if err := checkGroups(q.By); err != nil {
		return nil, err
	}
	if s.fromRollups(q) {
		return s.aggregateRollups(ctx, q)
	}
	var exprs []string
	tags := false
	seen := map[GroupBy]bool{}
	for _, g := range q.By {
		e, ok := groupExpr(g)
		if !ok || seen[g] {
			return nil, fmt.Errorf("%w %q (want %s)", ErrBadGroup, g, groupNames())
		}
		seen[g] = true
		tags = tags || g == ByTag
		exprs = append(exprs, e)
	}
	var args []any
	from := ` FROM records r`
	if tags {
		from += ` LEFT JOIN record_attrs t ON t.seq = r.seq AND t.name = '` + attrTag + `'`
	}
	where := q.where(s, &args)
	if where != "" {
		from += " WHERE " + where
	}
	keys, groupBy := "", ""
	if len(exprs) > 0 {
		keys = strings.Join(exprs, ", ") + ", "
		groupBy = " GROUP BY " + strings.Join(exprs, ", ") + " ORDER BY " + strings.Join(exprs, ", ")
	}
	pct := `, 0, 0`
	if s.dialect == PostgreSQL {
		pct = `, coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.duration_ms), 0), coalesce(percentile_cont(0.95) WITHIN GROUP (ORDER BY r.duration_ms), 0)`
	}
	query := `SELECT ` + keys + `count(*), coalesce(sum(CASE WHEN r.status <> 'ok' THEN 1 ELSE 0 END), 0),
		coalesce(sum(r.input_tokens), 0), coalesce(sum(r.output_tokens), 0), coalesce(sum(r.total_tokens), 0),
		coalesce(sum(r.cost_usd), 0)` + pct + from + groupBy
	rows, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var groups []Group
	var raw []string // each group's key values as scanned, for percentiles
	for rows.Next() {
		keyVals := make([]any, len(q.By))
		for i := range keyVals {
			keyVals[i] = new(any)
		}
		var g Group
		dest := append(keyVals, &g.Calls, &g.Errors, &g.InputTokens, &g.OutputTokens, &g.TotalTokens, &g.CostUSD, &g.LatencyP50MS, &g.LatencyP95MS)
		if err := rows.Scan(dest...); err != nil {
			return nil, s.readErr(err)
		}
		for i, dim := range q.By {
			g.Key = append(g.Key, s.keyString(dim, *(keyVals[i].(*any)), &g.Time))
		}
		groups = append(groups, g)
		raw = append(raw, string(rawKey(nil, keyVals)))
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	rows.Close()
	if s.dialect == SQLite && len(groups) > 0 {
		if err := s.percentiles(ctx, exprs, from, args, groups, raw); err != nil {
			return nil, err
		}
	}
	return groups, nil
}

func checkGroups(by []GroupBy) error {
	seen := map[GroupBy]bool{}
	for _, g := range by {
		if _, ok := groupExpr(g); !ok || seen[g] {
			return fmt.Errorf("%w %q (want %s)", ErrBadGroup, g, groupNames())
		}
		seen[g] = true
	}
	return nil
}

func groupNames() string {
	var names []string
	for _, g := range GroupBys() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}

// keyString renders a group's value of one dimension.
func (s *Store) keyString(dim GroupBy, v any, t *time.Time) string {
	switch dim {
	case ByHour, ByDay:
		n := toInt(v)
		unit := int64(time.Hour / time.Microsecond)
		if dim == ByDay {
			unit *= 24
		}
		*t = time.UnixMicro(n * unit).UTC()
		return t.Format(time.RFC3339)
	}
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func toInt(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case []byte:
		n, _ := strconv.ParseInt(string(v), 10, 64)
		return n
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

// percentiles fills the latencies of groups on SQLite, which has no
// percentile function: the durations are read (the key columns and one
// more, unsorted) and each group's sorted in Go.
func (s *Store) percentiles(ctx context.Context, exprs []string, from string, args []any, groups []Group, raw []string) error {
	index := make(map[string]int, len(groups))
	for i, k := range raw {
		index[k] = i
	}
	cond := " AND r.duration_ms IS NOT NULL"
	if !strings.Contains(from, " WHERE ") {
		cond = " WHERE r.duration_ms IS NOT NULL"
	}
	keys := ""
	if len(exprs) > 0 {
		keys = strings.Join(exprs, ", ") + ", "
	}
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+keys+`r.duration_ms`+from+cond), args...)
	if err != nil {
		return s.readErr(err)
	}
	defer rows.Close()
	durations := make([][]float64, len(groups))
	keyVals := make([]any, len(exprs))
	for i := range keyVals {
		keyVals[i] = new(any)
	}
	var d float64
	dest := append(slices.Clone(keyVals), &d)
	var buf []byte
	last := -1
	var lastKey []byte
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return s.readErr(err)
		}
		buf = rawKey(buf[:0], keyVals)
		i := last
		if last < 0 || string(buf) != string(lastKey) {
			var ok bool
			if i, ok = index[string(buf)]; !ok {
				continue
			}
			last, lastKey = i, append(lastKey[:0], buf...)
		}
		durations[i] = append(durations[i], d)
	}
	if err := rows.Err(); err != nil {
		return s.readErr(err)
	}
	for i, ds := range durations {
		slices.Sort(ds)
		groups[i].LatencyP50MS = percentileCont(ds, 0.5)
		groups[i].LatencyP95MS = percentileCont(ds, 0.95)
	}
	return nil
}

// rawKey appends the scanned key values, each ended by a zero byte.
func rawKey(dst []byte, vals []any) []byte {
	for _, v := range vals {
		switch v := (*(v.(*any))).(type) {
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
		case string:
			dst = append(dst, v...)
		case []byte:
			dst = append(dst, v...)
		case float64:
			dst = strconv.AppendFloat(dst, v, 'g', -1, 64)
		case nil:
		default:
			dst = fmt.Append(dst, v)
		}
		dst = append(dst, 0)
	}
	return dst
}

// percentileCont is PostgreSQL's percentile_cont over sorted values.
func percentileCont(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	pos := p * float64(len(sorted)-1)
	lo := math.Floor(pos)
	hi := math.Ceil(pos)
	if lo == hi {
		return sorted[int(lo)]
	}
	return sorted[int(lo)] + (pos-lo)*(sorted[int(hi)]-sorted[int(lo)])
}

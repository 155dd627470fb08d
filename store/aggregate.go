package store

import (
	"cmp"
	"context"
	"database/sql"
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
	// NoLatency leaves the latency percentiles 0: an aggregate that shows
	// none reads less (the rollups' sums, added up by the database).
	NoLatency bool
}

// Grouping is one grouping of [Store.Aggregates].
type Grouping struct {
	By        []GroupBy
	NoLatency bool // as AggregateQuery's
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
	// Unpriced counts the calls that used tokens and carry no cost (a
	// model the price table does not know), and UnpricedTokens their
	// input and output tokens: what CostUSD leaves out.
	Unpriced, UnpricedTokens int64
	// LatencyP50MS and LatencyP95MS are the median and 95th percentile
	// of duration_ms over the group's calls that have one: the
	// nearest-rank values within 1%, from the latency sketch the viewer
	// and the report use too (internal/quantile); 0 when none has one.
	LatencyP50MS, LatencyP95MS float64
}

// ErrBadGroup: a dimension Aggregate does not know, or one given twice.
var ErrBadGroup = fmt.Errorf("store: unknown group")

// Aggregate returns the figures of the records q selects, one [Group] per
// combination of the values of q.By, ordered by key (times ascending).
// It is [Store.Aggregates] of one grouping.
func (s *Store) Aggregate(ctx context.Context, q AggregateQuery) ([]Group, error) {
	gs, err := s.Aggregates(ctx, q.Filter, Grouping{By: q.By, NoLatency: q.NoLatency})
	if err != nil {
		return nil, err
	}
	return gs[0], nil
}

// Aggregates returns, for each grouping of by, the figures of the records
// f selects, as [Store.Aggregate] does, reading once what the groupings
// share: an overview's totals, series and groups by model, user and tag
// in one call.
//
// The figures come from the rollups when the filter involves only time,
// users, tags, models, providers, methods, status and error types: the
// months the time range covers whole are read as months, the days and
// hours at its ends as days and hours, and the minutes at its very ends
// from the records; a group by hour or day reads hours or days. So an
// aggregate costs in proportion to the time it covers, not to the
// records. Any other filter (a trace, metadata, a minimum cost or
// duration, text) reads the records it selects.
func (s *Store) Aggregates(ctx context.Context, f Filter, by ...Grouping) ([][]Group, error) {
	if len(by) == 0 {
		by = []Grouping{{}}
	}
	for _, b := range by {
		if err := checkGroups(b.By); err != nil {
			return nil, err
		}
	}
	if err := s.dict.refresh(ctx, s, s.r); err != nil {
		return nil, s.readErr(err)
	}
	// One snapshot: a writer sealing hours meanwhile moves them from the
	// hours' rows into the days', which read apart would count twice.
	tx, err := s.r.BeginTx(ctx, s.d.readTx())
	if err != nil {
		return nil, s.readErr(err)
	}
	defer tx.Rollback()
	ag := &aggregation{s: s, db: tx, f: f, groupings: make([]*grouping, len(by))}
	for i, b := range by {
		ag.groupings[i] = newGrouping(b.By)
		ag.groupings[i].noLatency = b.NoLatency
	}
	if err := ag.run(ctx); err != nil {
		return nil, err
	}
	out := make([][]Group, len(by))
	for i, g := range ag.groupings {
		gs, err := ag.groups(ctx, g)
		if err != nil {
			return nil, err
		}
		out[i] = gs
	}
	return out, nil
}

func checkGroups(by []GroupBy) error {
	seen := map[GroupBy]bool{}
	for _, g := range by {
		if !slices.Contains(GroupBys(), g) || seen[g] {
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

// fact is what one record, or one rollup row, adds to an aggregate.
type fact struct {
	ts    int64 // µs; a rollup row's bucket start
	trace string
	dims
	ok             bool
	in, out, total int64
	cost           *float64
	duration       float64
	rolled         *rollupRow // the row, when the fact is one
}

// grouping is one grouping of an aggregation being added up.
type grouping struct {
	by        []GroupBy
	noLatency bool
	res       span  // the coarsest span its time dimension allows
	cube      int16 // the rollups it reads; -1: the records
	groups    map[groupKey]*figures
	traces    map[string]int32 // ByTrace values, interned
}

// groupKey is a group's value for each dimension of by, in order: a time
// bucket, a name ID or an interned trace.
type groupKey [9]int64

func newGrouping(by []GroupBy) *grouping {
	g := &grouping{by: by, res: spanMonth, groups: map[groupKey]*figures{}}
	for _, d := range by {
		switch d {
		case ByHour:
			g.res = spanHour
		case ByDay:
			g.res = min(g.res, spanDay)
		}
	}
	return g
}

// aggregation is one call of Aggregates.
type aggregation struct {
	s         *Store
	db        querier // a read transaction
	f         Filter
	groupings []*grouping
	// The filter's names as IDs, for the rollups; matchesNothing when
	// one is a name the store has never seen.
	ids            dims
	tagIDs         []int32
	tagsets        []any // the IDs of the tagsets holding every tag of tagIDs
	matchesNothing bool
}

// run reads what the groupings need and adds it up.
func (ag *aggregation) run(ctx context.Context) error {
	s, f := ag.s, ag.f
	rolled := f.TraceID == "" && f.CallID == "" && len(f.Metadata) == 0 && f.MinCostUSD == 0 && f.MinDuration == 0 && f.Text == "" && len(f.Scores) == 0
	if rolled {
		if err := ag.resolveFilter(ctx); err != nil {
			return err
		}
	}
	var fromRecords, fromRollups []*grouping
	for _, g := range ag.groupings {
		g.cube = -1
		if rolled {
			g.cube = ag.cubeFor(g.by)
		}
		if g.cube < 0 {
			fromRecords = append(fromRecords, g)
		} else {
			fromRollups = append(fromRollups, g)
		}
	}
	since, until := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.Since.IsZero() {
		since = f.Since.UnixMicro()
	}
	if !f.Until.IsZero() {
		until = f.Until.UnixMicro()
	}
	if since >= until {
		return nil
	}
	// The minutes at the ends that no whole hour covers come from the
	// records, whatever the grouping.
	hs, he := ceilDiv(since, hourMicros), floorDiv(until, hourMicros)
	if since == math.MinInt64 {
		hs = math.MinInt64
	}
	if until == math.MaxInt64 {
		he = math.MaxInt64
	}
	var edges [][2]int64
	if len(fromRollups) > 0 {
		if hs >= he {
			edges = append(edges, [2]int64{since, until})
		} else {
			if since != math.MinInt64 && since < hs*hourMicros {
				edges = append(edges, [2]int64{since, hs * hourMicros})
			}
			if until != math.MaxInt64 && he*hourMicros < until {
				edges = append(edges, [2]int64{he * hourMicros, until})
			}
		}
	}
	if len(fromRecords) > 0 || len(edges) > 0 {
		var args []any
		where := f.where(s, &args)
		if len(fromRecords) == 0 {
			var parts []string
			for _, e := range edges {
				parts = append(parts, "(r.ts >= $"+strconv.Itoa(len(args)+1)+" AND r.ts < $"+strconv.Itoa(len(args)+2)+")")
				args = append(args, e[0], e[1])
			}
			where = and(where, "("+strings.Join(parts, " OR ")+")")
		}
		needTrace := false
		for _, g := range fromRecords {
			needTrace = needTrace || slices.Contains(g.by, ByTrace)
		}
		inEdge := func(ts int64) bool {
			for _, e := range edges {
				if ts >= e[0] && ts < e[1] {
					return true
				}
			}
			return false
		}
		err := s.scanFacts(ctx, ag.db, where, args, needTrace, func(fc *fact) error {
			for _, g := range fromRecords {
				ag.add(g, fc)
			}
			if inEdge(fc.ts) {
				for _, g := range fromRollups {
					ag.add(g, fc)
				}
			}
			return nil
		})
		if err != nil {
			return s.readErr(err)
		}
	}
	if len(fromRollups) == 0 || hs >= he || ag.matchesNothing {
		return nil
	}
	// Days and months hold the sealed hours; the hours after them are
	// read as hours.
	sealed, err := s.sealedHour(ctx, ag.db)
	if err != nil {
		return s.readErr(err)
	}
	if err := ag.resolveTagsets(ctx); err != nil {
		return s.readErr(err)
	}
	if ag.matchesNothing {
		return nil
	}
	// The whole hours: read once for each cube and span the groupings
	// need, as coarse as each allows.
	type read struct {
		cube int16
		res  span
	}
	pieces := func(res span) []piece {
		var ps []piece
		if end := min(he, sealed); hs < end {
			ps = decompose(hs, end, res, end == sealed)
		}
		if from := max(hs, sealed); from < he {
			ps = append(ps, piece{spanHour, from, he})
		}
		return ps
	}
	// Groupings without latency have the database add the rows up, each
	// apart; the others read the rows, with their sketches, once for each
	// cube and span they share.
	reads := map[read][]*grouping{}
	for _, g := range fromRollups {
		if g.noLatency {
			for _, p := range pieces(g.res) {
				if err := ag.sumRollups(ctx, g, p); err != nil {
					return s.readErr(err)
				}
			}
			continue
		}
		r := read{g.cube, g.res}
		reads[r] = append(reads[r], g)
	}
	for r, gs := range reads {
		for _, piece := range pieces(r.res) {
			err := ag.scanRollups(ctx, r.cube, piece, func(row *rollupRow) {
				fc := fact{ts: bucketStart(row.span, row.bucket), dims: row.dims, rolled: row}
				for _, g := range gs {
					ag.add(g, &fc)
				}
			})
			if err != nil {
				return s.readErr(err)
			}
		}
	}
	return nil
}

// cubeFor is the cube that answers a grouping under the aggregation's
// filter, or -1 when only the records do.
func (ag *aggregation) cubeFor(by []GroupBy) int16 {
	f := ag.f
	users := f.UserID != "" || slices.Contains(by, ByUser)
	if slices.Contains(by, ByTrace) {
		return -1
	}
	if !users {
		return cubeCalls
	}
	if f.Method != "" || f.ErrorType != "" || slices.Contains(by, ByMethod) || slices.Contains(by, ByErrorType) {
		return -1
	}
	return cubeUsers
}

// resolveFilter finds the IDs of the filter's names.
func (ag *aggregation) resolveFilter(ctx context.Context) error {
	f := ag.f
	for _, n := range []struct {
		k    kind
		name string
		into *int32
	}{
		{kindUser, f.UserID, &ag.ids.user}, {kindModel, f.Model, &ag.ids.model}, {kindProvider, f.Provider, &ag.ids.provider},
		{kindMethod, f.Method, &ag.ids.method}, {kindStatus, f.Status, &ag.ids.status}, {kindErrorType, f.ErrorType, &ag.ids.errorType},
	} {
		if n.name == "" {
			continue
		}
		id, ok, err := ag.s.nameID(ctx, n.k, n.name)
		if err != nil {
			return err
		}
		if !ok {
			ag.matchesNothing = true
		}
		*n.into = id
	}
	for _, t := range f.Tags {
		id, ok, err := ag.s.nameID(ctx, kindTag, t)
		if err != nil {
			return err
		}
		if !ok {
			ag.matchesNothing = true
		}
		ag.tagIDs = append(ag.tagIDs, id)
	}
	return nil
}

// nameID returns the ID of a name, asking the database when the dict
// does not hold it; false when no record has had it.
func (s *Store) nameID(ctx context.Context, k kind, name string) (int32, bool, error) {
	if id, ok := s.dict.id(k, name); ok {
		return id, true, nil
	}
	var id int32
	err := s.r.QueryRowContext(ctx, s.q(`SELECT id FROM names WHERE kind = $1 AND name = $2`), int(k), name).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, s.readErr(err)
	}
	s.dict.mu.Lock()
	s.dict.ids[nameKey{k, name}], s.dict.names[id] = id, nameKey{k, name}
	s.dict.mu.Unlock()
	return id, true, nil
}

// piece is a range of buckets [lo, hi) of a span.
type piece struct {
	span   span
	lo, hi int64 // math.MinInt64 and math.MaxInt64: unbounded
}

// decompose covers the hours [hs, he) with buckets as coarse as res
// allows: whole months, then the days, then the hours, at each end. When
// sealedEnd, he is the first hour not sealed: the rows of the day and the
// month of the hour before it hold exactly their hours before he, so they
// count as whole.
func decompose(hs, he int64, res span, sealedEnd bool) []piece {
	if res == spanHour {
		return []piece{{spanHour, hs, he}}
	}
	inf := func(v int64) bool { return v == math.MinInt64 || v == math.MaxInt64 }
	ds, de := ceilDiv(hs, 24), floorDiv(he, 24)
	switch {
	case inf(hs):
		ds = hs
	}
	switch {
	case inf(he):
		de = he
	case sealedEnd:
		de = floorDiv(he-1, 24) + 1
	}
	if ds >= de {
		return []piece{{spanHour, hs, he}}
	}
	var out []piece
	if !inf(hs) && hs < ds*24 {
		out = append(out, piece{spanHour, hs, ds * 24})
	}
	if !inf(he) && de*24 < he {
		out = append(out, piece{spanHour, de * 24, he})
	}
	if res == spanDay {
		return append(out, piece{spanDay, ds, de})
	}
	ms, me := ds, de
	if !inf(ds) {
		ms = monthOfDay(ds)
		if firstDayOfMonth(ms) < ds {
			ms++
		}
	}
	switch {
	case inf(de):
	case sealedEnd:
		me = monthOfDay(de-1) + 1
	default:
		me = monthOfDay(de)
	}
	if ms >= me {
		return append(out, piece{spanDay, ds, de})
	}
	if !inf(ds) && ds < firstDayOfMonth(ms) {
		out = append(out, piece{spanDay, ds, firstDayOfMonth(ms)})
	}
	if !inf(de) && !sealedEnd && firstDayOfMonth(me) < de {
		out = append(out, piece{spanDay, firstDayOfMonth(me), de})
	}
	return append(out, piece{spanMonth, ms, me})
}

func ceilDiv(a, b int64) int64 {
	if a == math.MinInt64 {
		return a
	}
	return -floorDiv(-a, b)
}

// bucketStart is the start (µs) of a bucket.
func bucketStart(sp span, b int64) int64 {
	switch sp {
	case spanDay:
		return b * 24 * hourMicros
	case spanMonth:
		return firstDayOfMonth(b) * 24 * hourMicros
	}
	return b * hourMicros
}

// scanRollups reads the rows of a cube in a piece that the filter
// selects.
func (ag *aggregation) scanRollups(ctx context.Context, cube int16, p piece, fn func(*rollupRow)) error {
	s := ag.s
	where, args := ag.rollupWhere(cube, p)
	rs, err := ag.db.QueryContext(ctx, s.q(`SELECT `+rollupColumns+` FROM rollups WHERE `+where), args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	var row rollupRow
	var enc sql.RawBytes // read in place: fn merges it before the next row
	for rs.Next() {
		if err := rs.Scan(&row.cube, &row.span, &row.bucket, &row.user, &row.tagset, &row.model, &row.provider, &row.method, &row.status, &row.errorType,
			&row.calls, &row.errors, &row.in, &row.out, &row.total, &row.cost, &row.unpriced, &row.unpricedTokens, &enc); err != nil {
			return err
		}
		row.enc = enc
		fn(&row)
	}
	return rs.Err()
}

// sumRollups adds to g the sums, by g's dimensions, of the rows of its
// cube in a piece that the filter selects, added up by the database.
func (ag *aggregation) sumRollups(ctx context.Context, g *grouping, p piece) error {
	s := ag.s
	where, args := ag.rollupWhere(g.cube, p)
	var cols []string
	for _, d := range g.by {
		switch d {
		case ByHour, ByDay:
			cols = append(cols, "bucket")
		case ByUser:
			cols = append(cols, "user_id")
		case ByTag:
			cols = append(cols, "tagset")
		case ByModel:
			cols = append(cols, "model")
		case ByProvider:
			cols = append(cols, "provider")
		case ByMethod:
			cols = append(cols, "method")
		case ByErrorType:
			cols = append(cols, "error_type")
		}
	}
	keys, group := "", ""
	if len(cols) > 0 {
		keys = strings.Join(cols, ", ") + ", "
		group = " GROUP BY " + strings.Join(cols, ", ")
	}
	rs, err := ag.db.QueryContext(ctx, s.q(`SELECT `+keys+`count(*), coalesce(sum(calls), 0), coalesce(sum(errors), 0), coalesce(sum(input_tokens), 0),
		coalesce(sum(output_tokens), 0), coalesce(sum(total_tokens), 0), coalesce(sum(cost_usd), 0), coalesce(sum(unpriced), 0), coalesce(sum(unpriced_tokens), 0)
		FROM rollups WHERE `+where+group), args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	row := rollupRow{rollupKey: rollupKey{span: p.span}}
	dest := make([]any, 0, len(cols)+9)
	for _, c := range cols {
		switch c {
		case "bucket":
			dest = append(dest, &row.bucket)
		case "user_id":
			dest = append(dest, &row.user)
		case "tagset":
			dest = append(dest, &row.tagset)
		case "model":
			dest = append(dest, &row.model)
		case "provider":
			dest = append(dest, &row.provider)
		case "method":
			dest = append(dest, &row.method)
		case "error_type":
			dest = append(dest, &row.errorType)
		}
	}
	var n int64
	dest = append(dest, &n, &row.calls, &row.errors, &row.in, &row.out, &row.total, &row.cost, &row.unpriced, &row.unpricedTokens)
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return err
		}
		if n == 0 {
			continue // no row: the sums of nothing
		}
		fc := fact{ts: bucketStart(row.span, row.bucket), dims: row.dims, rolled: &row}
		ag.add(g, &fc)
	}
	return rs.Err()
}

// rollupWhere is the condition on rollups of a cube in a piece that the
// filter selects, and its arguments.
func (ag *aggregation) rollupWhere(cube int16, p piece) (string, []any) {
	// The cube and the span as literals: a partial index by user holds
	// one cube (rollups_user), which the planner knows only so.
	var args []any
	conds := []string{"cube = " + strconv.Itoa(int(cube)), "span = " + strconv.Itoa(int(p.span))}
	arg := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, cond+" $"+strconv.Itoa(len(args)))
	}
	if p.lo != math.MinInt64 {
		arg("bucket >=", p.lo)
	}
	if p.hi != math.MaxInt64 {
		arg("bucket <", p.hi)
	}
	for _, c := range []struct {
		col string
		id  int32
	}{{"user_id", ag.ids.user}, {"model", ag.ids.model}, {"provider", ag.ids.provider}, {"method", ag.ids.method}, {"status", ag.ids.status}, {"error_type", ag.ids.errorType}} {
		if c.id != 0 {
			arg(c.col+" =", c.id)
		}
	}
	if len(ag.tagIDs) > 0 {
		conds = append(conds, "tagset IN ("+placeholders(len(args)+1, len(ag.tagsets))+")")
		args = append(args, ag.tagsets...)
	}
	return strings.Join(conds, " AND "), args
}

// resolveTagsets finds the tagsets holding every tag of the filter, once,
// in the aggregation's snapshot: asked inside each rollup query, as a
// subquery, PostgreSQL ran it again for every rollup row (a week of
// 10,000 records by tag: 160 ms, against 10 ms without a tag).
func (ag *aggregation) resolveTagsets(ctx context.Context) error {
	if len(ag.tagIDs) == 0 {
		return nil
	}
	args := []any{int64(kindTagset)}
	like := []string{"kind = $1"}
	for _, t := range ag.tagIDs {
		args = append(args, "%,"+strconv.Itoa(int(t))+",%")
		like = append(like, "(',' || name || ',') LIKE $"+strconv.Itoa(len(args)))
	}
	var id int64
	err := eachRow(ctx, ag.db, ag.s.q(`SELECT id FROM names WHERE `+strings.Join(like, " AND ")), args, []any{&id}, func() error {
		ag.tagsets = append(ag.tagsets, id)
		return nil
	})
	if len(ag.tagsets) == 0 {
		ag.matchesNothing = true
	}
	return err
}

// factColumns are what scanFacts reads of a record r.
const factColumns = `r.ts, r.user_id, r.tagset, r.model, r.provider, r.method, r.status, r.error_type,
	r.duration_ms, r.cost_usd, r.input_tokens, r.output_tokens, r.total_tokens`

// scanFacts reads the records where selects, as facts, their names
// turned into IDs.
func (s *Store) scanFacts(ctx context.Context, db querier, where string, args []any, withTrace bool, fn func(*fact) error) error {
	cols := factColumns
	if withTrace {
		cols += ", coalesce(r.trace_id, '')"
	}
	if where != "" {
		where = " WHERE " + where
	}
	rows, err := db.QueryContext(ctx, s.q(`SELECT `+cols+` FROM records r`+where), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		fc                                             fact
		user, model, method, errType, status, provider sql.NullString
		tagset                                         sql.NullInt32
		dur, cost                                      sql.NullFloat64
		costV                                          float64
	)
	dest := []any{&fc.ts, &user, &tagset, &model, &provider, &method, &status, &errType, &dur, &cost, &fc.in, &fc.out, &fc.total}
	if withTrace {
		dest = append(dest, &fc.trace)
	}
	// Names seen here are the store's own (written with their records),
	// but may be newer than the dict: looked up once each.
	memo := map[nameKey]int32{}
	id := func(k kind, n sql.NullString) (int32, error) {
		if !n.Valid || n.String == "" {
			return 0, nil
		}
		if v, ok := s.dict.id(k, n.String); ok {
			return v, nil
		}
		if v, ok := memo[nameKey{k, n.String}]; ok {
			return v, nil
		}
		v, ok, err := s.nameID(ctx, k, n.String)
		if err != nil {
			return 0, err
		}
		if !ok {
			// A record and its names are committed together: the store
			// is damaged.
			return 0, fmt.Errorf("store: a record names %q, which the table of names lacks", n.String)
		}
		memo[nameKey{k, n.String}] = v
		return v, nil
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		var err error
		set := func(into *int32, k kind, n sql.NullString) {
			if err == nil {
				*into, err = id(k, n)
			}
		}
		set(&fc.user, kindUser, user)
		set(&fc.model, kindModel, model)
		set(&fc.provider, kindProvider, provider)
		set(&fc.method, kindMethod, method)
		set(&fc.status, kindStatus, status)
		set(&fc.errorType, kindErrorType, errType)
		if err != nil {
			return err
		}
		fc.tagset = tagset.Int32
		fc.ok = status.String == "ok"
		fc.duration = dur.Float64
		fc.cost = nil
		if cost.Valid {
			costV = cost.Float64
			fc.cost = &costV
		}
		if err := fn(&fc); err != nil {
			return err
		}
	}
	return rows.Err()
}

// add adds a fact to a grouping: to each group it falls in (a record
// with two tags, grouped by tag, falls in two).
func (ag *aggregation) add(g *grouping, fc *fact) {
	var k groupKey
	tagAt := -1
	for i, d := range g.by {
		switch d {
		case ByHour:
			k[i] = floorDiv(fc.ts, hourMicros)
		case ByDay:
			k[i] = floorDiv(fc.ts, 24*hourMicros)
		case ByUser:
			k[i] = int64(fc.user)
		case ByModel:
			k[i] = int64(fc.model)
		case ByProvider:
			k[i] = int64(fc.provider)
		case ByMethod:
			k[i] = int64(fc.method)
		case ByErrorType:
			k[i] = int64(fc.errorType)
		case ByTrace:
			if g.traces == nil {
				g.traces = map[string]int32{}
			}
			id, ok := g.traces[fc.trace]
			if !ok {
				id = int32(len(g.traces))
				g.traces[fc.trace] = id
			}
			k[i] = int64(id)
		case ByTag:
			tagAt = i
		}
	}
	put := func(k groupKey) {
		f := g.groups[k]
		if f == nil {
			f = &figures{}
			g.groups[k] = f
		}
		if r := fc.rolled; r != nil {
			f.merge(&r.figures, r.enc) // a damaged sketch adds no latency; its row's figures stand
			return
		}
		f.addRecord(fc.ok, fc.in, fc.out, fc.total, fc.cost, fc.duration)
	}
	if tagAt < 0 {
		put(k)
		return
	}
	tags := ag.s.dict.tagsOf(fc.tagset)
	if fc.tagset != 0 && tags == nil {
		tags = []int32{-1 - fc.tagset} // not known yet: resolved in groups
	}
	if len(tags) == 0 {
		k[tagAt] = 0
		put(k)
		return
	}
	for _, t := range tags {
		k[tagAt] = int64(t)
		put(k)
	}
}

// groups renders a grouping's groups, ordered by key.
func (ag *aggregation) groups(ctx context.Context, g *grouping) ([]Group, error) {
	s := ag.s
	// Names (tagsets among them) written since the dict last looked.
	var names, sets []int32
	for k := range g.groups {
		for i, d := range g.by {
			switch d {
			case ByUser, ByModel, ByProvider, ByMethod, ByErrorType, ByTag:
				if id := int32(k[i]); id > 0 {
					names = append(names, id)
				} else if id < -1 && d == ByTag {
					sets = append(sets, -1-id)
				}
			}
		}
	}
	if len(names)+len(sets) > 0 {
		if err := s.dict.lookup(ctx, s, s.r, append(names, sets...)); err != nil {
			return nil, s.readErr(err)
		}
	}
	if len(sets) > 0 {
		// Tags of tagsets not known while adding up: spread now.
		type pending struct {
			k  groupKey
			at int
			f  *figures
		}
		var ps []pending
		for k, f := range g.groups {
			for i, d := range g.by {
				if d == ByTag && k[i] < -1 {
					ps = append(ps, pending{k, i, f})
				}
			}
		}
		var more []int32
		for _, p := range ps {
			delete(g.groups, p.k)
			for _, t := range s.dict.tagsOf(int32(-1 - p.k[p.at])) {
				k := p.k
				k[p.at] = int64(t)
				more = append(more, t)
				f := g.groups[k]
				if f == nil {
					f = &figures{}
					g.groups[k] = f
				}
				f.merge(p.f, nil)
			}
		}
		if err := s.dict.lookup(ctx, s, s.r, more); err != nil {
			return nil, s.readErr(err)
		}
	}
	traces := make([]string, len(g.traces))
	for t, id := range g.traces {
		traces[id] = t
	}
	type sorted struct {
		g    Group
		sort []any
	}
	out := make([]sorted, 0, len(g.groups))
	for k, f := range g.groups {
		gr := Group{
			Calls: f.calls, Errors: f.errors, InputTokens: f.in, OutputTokens: f.out, TotalTokens: f.total, CostUSD: f.cost,
			Unpriced: f.unpriced, UnpricedTokens: f.unpricedTokens,
		}
		if !g.noLatency {
			gr.LatencyP50MS, gr.LatencyP95MS = f.lat.Quantile(0.5), f.lat.Quantile(0.95)
		}
		var sortKey []any
		for i, d := range g.by {
			switch d {
			case ByHour, ByDay:
				unit := hourMicros
				if d == ByDay {
					unit *= 24
				}
				gr.Time = time.UnixMicro(k[i] * unit).UTC()
				gr.Key = append(gr.Key, gr.Time.Format(time.RFC3339))
				sortKey = append(sortKey, k[i])
			case ByTrace:
				gr.Key = append(gr.Key, traces[k[i]])
				sortKey = append(sortKey, traces[k[i]])
			default:
				n := s.dict.name(int32(k[i]))
				gr.Key = append(gr.Key, n)
				sortKey = append(sortKey, n)
			}
		}
		out = append(out, sorted{gr, sortKey})
	}
	slices.SortFunc(out, func(a, b sorted) int {
		for i := range a.sort {
			var c int
			switch x := a.sort[i].(type) {
			case int64:
				c = cmp.Compare(x, b.sort[i].(int64))
			case string:
				c = strings.Compare(x, b.sort[i].(string))
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	groups := make([]Group, len(out))
	for i, o := range out {
		groups[i] = o.g
	}
	if len(g.by) == 0 && len(groups) == 0 {
		groups = []Group{{}} // no records: one group of nothing
	}
	return groups, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/internal/quantile"
)

// Rollups keep, as records are written, the figures an aggregate asks
// for (calls, errors, tokens, spend, the calls without a price and a
// latency sketch) per hour, per day and per month, in two cubes:
//
//   - cubeCalls, by tagset, model, provider, method, status and error
//     type: what the whole history's figures, series and groups by
//     model, provider or tag read;
//   - cubeUsers, by user, tagset, model, provider and status: what a
//     group by user, or a filter on one, reads.
//
// Their rows grow with the hours (days, months) covered and with the
// combinations a team's traffic has in each, not with its records: an
// aggregate reads the months it covers whole, the days and hours at its
// ends, and the records of the minutes at its very ends (aggregate.go).
// Each dimension is a name's ID (names.go), 0 for none.
//
// A write adds its records to their hours' rows. Days and months are
// made of hours once the hours are over: when a write brings a record of
// a newer hour than any before (up to now), the hours before it are
// sealed, added to their days' and months' rows, and the meta key
// rollups_sealed moves past them. A record of a sealed hour (late, or
// imported) is added to its hour's, day's and month's rows at once. So a
// write touches about one row per conversation it adds to, not three,
// and a reader takes days and months for the sealed hours, hours after
// them (aggregate.go). Writers take turns at the rollups: SQLite has one
// writer at a time, and PostgreSQL's take an advisory lock, held to the
// end of their transactions.

const (
	cubeCalls int16 = 0
	cubeUsers int16 = 1
)

// A span is the length of a rollup's buckets.
type span int16

const (
	spanHour span = iota + 1
	spanDay
	spanMonth
)

var spans = []span{spanHour, spanDay, spanMonth}

const hourMicros = int64(time.Hour / time.Microsecond)

// hourOf is the hour (since the epoch, UTC) of a time in µs.
func hourOf(us int64) int64 { return floorDiv(us, hourMicros) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// dayOfHour and monthOfDay carry a bucket up a span.
func dayOfHour(h int64) int64 { return floorDiv(h, 24) }

func monthOfDay(d int64) int64 {
	t := time.Unix(d*86400, 0).UTC()
	return int64(t.Year()-1970)*12 + int64(t.Month()-1)
}

// firstDayOfMonth is the day (since the epoch) a month begins on.
func firstDayOfMonth(m int64) int64 {
	t := time.Date(1970+int(floorDiv(m, 12)), time.Month(m-floorDiv(m, 12)*12+1), 1, 0, 0, 0, 0, time.UTC)
	return floorDiv(t.Unix(), 86400)
}

// bucketOf is the bucket of an hour in a span.
func bucketOf(sp span, hour int64) int64 {
	switch sp {
	case spanDay:
		return dayOfHour(hour)
	case spanMonth:
		return monthOfDay(dayOfHour(hour))
	}
	return hour
}

// dims are a rollup row's dimensions, or a record's, as name IDs.
type dims struct {
	user, tagset, model, provider, method, status, errorType int32
}

// in projects a record's dimensions onto a cube's.
func (d dims) in(cube int16) dims {
	if cube == cubeCalls {
		d.user = 0
	} else {
		d.method, d.errorType = 0, 0
	}
	return d
}

type rollupKey struct {
	cube   int16
	span   span
	bucket int64
	dims
}

// figures are what a rollup row, or a group of an aggregate, adds up.
type figures struct {
	calls, errors, in, out, total int64
	cost                          float64
	unpriced, unpricedTokens      int64
	lat                           quantile.Sketch
}

// addRecord counts one record.
func (f *figures) addRecord(ok bool, in, out, total int64, cost *float64, durationMS float64) {
	f.calls++
	if !ok {
		f.errors++
	}
	f.in += in
	f.out += out
	f.total += total
	if cost != nil {
		f.cost += *cost
	} else if in+out > 0 {
		f.unpriced++
		f.unpricedTokens += in + out
	}
	f.lat.Add(durationMS)
}

// merge adds o's figures (its latency sketch given encoded, or as o.lat
// when enc is nil).
func (f *figures) merge(o *figures, enc []byte) error {
	f.calls += o.calls
	f.errors += o.errors
	f.in += o.in
	f.out += o.out
	f.total += o.total
	f.cost += o.cost
	f.unpriced += o.unpriced
	f.unpricedTokens += o.unpricedTokens
	if enc != nil {
		return f.lat.MergeBinary(enc)
	}
	f.lat.Merge(&o.lat)
	return nil
}

const rollupColumns = `cube, span, bucket, user_id, tagset, model, provider, method, status, error_type,
	calls, errors, input_tokens, output_tokens, total_tokens, cost_usd, unpriced, unpriced_tokens, latency`

const rollupKeyColumns = `cube, span, bucket, user_id, tagset, model, provider, method, status, error_type`

// rollupRow is a row of rollups as read: its figures, its sketch still
// encoded.
type rollupRow struct {
	rollupKey
	figures
	enc []byte
}

func scanRollup(rs interface{ Scan(...any) error }, r *rollupRow) error {
	return rs.Scan(&r.cube, &r.span, &r.bucket, &r.user, &r.tagset, &r.model, &r.provider, &r.method, &r.status, &r.errorType,
		&r.calls, &r.errors, &r.in, &r.out, &r.total, &r.cost, &r.unpriced, &r.unpricedTokens, &r.enc)
}

// lockRollups makes tx the only writer of the rollups until it ends.
func (s *Store) lockRollups(ctx context.Context, tx *sql.Tx) error { return s.d.lockRollups(ctx, tx) }

// sealedHour is the first hour not sealed: days and months hold every
// hour before it. math.MinInt64 when none is.
func (s *Store) sealedHour(ctx context.Context, db querier) (int64, error) {
	rows, err := db.QueryContext(ctx, `SELECT value FROM llmhistory_meta WHERE key = 'rollups_sealed'`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	h := int64(math.MinInt64)
	if rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return 0, err
		}
		if h, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, fmt.Errorf("store: rollups_sealed is %q, not an hour", v)
		}
	}
	return h, rows.Err()
}

// rollup adds the records of ps, written in tx, to the rollups, and seals
// the hours before the newest it brings (up to now).
func (s *Store) rollup(ctx context.Context, tx *sql.Tx, ps []*prep) error {
	if len(ps) == 0 {
		return nil
	}
	if err := s.lockRollups(ctx, tx); err != nil {
		return err
	}
	sealed, err := s.sealedHour(ctx, tx)
	if err != nil {
		return err
	}
	rows := map[rollupKey]*figures{}
	newest := int64(math.MinInt64)
	for _, p := range ps {
		hour := hourOf(p.ts)
		newest = max(newest, hour)
		r := &p.r
		var in, out, total int64
		if r.Usage != nil {
			in, out, total = int64(r.Usage.InputTokens), int64(r.Usage.OutputTokens), int64(r.Usage.TotalTokens)
		}
		var cost *float64
		if r.Cost != nil {
			cost = &r.Cost.USD
		}
		for _, cube := range []int16{cubeCalls, cubeUsers} {
			d := p.dims.in(cube)
			for _, sp := range spans {
				if sp != spanHour && hour >= sealed {
					break // added to its day and month when its hour is sealed
				}
				k := rollupKey{cube: cube, span: sp, bucket: bucketOf(sp, hour), dims: d}
				f := rows[k]
				if f == nil {
					f = &figures{}
					rows[k] = f
				}
				f.addRecord(r.Outcome.Status == "ok", in, out, total, cost, r.DurationMS)
			}
		}
	}
	if err := s.mergeRollups(ctx, tx, rows); err != nil {
		return err
	}
	if horizon := min(newest, hourOf(time.Now().UnixMicro())); horizon > sealed {
		return s.seal(ctx, tx, sealed, horizon)
	}
	return nil
}

// seal adds the hours [from, to) to their days' and months' rows, and
// marks them sealed.
func (s *Store) seal(ctx context.Context, tx *sql.Tx, from, to int64) error {
	args := []any{spanHour, to}
	cond := `span = $1 AND bucket < $2`
	if from != math.MinInt64 {
		args = append(args, from)
		cond += ` AND bucket >= $3`
	}
	rs, err := tx.QueryContext(ctx, s.q(`SELECT `+rollupColumns+` FROM rollups WHERE `+cond), args...)
	if err != nil {
		return err
	}
	rows := map[rollupKey]*figures{}
	for rs.Next() {
		var r rollupRow
		if err := scanRollup(rs, &r); err != nil {
			rs.Close()
			return err
		}
		for _, sp := range []span{spanDay, spanMonth} {
			k := r.rollupKey
			k.span, k.bucket = sp, bucketOf(sp, r.bucket)
			f := rows[k]
			if f == nil {
				f = &figures{}
				rows[k] = f
			}
			if err := f.merge(&r.figures, r.enc); err != nil {
				rs.Close()
				return err
			}
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	if err := s.mergeRollups(ctx, tx, rows); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.q(`INSERT INTO llmhistory_meta (key, value) VALUES ('rollups_sealed', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`), strconv.FormatInt(to, 10))
	return err
}

// mergeRollups adds rows to what the rollups hold: the rows there are
// read, merged and written back. The caller holds the rollups' lock.
func (s *Store) mergeRollups(ctx context.Context, tx *sql.Tx, rows map[rollupKey]*figures) error {
	if len(rows) == 0 {
		return nil
	}
	keys := make([]rollupKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	for part := range slices.Chunk(keys, 300) {
		// Joined to the keys, so that each is found through the primary
		// key (SQLite scans the table for a row value IN a list).
		var b strings.Builder
		args := make([]any, 0, 10*len(part))
		b.WriteString(`WITH k (` + rollupKeyColumns + `) AS (VALUES `)
		for i, k := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s.d.valuesRow(len(args)+1, 10, i == 0))
			args = append(args, k.cube, int16(k.span), k.bucket, k.user, k.tagset, k.model, k.provider, k.method, k.status, k.errorType)
		}
		b.WriteString(`) SELECT ` + qualified("r", rollupColumns) + ` FROM k JOIN rollups r ON ` + joinOn("r", "k", rollupKeyColumns))
		rs, err := tx.QueryContext(ctx, b.String(), args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			var old rollupRow
			if err := scanRollup(rs, &old); err != nil {
				rs.Close()
				return err
			}
			if f := rows[old.rollupKey]; f != nil {
				if err := f.merge(&old.figures, old.enc); err != nil {
					rs.Close()
					return err
				}
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
	}
	return s.putRollups(ctx, tx, rows)
}

// qualified prefixes each of a list of columns with a table's name.
func qualified(table, columns string) string {
	var out []string
	for c := range strings.SplitSeq(columns, ",") {
		out = append(out, table+"."+strings.TrimSpace(c))
	}
	return strings.Join(out, ", ")
}

// joinOn is the condition that two tables agree on a list of columns.
func joinOn(a, b, columns string) string {
	var out []string
	for c := range strings.SplitSeq(columns, ",") {
		c = strings.TrimSpace(c)
		out = append(out, a+"."+c+" = "+b+"."+c)
	}
	return strings.Join(out, " AND ")
}

// putRollups writes rows whole, replacing what is there.
func (s *Store) putRollups(ctx context.Context, tx *sql.Tx, rows map[rollupKey]*figures) error {
	values := make([][]any, 0, len(rows))
	for k, f := range rows {
		values = append(values, []any{k.cube, int16(k.span), k.bucket, k.user, k.tagset, k.model, k.provider, k.method, k.status, k.errorType,
			f.calls, f.errors, f.in, f.out, f.total, f.cost, f.unpriced, f.unpricedTokens, f.lat.AppendBinary(nil)})
	}
	// In key order, so that writers take their locks in the same order.
	slices.SortFunc(values, func(a, b []any) int {
		for i := range 10 {
			if c := cmpAny(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return s.insertMany(ctx, tx, rollupsInsert, values, nil)
}

var rollupsInsert = &insertSpec{table: "rollups", columns: []column{
	{"cube", colInt}, {"span", colInt}, {"bucket", colInt}, {"user_id", colInt}, {"tagset", colInt}, {"model", colInt}, {"provider", colInt},
	{"method", colInt}, {"status", colInt}, {"error_type", colInt}, {"calls", colInt}, {"errors", colInt}, {"input_tokens", colInt},
	{"output_tokens", colInt}, {"total_tokens", colInt}, {"cost_usd", colFloat}, {"unpriced", colInt}, {"unpriced_tokens", colInt}, {"latency", colBytes},
}, tail: ` ON CONFLICT (` + rollupKeyColumns + `) DO UPDATE SET calls = excluded.calls, errors = excluded.errors,
	input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens,
	cost_usd = excluded.cost_usd, unpriced = excluded.unpriced, unpriced_tokens = excluded.unpriced_tokens, latency = excluded.latency`}

func cmpAny(a, b any) int {
	switch x := a.(type) {
	case int16:
		return cmpInt(int64(x), int64(b.(int16)))
	case span:
		return cmpInt(int64(x), int64(b.(span)))
	case int32:
		return cmpInt(int64(x), int64(b.(int32)))
	case int64:
		return cmpInt(x, b.(int64))
	}
	return 0
}

// rebuildRollups computes again the rollups of the hours from first to
// last, and of the days and months they fall in, from the records: when a
// migration makes them (a deletion rebuilds the hours it touched the
// same way: rebuildHours, delete.go).
func (s *Store) rebuildRollups(ctx context.Context, tx *sql.Tx, first, last int64) error {
	hours := make([]int64, 0, last-first+1)
	for h := first; h <= last; h++ {
		hours = append(hours, h)
	}
	_, _, err := s.rebuildHours(ctx, tx, hours)
	return err
}

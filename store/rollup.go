package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SQLite keeps hourly rollups of the records: per hour, model, provider,
// method, error type and status, the calls, errors, tokens, spend and a
// latency histogram (hist.go), updated in each write's transaction. An
// aggregate that asks only about those (grouped by hour or day, model,
// provider, method or error type; filtered by them, and by whole hours)
// reads the rollups, a few thousand rows a month, instead of every
// record: a million records' aggregate by day and model in milliseconds
// instead of seconds, its latency percentiles within half a percent.
// PostgreSQL aggregates its records itself, in parallel, with exact
// percentiles.

type rollupKey struct {
	hour                                       int64
	model, provider, method, errorType, status string
}

type rollupRow struct {
	rollupKey
	calls, errors, in, out, total int64
	cost                          float64
	lat                           histogram
}

const hourMicros = int64(time.Hour / time.Microsecond)

func (r *rollupRow) add(p *prep) {
	rec := &p.r
	r.calls++
	if rec.Outcome.Status != "ok" {
		r.errors++
	}
	if rec.Usage != nil {
		r.in += int64(rec.Usage.InputTokens)
		r.out += int64(rec.Usage.OutputTokens)
		r.total += int64(rec.Usage.TotalTokens)
	}
	if rec.Cost != nil {
		r.cost += rec.Cost.USD
	}
	r.lat.add(rec.DurationMS)
}

func keyOf(p *prep) rollupKey {
	errType := p.r.Outcome.ErrorType
	if errType == "" {
		errType = p.r.ErrorType
	}
	return rollupKey{hour: p.ts / hourMicros, model: p.r.Model, provider: p.provider, method: p.r.MethodName, errorType: errType, status: p.r.Outcome.Status}
}

const rollupColumns = `hour, model, provider, method, error_type, status, calls, errors, input_tokens, output_tokens, total_tokens, cost_usd, latency`

// rollup adds the records of ps, written in tx, to the rollups.
func (s *Store) rollup(ctx context.Context, tx *sql.Tx, ps []*prep) error {
	if s.dialect != SQLite || len(ps) == 0 {
		return nil
	}
	rows := map[rollupKey]*rollupRow{}
	for _, p := range ps {
		k := keyOf(p)
		r := rows[k]
		if r == nil {
			r = &rollupRow{rollupKey: k, lat: histogram{}}
			rows[k] = r
		}
		r.add(p)
	}
	keys := make([]rollupKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	// What is there already, merged in: SQLite writers take turns, so
	// nothing changes it between this read and the write.
	for part := range slices.Chunk(keys, 200) {
		var b strings.Builder
		args := make([]any, 0, 6*len(part))
		b.WriteString(`SELECT ` + rollupColumns + ` FROM rollups WHERE (hour, model, provider, method, error_type, status) IN (VALUES `)
		for i, k := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(tuple(len(args)+1, 6))
			args = append(args, k.hour, k.model, k.provider, k.method, k.errorType, k.status)
		}
		b.WriteString(`)`)
		rs, err := tx.QueryContext(ctx, s.q(b.String()), args...)
		if err != nil {
			return err
		}
		for rs.Next() {
			old, err := scanRollup(rs)
			if err != nil {
				rs.Close()
				return err
			}
			if r := rows[old.rollupKey]; r != nil {
				r.calls += old.calls
				r.errors += old.errors
				r.in += old.in
				r.out += old.out
				r.total += old.total
				r.cost += old.cost
				r.lat.merge(old.lat)
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
	}
	return s.putRollups(ctx, tx, rows)
}

func (s *Store) putRollups(ctx context.Context, tx *sql.Tx, rows map[rollupKey]*rollupRow) error {
	values := make([][]any, 0, len(rows))
	for _, r := range rows {
		values = append(values, []any{r.hour, r.model, r.provider, r.method, r.errorType, r.status, r.calls, r.errors, r.in, r.out, r.total, r.cost, r.lat.encode()})
	}
	return s.insertRowsWith(ctx, tx, `INSERT OR REPLACE INTO rollups (`+rollupColumns+`) VALUES `, 13, values,
		func(first int) string { return tuple(first, 13) }, "", nil)
}

func scanRollup(rs interface{ Scan(...any) error }) (*rollupRow, error) {
	r := &rollupRow{lat: histogram{}}
	var lat []byte
	err := rs.Scan(&r.hour, &r.model, &r.provider, &r.method, &r.errorType, &r.status, &r.calls, &r.errors, &r.in, &r.out, &r.total, &r.cost, &lat)
	if err == nil {
		err = decodeHistogram(r.lat, lat)
	}
	return r, err
}

// rebuildRollups computes again, from the records, the rollups of the
// hours from first to last: after retention deleted records of them.
func (s *Store) rebuildRollups(ctx context.Context, tx *sql.Tx, first, last int64) error {
	if s.dialect != SQLite {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rollups WHERE hour BETWEEN ?1 AND ?2`, first, last); err != nil {
		return err
	}
	rs, err := tx.QueryContext(ctx, `SELECT ts, coalesce(model, ''), provider, method, coalesce(error_type, ''), status, input_tokens, output_tokens, total_tokens, cost_usd, duration_ms
		FROM records WHERE ts >= ?1 AND ts < ?2`, first*hourMicros, (last+1)*hourMicros)
	if err != nil {
		return err
	}
	rows := map[rollupKey]*rollupRow{}
	for rs.Next() {
		var k rollupKey
		var ts, in, out, total int64
		var cost, dur sql.NullFloat64
		if err := rs.Scan(&ts, &k.model, &k.provider, &k.method, &k.errorType, &k.status, &in, &out, &total, &cost, &dur); err != nil {
			rs.Close()
			return err
		}
		k.hour = ts / hourMicros
		r := rows[k]
		if r == nil {
			r = &rollupRow{rollupKey: k, lat: histogram{}}
			rows[k] = r
		}
		r.calls++
		if k.status != "ok" {
			r.errors++
		}
		r.in, r.out, r.total, r.cost = r.in+in, r.out+out, r.total+total, r.cost+cost.Float64
		r.lat.add(dur.Float64)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	return s.putRollups(ctx, tx, rows)
}

// fromRollups reports whether the rollups answer q.
func (s *Store) fromRollups(q AggregateQuery) bool {
	f := q.Filter
	if s.dialect != SQLite || f.TraceID != "" || f.UserID != "" || len(f.Tags) > 0 || len(f.Metadata) > 0 ||
		f.MinCostUSD > 0 || f.MinDuration > 0 || f.Text != "" || len(f.Scores) > 0 {
		return false
	}
	whole := func(t time.Time) bool { return t.IsZero() || t.UnixMicro()%hourMicros == 0 }
	if !whole(f.Since) || !whole(f.Until) {
		return false
	}
	for _, g := range q.By {
		switch g {
		case ByHour, ByDay, ByModel, ByProvider, ByMethod, ByErrorType:
		default:
			return false
		}
	}
	return true
}

// aggregateRollups is Aggregate from the rollups.
func (s *Store) aggregateRollups(ctx context.Context, q AggregateQuery) ([]Group, error) {
	var conds []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.Replace(cond, "?", "?"+itoa(len(args)), 1))
	}
	f := q.Filter
	if !f.Since.IsZero() {
		arg("hour >= ?", f.Since.UnixMicro()/hourMicros)
	}
	if !f.Until.IsZero() {
		arg("hour < ?", f.Until.UnixMicro()/hourMicros)
	}
	for col, v := range map[string]string{"model": f.Model, "provider": f.Provider, "method": f.Method, "status": f.Status, "error_type": f.ErrorType} {
		if v != "" {
			arg(col+" = ?", v)
		}
	}
	query := `SELECT ` + rollupColumns + ` FROM rollups`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	rs, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rs.Close()
	type acc struct {
		g    Group
		sort []any // the key values as SQL would order them
		lat  histogram
	}
	groups := map[string]*acc{}
	for rs.Next() {
		r, err := scanRollup(rs)
		if err != nil {
			return nil, s.readErr(err)
		}
		var key []string
		var sortKey []any
		var at time.Time
		for _, dim := range q.By {
			var v any
			switch dim {
			case ByHour:
				v = r.hour
			case ByDay:
				v = floorDiv(r.hour, 24)
			case ByModel:
				v = r.model
			case ByProvider:
				v = r.provider
			case ByMethod:
				v = r.method
			case ByErrorType:
				v = r.errorType
			}
			key = append(key, s.keyString(dim, v, &at))
			sortKey = append(sortKey, v)
		}
		id := strings.Join(key, "\x00")
		a := groups[id]
		if a == nil {
			a = &acc{g: Group{Key: key, Time: at}, sort: sortKey, lat: histogram{}}
			groups[id] = a
		}
		a.g.Calls += r.calls
		a.g.Errors += r.errors
		a.g.InputTokens += r.in
		a.g.OutputTokens += r.out
		a.g.TotalTokens += r.total
		a.g.CostUSD += r.cost
		a.lat.merge(r.lat)
	}
	if err := rs.Err(); err != nil {
		return nil, s.readErr(err)
	}
	all := make([]*acc, 0, len(groups))
	for _, a := range groups {
		a.g.LatencyP50MS = a.lat.percentile(0.5)
		a.g.LatencyP95MS = a.lat.percentile(0.95)
		all = append(all, a)
	}
	slices.SortFunc(all, func(a, b *acc) int {
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
	out := make([]Group, len(all))
	for i, a := range all {
		out[i] = a.g
	}
	return out, nil
}

// floorDiv divides as SQLite's integer division does, toward zero: the
// rollups' days are the records' days.
func floorDiv(a, b int64) int64 { return a / b }

func itoa(n int) string { return strconv.Itoa(n) }

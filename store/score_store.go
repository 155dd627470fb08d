package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// scoresMigration adds the scores: one row per target (a call, "c:" and
// its ID, or a conversation, "t:" and its trace), name and author, so that
// adding a score again replaces it. value is the number (1 or 0 for a
// boolean), label the category; ts is Unix microseconds. Neither call_id
// nor trace_id refers to a record by a foreign key: feedback may arrive
// before the record it is on (the recorder writes from a queue), and a
// score outlives nothing it needs.
var scoresMigration = migration{
	version: 2,
	sqlite: []string{
		`CREATE TABLE scores (
			id INTEGER PRIMARY KEY,
			target TEXT NOT NULL,
			call_id TEXT,
			trace_id TEXT,
			name TEXT NOT NULL,
			author TEXT NOT NULL,
			kind INTEGER NOT NULL,
			value REAL,
			label TEXT,
			comment TEXT NOT NULL,
			source TEXT NOT NULL,
			ts INTEGER NOT NULL,
			UNIQUE (target, name, author)
		)`,
		`CREATE INDEX scores_call ON scores(call_id) WHERE call_id IS NOT NULL`,
		`CREATE INDEX scores_trace ON scores(trace_id) WHERE trace_id IS NOT NULL`,
		`CREATE INDEX scores_name ON scores(name, value)`,
	},
	postgres: []string{
		`CREATE TABLE scores (
			id BIGSERIAL PRIMARY KEY,
			target TEXT NOT NULL,
			call_id TEXT,
			trace_id TEXT,
			name TEXT NOT NULL,
			author TEXT NOT NULL,
			kind SMALLINT NOT NULL,
			value DOUBLE PRECISION,
			label TEXT,
			comment TEXT NOT NULL,
			source TEXT NOT NULL,
			ts BIGINT NOT NULL,
			UNIQUE (target, name, author)
		)`,
		`CREATE INDEX scores_call ON scores(call_id) WHERE call_id IS NOT NULL`,
		`CREATE INDEX scores_trace ON scores(trace_id) WHERE trace_id IS NOT NULL`,
		`CREATE INDEX scores_name ON scores(name, value)`,
	},
}

// AddScore keeps a score on a call or a conversation, replacing the one
// of the same target, name and author if there is one ([Score]). A zero
// Time is the present. The call need not be in the store yet: an
// application's feedback may come before its recorder has written the
// record.
func (s *Store) AddScore(ctx context.Context, sc Score) error {
	_, err := s.AddScores(ctx, []Score{sc})
	return err
}

// AddScores keeps scores as [Store.AddScore] does, in one transaction:
// all or none. It returns how many rows it wrote (new and replaced).
func (s *Store) AddScores(ctx context.Context, scores []Score) (int, error) {
	if s.opts.ReadOnly {
		return 0, ErrReadOnly
	}
	if s.closed.Load() {
		return 0, ErrClosed
	}
	now := time.Now()
	scores = slices.Clone(scores) // the caller's are not changed
	for i := range scores {
		if scores[i].Time.IsZero() {
			scores[i].Time = now
		}
		if err := scores[i].Validate(); err != nil {
			return 0, err
		}
	}
	if len(scores) == 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, s.scoreErr(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, s.q(`INSERT INTO scores (target, call_id, trace_id, name, author, kind, value, label, comment, source, ts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (target, name, author) DO UPDATE SET call_id = excluded.call_id, trace_id = excluded.trace_id,
			kind = excluded.kind, value = excluded.value, label = excluded.label, comment = excluded.comment,
			source = excluded.source, ts = excluded.ts`))
	if err != nil {
		return 0, s.scoreErr(err)
	}
	defer stmt.Close()
	for i := range scores {
		sc := &scores[i]
		var value, label any
		if f, ok := sc.Value.Float(); ok {
			value = f
		} else {
			label = sc.Value.Label()
		}
		if _, err := stmt.ExecContext(ctx, sc.target(), nullIfEmpty(sc.CallID), nullIfEmpty(sc.TraceID), sc.Name, sc.Author,
			int(sc.Value.Kind()), value, label, sc.Comment, string(sc.Source), sc.Time.UnixMicro()); err != nil {
			return 0, s.scoreErr(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, s.scoreErr(err)
	}
	return len(scores), nil
}

func (s *Store) scoreErr(err error) error {
	return fmt.Errorf("store: write scores to %s: %w", s.url, err)
}

func nullIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// ScoreQuery selects scores. The zero ScoreQuery selects them all; each
// field set narrows it.
type ScoreQuery struct {
	// CallIDs selects the scores on these calls.
	CallIDs []string
	// TraceID selects the scores on this conversation and on its calls.
	TraceID string
	Name    string
	Author  string
	Source  Source
	// Limit bounds how many come back, the newest; 0 is no bound.
	Limit int
}

// Scores returns the scores q selects, oldest first (by time, then by
// when they were kept).
func (s *Store) Scores(ctx context.Context, q ScoreQuery) ([]Score, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var conds []string
	if len(q.CallIDs) > 0 {
		ph := make([]string, len(q.CallIDs))
		for i, id := range q.CallIDs {
			ph[i] = arg(id)
		}
		conds = append(conds, "call_id IN ("+strings.Join(ph, ", ")+")")
	}
	if q.TraceID != "" {
		t := arg(q.TraceID)
		conds = append(conds, "(trace_id = "+t+" OR call_id IN (SELECT call_id FROM records WHERE trace_id = "+t+"))")
	}
	for _, c := range []struct{ col, v string }{{"name", q.Name}, {"author", q.Author}, {"source", string(q.Source)}} {
		if c.v != "" {
			conds = append(conds, c.col+" = "+arg(c.v))
		}
	}
	query := `SELECT call_id, trace_id, name, author, kind, value, label, comment, source, ts FROM scores`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	if q.Limit > 0 {
		query = `SELECT * FROM (` + query + ` ORDER BY ts DESC, id DESC LIMIT ` + arg(q.Limit) + `) x`
	}
	query += " ORDER BY ts, id"
	if q.Limit > 0 {
		query = strings.Replace(query, " ORDER BY ts, id", " ORDER BY ts", 1)
	}
	rows, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.readErr(err)
	}
	return scanScores(rows)
}

// scanScores reads rows of (call_id, trace_id, name, author, kind, value,
// label, comment, source, ts): the one place a score is read from SQL.
func scanScores(rows *sql.Rows) ([]Score, error) {
	defer rows.Close()
	var out []Score
	for rows.Next() {
		var (
			sc              Score
			callID, traceID sql.NullString
			kind            int
			value           sql.NullFloat64
			label           sql.NullString
			source          string
			ts              int64
		)
		if err := rows.Scan(&callID, &traceID, &sc.Name, &sc.Author, &kind, &value, &label, &sc.Comment, &source, &ts); err != nil {
			return nil, err
		}
		sc.CallID, sc.TraceID, sc.Source = callID.String, traceID.String, Source(source)
		sc.Time = time.UnixMicro(ts).UTC()
		switch ValueKind(kind) {
		case NumberValue:
			sc.Value = Number(value.Float64)
		case BoolValue:
			sc.Value = Bool(value.Float64 != 0)
		case CategoryValue:
			sc.Value = Category(label.String)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// ScoreFilter selects records by their scores, or their conversations':
// a record matches when a score of Name on it, or on its conversation,
// satisfies Op and Value. [ParseScoreFilter] reads one from text.
type ScoreFilter struct {
	Name string
	// Op is one of "<", "<=", "=", "!=", ">=", ">" (Value is compared),
	// "exists" (a score of the name, any value) and "missing" (none on the
	// record nor on its conversation: what an annotation queue asks).
	Op    string
	Value Value
}

// ErrBadScoreFilter: text [ParseScoreFilter] cannot read.
var ErrBadScoreFilter = errors.New("store: invalid score filter")

var scoreOps = []string{"<=", ">=", "!=", "<", ">", "="}

// ParseScoreFilter reads a score filter:
//
//	helpfulness<0.5     a number compared: <, <=, =, !=, >=, >
//	thumbs=false        a boolean: = or != true or false
//	topic=off_topic     a category: = or != a label
//	helpfulness         any score of the name
//	!helpfulness        no score of the name
func ParseScoreFilter(s string) (ScoreFilter, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (ScoreFilter, error) {
		return ScoreFilter{}, fmt.Errorf("%w %q: %s (NAME<0.5, NAME=true, NAME=LABEL, NAME or !NAME)", ErrBadScoreFilter, s, why)
	}
	if name, ok := strings.CutPrefix(s, "!"); ok {
		if !validScoreName(name) {
			return bad("no name")
		}
		return ScoreFilter{Name: name, Op: "missing"}, nil
	}
	at, op := -1, ""
	for _, o := range scoreOps {
		if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at || i == at && len(o) > len(op)) {
			at, op = i, o
		}
	}
	if at < 0 {
		if !validScoreName(s) {
			return bad("no name")
		}
		return ScoreFilter{Name: s, Op: "exists"}, nil
	}
	name, text := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(op):])
	if !validScoreName(name) || text == "" {
		return bad("a name and a value are needed")
	}
	f := ScoreFilter{Name: name, Op: op}
	switch {
	case text == "true" || text == "false":
		f.Value = Bool(text == "true")
	default:
		if n, err := strconv.ParseFloat(text, 64); err == nil {
			f.Value = Number(n)
		} else {
			f.Value = Category(text)
		}
	}
	if f.Value.Kind() == NoValue {
		return bad("the value is not a number")
	}
	if f.Value.Kind() != NumberValue && op != "=" && op != "!=" {
		return bad("only a number is compared with " + op)
	}
	return f, nil
}

func validScoreName(n string) bool {
	return n != "" && len(n) <= MaxScoreName && !strings.ContainsAny(n, "<>=!")
}

// String returns the filter as ParseScoreFilter reads it.
func (f ScoreFilter) String() string {
	switch f.Op {
	case "exists":
		return f.Name
	case "missing":
		return "!" + f.Name
	}
	return f.Name + f.Op + f.Value.String()
}

// scoreCond returns the SQL condition on records r of one score filter.
func (f ScoreFilter) scoreCond(arg func(any) string) string {
	name := arg(f.Name)
	var cmp string
	switch f.Op {
	case "exists", "missing":
	default:
		op := f.Op
		if op == "!=" {
			op = "<>"
		}
		if x, ok := f.Value.Float(); ok {
			cmp = " AND value " + op + " " + arg(x)
		} else {
			cmp = " AND label " + op + " " + arg(f.Value.Label())
		}
	}
	onCall := "r.call_id IN (SELECT call_id FROM scores WHERE name = " + name + cmp + " AND call_id IS NOT NULL)"
	onTrace := "r.trace_id IN (SELECT trace_id FROM scores WHERE name = " + name + cmp + " AND call_id IS NULL)"
	if f.Op == "missing" {
		return "NOT (" + onCall + " OR coalesce(" + onTrace + ", false))"
	}
	return "(" + onCall + " OR " + onTrace + ")"
}

// scoreConds returns the conditions of f's score filters.
func (f Filter) scoreConds(arg func(any) string) []string {
	var conds []string
	for _, sf := range f.Scores {
		conds = append(conds, sf.scoreCond(arg))
	}
	return conds
}

// ScoreAggregateQuery asks for the figures of one score over the records
// a filter selects, grouped by dimensions of [GroupBy] (none: one group).
// A call's score counts under its call; a conversation's, under its
// conversation's first call (its user, model, tags and day).
type ScoreAggregateQuery struct {
	Filter
	Name string
	By   []GroupBy
}

// ScoreGroup is the figures of a score in one group.
type ScoreGroup struct {
	// Key and Time are as in [Group].
	Key  []string
	Time time.Time
	// Count is how many scores; Mean, Min and Max are over the numbers
	// and booleans among them (a boolean's mean is the share of true).
	Count          int64
	Mean, Min, Max float64
	// Labels counts the categories, when the score is categorical.
	Labels map[string]int64
}

// AggregateScores returns the figures of the score q names, one group
// per combination of the values of q.By, ordered by key.
func (s *Store) AggregateScores(ctx context.Context, q ScoreAggregateQuery) ([]ScoreGroup, error) {
	if q.Name == "" {
		return nil, errors.New("store: an aggregate of scores needs the score's name")
	}
	if err := checkGroups(q.By); err != nil {
		return nil, err
	}
	var exprs []string
	tags := false
	for _, g := range q.By {
		e, _ := groupExpr(g)
		exprs = append(exprs, e)
		tags = tags || g == ByTag
	}
	args := []any{q.Name}
	// Each score with the record it counts under: its call, or its
	// conversation's first.
	from := ` FROM (SELECT c.value, c.label, r2.seq FROM scores c JOIN records r2 ON r2.call_id = c.call_id WHERE c.name = $1
		UNION ALL SELECT c.value, c.label, (SELECT min(x.seq) FROM records x WHERE x.trace_id = c.trace_id) FROM scores c WHERE c.name = $1 AND c.call_id IS NULL) sc
		JOIN records r ON r.seq = sc.seq`
	if tags {
		from += tagJoin
	}
	if where := q.where(s, &args); where != "" {
		from += " WHERE " + where
	}
	keys := ""
	group := " GROUP BY coalesce(sc.label, '')"
	if len(exprs) > 0 {
		keys = strings.Join(exprs, ", ") + ", "
		group = " GROUP BY " + strings.Join(exprs, ", ") + ", coalesce(sc.label, '') ORDER BY " + strings.Join(exprs, ", ")
	}
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+keys+`coalesce(sc.label, ''), count(*), count(sc.value), coalesce(sum(sc.value), 0), min(sc.value), max(sc.value)`+from+group), args...)
	if err != nil {
		return nil, s.readErr(err)
	}
	defer rows.Close()
	var out []ScoreGroup
	index := map[string]int{}
	keyVals := make([]any, len(q.By))
	for i := range keyVals {
		keyVals[i] = new(any)
	}
	sums := map[int]float64{}
	numbers := map[int]int64{}
	for rows.Next() {
		var (
			label       string
			count, nums int64
			sum         float64
			lo, hi      sql.NullFloat64
		)
		if err := rows.Scan(append(slices.Clone(keyVals), &label, &count, &nums, &sum, &lo, &hi)...); err != nil {
			return nil, s.readErr(err)
		}
		raw := string(rawKey(nil, keyVals))
		i, ok := index[raw]
		if !ok {
			var g ScoreGroup
			for d, dim := range q.By {
				g.Key = append(g.Key, s.keyString(dim, *(keyVals[d].(*any)), &g.Time))
			}
			i = len(out)
			index[raw] = i
			out = append(out, g)
		}
		g := &out[i]
		g.Count += count
		if label != "" {
			if g.Labels == nil {
				g.Labels = map[string]int64{}
			}
			g.Labels[label] += count
		}
		if nums > 0 {
			if numbers[i] == 0 || lo.Float64 < g.Min {
				g.Min = lo.Float64
			}
			if numbers[i] == 0 || hi.Float64 > g.Max {
				g.Max = hi.Float64
			}
			numbers[i] += nums
			sums[i] += sum
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(err)
	}
	for i := range out {
		if numbers[i] > 0 {
			out[i].Mean = sums[i] / float64(numbers[i])
		}
	}
	return out, nil
}

// ScoreImportResult counts what [Store.ImportScores] did.
type ScoreImportResult struct {
	Scores   int // scores read and kept
	BadLines int // lines that were not scores, skipped
}

// ImportScores keeps the scores of a scores file ([ScoresPath]) in the
// store, in transactions of a thousand. Importing a file twice keeps each
// score once: the same target, name and author is replaced. A line that
// is not a score goes to badLine (when not nil) and is skipped.
func (s *Store) ImportScores(ctx context.Context, r io.Reader, badLine func(line int, err error)) (ScoreImportResult, error) {
	var res ScoreImportResult
	sr := NewScoreReader(r)
	batch := make([]Score, 0, 1000)
	flush := func() error {
		n, err := s.AddScores(ctx, batch)
		res.Scores += n
		batch = batch[:0]
		return err
	}
	for {
		sc, err := sr.Read()
		if err == io.EOF {
			break
		}
		var le *record.LineError
		if errors.As(err, &le) {
			res.BadLines++
			if badLine != nil {
				badLine(le.Line, le.Err)
			}
			continue
		}
		if err != nil {
			return res, fmt.Errorf("store: import scores: %w", err)
		}
		if batch = append(batch, sc); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	return res, flush()
}

package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Filter selects records. The zero Filter selects every record; each field
// set narrows it, and all must hold.
type Filter struct {
	Since time.Time // timestamp at or after it
	Until time.Time // timestamp before it

	CallID   string // one call
	TraceID  string
	UserID   string
	Tags     []string          // every one of them
	Metadata map[string]string // every key with its value

	Model    string // as the provider reported it (record.Model)
	Provider string // the part of method_name before the first dot: "openai"
	Method   string // method_name

	Status    string // outcome: "ok", "error" or "canceled"
	ErrorType string // one of the record.Error* types

	MinCostUSD  float64       // cost at least this; unpriced records never match
	MinDuration time.Duration // duration at least this

	// Text selects the records where every word of it entered their
	// trace (in the messages their args add to the trace's previous
	// record's) or appears in their output or error message. Words are
	// runs of letters and digits, matched whole and without regard to
	// case.
	Text string

	// Scores selects the records by their scores or their
	// conversations' (see [ScoreFilter]): every one must hold.
	Scores []ScoreFilter
}

// where appends the filter's conditions on records r to args and
// returns them as SQL, "" for none. Tags, metadata and text are tested
// as membership in what matches them (IN), unless p says that a term
// matches so many records that a newest-first walk finds a page sooner
// by testing each record (EXISTS).
func (f Filter) where(s *Store, args *[]any) string { return f.whereWith(s, args, nil) }

func (f Filter) whereWith(s *Store, args *[]any, p *plan) string {
	var conds []string
	arg := func(v any) string {
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "r.ts >= "+arg(f.Since.UnixMicro()))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "r.ts < "+arg(f.Until.UnixMicro()))
	}
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = "+arg(v))
		}
	}
	eq("r.call_id", f.CallID)
	eq("r.trace_id", f.TraceID)
	eq("r.user_id", f.UserID)
	eq("r.model", f.Model)
	eq("r.provider", f.Provider)
	eq("r.method", f.Method)
	eq("r.status", f.Status)
	eq("r.error_type", f.ErrorType)
	attr := func(name, value string, walk bool) string {
		if walk {
			return s.d.probeEach("SELECT 1 FROM record_attrs a WHERE a.name = " + arg(name) + " AND a.value = " + arg(value) + " AND a.seq = r.seq")
		}
		return "r.seq IN (SELECT seq FROM record_attrs WHERE name = " + arg(name) + " AND value = " + arg(value) + ")"
	}
	for _, t := range f.Tags {
		conds = append(conds, attr(attrTag, t, p.walk(attrTag, t)))
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		conds = append(conds, attr(attrMeta+k, f.Metadata[k], p.walk(attrMeta+k, f.Metadata[k])))
	}
	if f.MinCostUSD > 0 {
		conds = append(conds, "r.cost_usd >= "+arg(f.MinCostUSD))
	}
	if f.MinDuration > 0 {
		conds = append(conds, "r.duration_ms >= "+arg(float64(f.MinDuration)/float64(time.Millisecond)))
	}
	if f.Text != "" {
		c := s.d.textMatch(f.Text, p.walk("text", textKey(f.Text)), arg)
		if c == "" {
			c = "0 = 1" // no word: nothing matches
		}
		conds = append(conds, c)
	}
	conds = append(conds, f.scoreConds(arg)...)
	return strings.Join(conds, " AND ")
}

// plan says, for a newest-first page, which tag, metadata and text terms
// match so many records that testing each record found walking newest
// first beats gathering all they match and sorting them. SQLite's
// planner, without statistics, always gathers: 1.3 s for a common tag at
// a million records, against 2 ms walking; and walking for a rare tag
// reads most of the table. PostgreSQL's gathers too (29 ms for a common
// metadata value at a million records).
type plan struct{ walkTerms map[string]bool }

func (p *plan) walk(name, value string) bool {
	return p != nil && p.walkTerms[name+"\x00"+value]
}

// planPage counts, up to a bound, what each term of f matches: walking
// reads about limit*records/matches rows, gathering about matches rows
// and sorts them, so the crossover is near sqrt(limit*records).
func (s *Store) planPage(ctx context.Context, f Filter, limit int) (*plan, error) {
	if len(f.Tags) == 0 && len(f.Metadata) == 0 && f.Text == "" {
		return nil, nil
	}
	var total *int64
	if err := s.r.QueryRowContext(ctx, `SELECT max(seq) FROM records`).Scan(&total); err != nil || total == nil {
		return nil, err
	}
	bound := max(1000, int64(math.Sqrt(float64(limit)*float64(*total))))
	if s.walkBound > 0 {
		bound = s.walkBound
	}
	p := &plan{walkTerms: map[string]bool{}}
	probe := func(key string, query string, args ...any) error {
		// Where the database's statistics say a term is common, walk
		// without counting: counting a word in 86 of 100 records up to
		// the bound took PostgreSQL 75-1,300 ms at a million records.
		// A term they call rare is counted: that is cheap (an index
		// gives its few matches), and the statistics may be stale.
		if est, ok := s.d.estimate(ctx, s.r, s.q(query), args...); ok && est >= float64(bound) {
			p.walkTerms[key] = true
			return nil
		}
		var n int64
		if err := s.r.QueryRowContext(ctx, s.q(`SELECT count(*) FROM (`+query+` LIMIT $`+strconv.Itoa(len(args)+1)+`) AS matches`), append(args, bound)...).Scan(&n); err != nil {
			return err
		}
		p.walkTerms[key] = n >= bound
		return nil
	}
	for _, t := range f.Tags {
		if err := probe(attrTag+"\x00"+t, `SELECT 1 FROM record_attrs WHERE name = $1 AND value = $2`, attrTag, t); err != nil {
			return nil, err
		}
	}
	for k, v := range f.Metadata {
		if err := probe(attrMeta+k+"\x00"+v, `SELECT 1 FROM record_attrs WHERE name = $1 AND value = $2`, attrMeta+k, v); err != nil {
			return nil, err
		}
	}
	if query, param := s.d.textMatches(f.Text); query != "" {
		if err := probe("text\x00"+textKey(f.Text), query, param); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// textKey is a search text as plans know it: its words.
func textKey(text string) string { return strings.Join(words(text), " ") }

// Query asks for one page of records, newest first.
type Query struct {
	Filter
	// Limit is the page size; default 50, at most 1,000.
	Limit int
	// Cursor continues from the page whose [Page].Next it is; "" starts
	// with the newest record.
	Cursor string
	// NoArgs leaves Args empty ("[]") and Output nil: for a list, which
	// needs no transcripts, it saves reading them (both are messages,
	// kept apart from the records).
	NoArgs bool
}

// Page is one page of records, newest first.
type Page struct {
	Records []record.Record
	// Next is the cursor of the following page; "" when this is the last.
	Next string
}

const (
	defaultLimit = 50
	maxLimit     = 1000
)

// ErrBadCursor: a cursor not made by this package.
var ErrBadCursor = errors.New("store: bad cursor")

// cursor is a position in newest-first order: before the record (ts, seq).
type cursor struct{ ts, seq int64 }

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.ts, 36) + "." + strconv.FormatInt(c.seq, 36)))
}

func parseCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	a, z, ok := strings.Cut(string(b), ".")
	ts, err1 := strconv.ParseInt(a, 36, 64)
	seq, err2 := strconv.ParseInt(z, 36, 64)
	if !ok || err1 != nil || err2 != nil {
		return cursor{}, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	return cursor{ts, seq}, nil
}

// Query returns one page of the records the filter selects, newest first
// (by timestamp, then by the order the store took them).
func (s *Store) Query(ctx context.Context, q Query) (Page, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	var c cursor
	if q.Cursor != "" {
		var err error
		if c, err = parseCursor(q.Cursor); err != nil {
			return Page{}, err
		}
	}
	p, err := s.planPage(ctx, q.Filter, limit)
	if err != nil {
		return Page{}, s.readErr(err)
	}
	if w, ok := s.walkOf(q.Filter, p); ok {
		var at *cursor
		if q.Cursor != "" {
			at = &c
		}
		found, ok, err := s.walkSeqs(ctx, w, q.Filter, at, limit, p)
		if err != nil {
			return Page{}, s.readErr(err)
		}
		if ok {
			return s.pageOf(ctx, found, limit, q.NoArgs)
		}
	}
	var args []any
	where := q.whereWith(s, &args, p)
	if q.Cursor != "" {
		where = and(where, c.before(&args))
	}
	if where != "" {
		where = " WHERE " + where
	}
	args = append(args, limit+1)
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+docColumns+`, r.ts FROM records r JOIN record_docs d ON d.seq = r.seq`+where+
		` ORDER BY r.ts DESC, r.seq DESC LIMIT $`+strconv.Itoa(len(args))), args...)
	if err != nil {
		return Page{}, s.readErr(err)
	}
	var ds []*docRow
	var last cursor
	more := false
	for rows.Next() {
		if len(ds) == limit {
			more = true // the row past the page: there is a next one
			break
		}
		var ts int64
		d, err := scanDoc(rows, &ts)
		if err != nil {
			rows.Close()
			return Page{}, s.readErr(err)
		}
		ds = append(ds, d)
		last = cursor{ts, d.seq}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Page{}, s.readErr(err)
	}
	var page Page
	if more {
		page.Next = last.String()
	}
	page.Records, err = s.assemble(ctx, ds, !q.NoArgs, !q.NoArgs, nil)
	return page, err
}

func and(a, b string) string {
	if a == "" {
		return b
	}
	return a + " AND " + b
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pageOf reads the records found (up to limit+1, newest first) as a page.
func (s *Store) pageOf(ctx context.Context, found []cursor, limit int, noArgs bool) (Page, error) {
	var page Page
	if len(found) > limit {
		found = found[:limit]
		page.Next = found[limit-1].String()
	}
	if len(found) == 0 {
		return page, nil
	}
	seqs := make([]any, len(found))
	for i, c := range found {
		seqs[i] = c.seq
	}
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+docColumns+` FROM record_docs d WHERE d.seq IN (`+placeholders(1, len(seqs))+`)`), seqs...)
	if err != nil {
		return Page{}, s.readErr(err)
	}
	ds, err := scanDocs(rows)
	if err != nil {
		return Page{}, s.readErr(err)
	}
	bySeq := make(map[int64]*docRow, len(ds))
	for _, d := range ds {
		bySeq[d.seq] = d
	}
	ordered := make([]*docRow, 0, len(found))
	for _, c := range found {
		if d := bySeq[c.seq]; d != nil {
			ordered = append(ordered, d)
		}
	}
	page.Records, err = s.assemble(ctx, ordered, !noArgs, !noArgs, nil)
	return page, err
}

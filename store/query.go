package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
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
}

// where appends the filter's conditions on records r to args and
// returns them as SQL, "" for none.
func (f Filter) where(s *Store, args *[]any) string {
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
	eq("r.trace_id", f.TraceID)
	eq("r.user_id", f.UserID)
	eq("r.model", f.Model)
	eq("r.provider", f.Provider)
	eq("r.method", f.Method)
	eq("r.status", f.Status)
	eq("r.error_type", f.ErrorType)
	for _, t := range f.Tags {
		conds = append(conds, "r.seq IN (SELECT seq FROM record_attrs WHERE name = '"+attrTag+"' AND value = "+arg(t)+")")
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		conds = append(conds, "r.seq IN (SELECT seq FROM record_attrs WHERE name = "+arg(attrMeta+k)+" AND value = "+arg(f.Metadata[k])+")")
	}
	if f.MinCostUSD > 0 {
		conds = append(conds, "r.cost_usd >= "+arg(f.MinCostUSD))
	}
	if f.MinDuration > 0 {
		conds = append(conds, "r.duration_ms >= "+arg(float64(f.MinDuration)/float64(time.Millisecond)))
	}
	if f.Text != "" {
		if s.dialect == SQLite {
			q := ftsQuery(f.Text)
			if q == "" {
				conds = append(conds, "0 = 1") // no word: nothing matches
			} else {
				conds = append(conds, "r.seq IN (SELECT rowid FROM record_text WHERE record_text MATCH "+arg(q)+")")
			}
		} else {
			conds = append(conds, "r.seq IN (SELECT seq FROM record_text WHERE tsv @@ plainto_tsquery('simple', "+arg(strings.Join(words(f.Text), " "))+"))")
		}
	}
	return strings.Join(conds, " AND ")
}

// Query asks for one page of records, newest first.
type Query struct {
	Filter
	// Limit is the page size; default 50, at most 1,000.
	Limit int
	// Cursor continues from the page whose [Page].Next it is; "" starts
	// with the newest record.
	Cursor string
	// NoArgs leaves Args empty ("[]"): for a list, which needs no
	// transcripts, it saves reading them.
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
	var args []any
	where := q.where(s, &args)
	if q.Cursor != "" {
		c, err := parseCursor(q.Cursor)
		if err != nil {
			return Page{}, err
		}
		ts, seq := "$"+strconv.Itoa(len(args)+1), "$"+strconv.Itoa(len(args)+2)
		args = append(args, c.ts, c.seq)
		where = and(where, "(r.ts < "+ts+" OR (r.ts = "+ts+" AND r.seq < "+seq+"))")
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
	var p Page
	if more {
		p.Next = last.String()
	}
	p.Records, err = s.assemble(ctx, ds, !q.NoArgs, nil)
	return p, err
}

func and(a, b string) string {
	if a == "" {
		return b
	}
	return a + " AND " + b
}

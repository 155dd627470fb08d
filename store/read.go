package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/llmhistory/llmhistory/record"
)

// docRow is a row of record_docs: a record's JSON without args, and its
// args as message references.
type docRow struct {
	seq   int64
	base  sql.NullInt64
	count int
	refs  []byte
	doc   []byte // nil for a base fetched only for its references
}

// docColumns select a docRow from record_docs d.
const docColumns = `d.seq, d.base_seq, d.base_count, d.refs, d.doc`

func scanDoc(rows interface{ Scan(...any) error }, extra ...any) (*docRow, error) {
	d := &docRow{}
	err := rows.Scan(append(d.dest(), extra...)...)
	return d, err
}

// dest is where a row of docColumns is scanned.
func (d *docRow) dest() []any { return []any{&d.seq, &d.base, &d.count, &d.refs, &d.doc} }

// Get returns the record with the given call ID, args whole, or an error
// matching [ErrNotFound].
func (s *Store) Get(ctx context.Context, callID string) (record.Record, error) {
	row := s.r.QueryRowContext(ctx, s.q(`SELECT `+docColumns+` FROM records r JOIN record_docs d ON d.seq = r.seq WHERE r.call_id = $1`), callID)
	d, err := scanDoc(row)
	if errors.Is(err, sql.ErrNoRows) {
		return record.Record{}, fmt.Errorf("%w: %q", ErrNotFound, callID)
	}
	if err != nil {
		return record.Record{}, s.readErr(err)
	}
	recs, err := s.assemble(ctx, []*docRow{d}, true, true, nil)
	if err != nil {
		return record.Record{}, err
	}
	return recs[0], nil
}

// GetMany returns the records with the given call IDs, args whole, in
// the order asked; a call ID the store does not hold is left out.
func (s *Store) GetMany(ctx context.Context, callIDs []string) ([]record.Record, error) {
	ids := make([]any, len(callIDs))
	for i, id := range callIDs {
		ids[i] = id
	}
	var ds []*docRow
	at := map[int64]string{}
	var d docRow
	var id string
	err := s.eachRowIn(ctx, s.r, `SELECT `+docColumns+`, r.call_id FROM records r JOIN record_docs d ON d.seq = r.seq WHERE r.call_id IN (`, ids, `)`,
		append(d.dest(), &id), func() error {
			row := d
			ds = append(ds, &row)
			at[d.seq] = id
			return nil
		})
	if err != nil {
		return nil, s.readErr(err)
	}
	order := make(map[string]int, len(callIDs))
	for i, id := range callIDs {
		if _, ok := order[id]; !ok {
			order[id] = i
		}
	}
	slices.SortFunc(ds, func(a, b *docRow) int { return order[at[a.seq]] - order[at[b.seq]] })
	return s.assemble(ctx, ds, true, true, nil)
}

// Trace returns the records of a trace, oldest first (by timestamp, then
// by the order the store took them), args whole.
func (s *Store) Trace(ctx context.Context, traceID string) ([]record.Record, error) {
	rows, err := s.r.QueryContext(ctx, s.q(`SELECT `+docColumns+` FROM records r JOIN record_docs d ON d.seq = r.seq
		WHERE r.trace_id = $1 ORDER BY r.ts, r.seq`), traceID)
	if err != nil {
		return nil, s.readErr(err)
	}
	ds, err := scanDocs(rows)
	if err != nil {
		return nil, s.readErr(err)
	}
	return s.assemble(ctx, ds, true, true, nil)
}

func scanDocs(rows *sql.Rows) ([]*docRow, error) {
	defer rows.Close()
	var ds []*docRow
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, rows.Err()
}

// readErr says which store a read failed on; nil stays nil.
func (s *Store) readErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: read %s: %w", s.url, err)
}

// idMemo remembers the message IDs of records whose args were put
// together, for a reader that goes on to later records of their traces.
type idMemo map[int64][]int64

// assemble decodes rows into records, putting their args back together
// when withArgs, and reading their answers when withOutput (both are
// messages, kept apart from the records). memo, when not nil, carries the
// IDs of bases across calls.
func (s *Store) assemble(ctx context.Context, rows []*docRow, withArgs, withOutput bool, memo idMemo) ([]record.Record, error) {
	// Decompressing and decoding are most of a read: on every core.
	recs := make([]record.Record, len(rows))
	outs := make([]int64, len(rows)) // each record's answer, a message
	errs := make([]error, len(rows))
	parallel(len(rows), func(i int) {
		doc, err := decodeDoc(rows[i].doc)
		if err == nil {
			doc, outs[i] = outputRef(doc)
			recs[i], err = record.DecodeLine(doc)
		}
		if err != nil {
			errs[i] = fmt.Errorf("store: record %d of %s: %w", rows[i].seq, s.url, err)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if !withArgs && !withOutput {
		return recs, nil
	}
	if !withArgs {
		if err := s.answers(ctx, recs, outs); err != nil {
			return nil, err
		}
		return recs, nil
	}
	if memo == nil {
		memo = idMemo{}
	}
	ch := &chains{s: s, db: s.r, known: make(map[int64]*docRow, len(rows)), memo: memo}
	for _, d := range rows {
		ch.known[d.seq] = d
	}
	if err := ch.fetchBases(ctx); err != nil {
		return nil, err
	}
	lists := make([][]int64, len(rows))
	need := map[int64]bool{}
	for i, d := range rows {
		ids, err := ch.ids(d.seq, 0)
		if err != nil {
			return nil, err
		}
		lists[i] = ids
		for _, id := range ids {
			need[id] = true
		}
		if withOutput && outs[i] != 0 {
			need[outs[i]] = true
		}
	}
	bodies, err := s.messageBodies(ctx, need)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i, ids := range lists {
		buf.Reset()
		buf.WriteByte('[')
		for j, id := range ids {
			b, ok := bodies[id]
			if !ok {
				return nil, fmt.Errorf("store: %s: message %d of record %s is missing", s.url, id, recs[i].CallID)
			}
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.Write(b)
		}
		buf.WriteByte(']')
		recs[i].Args = bytes.Clone(buf.Bytes())
	}
	if !withOutput {
		return recs, nil
	}
	return recs, s.setAnswers(recs, outs, bodies)
}

// answers reads the answers of recs, whose message IDs are outs (0: none
// kept).
func (s *Store) answers(ctx context.Context, recs []record.Record, outs []int64) error {
	need := map[int64]bool{}
	for _, id := range outs {
		if id != 0 {
			need[id] = true
		}
	}
	if len(need) == 0 {
		return nil
	}
	bodies, err := s.messageBodies(ctx, need)
	if err != nil {
		return err
	}
	return s.setAnswers(recs, outs, bodies)
}

// setAnswers sets the Output of recs from the bodies of their answers.
func (s *Store) setAnswers(recs []record.Record, outs []int64, bodies map[int64][]byte) error {
	for i, id := range outs {
		if id == 0 {
			continue
		}
		b, ok := bodies[id]
		if !ok {
			return fmt.Errorf("store: %s: message %d, the answer of record %s, is missing", s.url, id, recs[i].CallID)
		}
		var out record.Message
		if err := out.UnmarshalJSON(b); err != nil {
			return fmt.Errorf("store: %s: the answer of record %s (message %d): %w", s.url, recs[i].CallID, id, err)
		}
		recs[i].Output = &out
	}
	return nil
}

// messageBodies reads the messages with the given IDs.
func (s *Store) messageBodies(ctx context.Context, need map[int64]bool) (map[int64][]byte, error) {
	ids := make([]any, 0, len(need))
	for id := range need {
		ids = append(ids, id)
	}
	bodies := make(map[int64][]byte, len(ids))
	var id int64
	var body []byte // a copy at each Scan
	err := s.eachRowIn(ctx, s.r, `SELECT id, body FROM messages WHERE id IN (`, ids, `)`, []any{&id, &body}, func() error {
		bodies[id] = body
		return nil
	})
	if err != nil {
		return nil, s.readErr(err)
	}
	return bodies, nil
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// chains puts the message IDs of records back together from their bases.
type chains struct {
	s     *Store
	db    querier
	known map[int64]*docRow
	memo  idMemo
}

// fetchBases reads the bases of the known records that are neither known
// nor remembered, and theirs, until every chain is whole.
func (c *chains) fetchBases(ctx context.Context) error {
	for {
		var missing []any
		asked := map[int64]bool{}
		for _, d := range c.known {
			if !d.base.Valid {
				continue
			}
			b := d.base.Int64
			if _, ok := c.known[b]; ok || asked[b] {
				continue
			}
			if _, ok := c.memo[b]; ok {
				continue
			}
			asked[b] = true
			missing = append(missing, b)
		}
		if len(missing) == 0 {
			return nil
		}
		var d docRow
		err := c.s.eachRowIn(ctx, c.db, `SELECT seq, base_seq, base_count, refs FROM record_docs WHERE seq IN (`, missing, `)`,
			[]any{&d.seq, &d.base, &d.count, &d.refs}, func() error {
				row := d
				c.known[d.seq] = &row
				return nil
			})
		if err != nil {
			return c.s.readErr(err)
		}
		for _, b := range missing {
			if _, ok := c.known[b.(int64)]; !ok {
				return fmt.Errorf("store: %s: the record args build on (%d) is missing", c.s.url, b)
			}
		}
	}
}

// ids returns the whole list of message IDs of record seq.
func (c *chains) ids(seq int64, depth int) ([]int64, error) {
	if ids, ok := c.memo[seq]; ok {
		return ids, nil
	}
	d := c.known[seq]
	if d == nil || depth > maxChainDepth+1 {
		return nil, fmt.Errorf("store: %s: record %d: args build on a chain too long or broken", c.s.url, seq)
	}
	var ids []int64
	var prev int64
	if d.base.Valid {
		base, err := c.ids(d.base.Int64, depth+1)
		if err != nil {
			return nil, err
		}
		if d.count > len(base) {
			return nil, fmt.Errorf("store: %s: record %d takes %d messages of record %d, which has %d", c.s.url, seq, d.count, d.base.Int64, len(base))
		}
		ids = append(ids, base[:d.count]...)
		if d.count > 0 {
			prev = base[d.count-1]
		}
	}
	ids, err := decodeRefs(ids, prev, d.refs)
	if err != nil {
		return nil, fmt.Errorf("store: %s: record %d: %w", c.s.url, seq, err)
	}
	c.memo[seq] = ids
	return ids, nil
}

package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Erasure: a person asks for their history to go, or retention says a
// record's life is over. Both go through one mechanism, eraseSeqs: it
// takes the records named by their sequence numbers and, in the caller's
// transaction, deletes them and everything that holds something of them
// (their text entries, tags and metadata, scores, the messages no other
// record uses, the filter values no other record has) and rebuilds their
// share of the rollups from the records that stay.

// ErrEmptyFilter is returned by [Store.Delete] for a filter that puts no
// condition on the records: it would delete them all.
var ErrEmptyFilter = errors.New("store: delete: the filter selects every record; name a user, trace, call, time range or another condition (to empty a store, remove its file or database)")

// Receipt says what [Store.Delete] deleted, by kind, and what it checked
// afterwards.
type Receipt struct {
	Records     int64 // records deleted
	Traces      int64 // conversations none of whose records is left
	TextEntries int64 // rows of the full-text index
	Attributes  int64 // tag and metadata rows
	Scores      int64 // scores of the calls, and of the conversations that went whole
	Messages    int64 // messages no remaining record uses, deleted
	// MessagesShared are messages the deleted records used that another
	// record still uses: they belong to it too, and stay.
	MessagesShared int64
	// Restacked are records that built their args on a deleted one,
	// rewritten to list their messages themselves.
	Restacked int64
	// Names are filter values (users, tags, models...) no remaining
	// record has, deleted: the viewer no longer offers them.
	Names int64
	// RollupRows are the rollup rows of the hours, days and months the
	// deleted records fell in, rebuilt from the records that stay
	// (RollupRowsBefore of them before).
	RollupRows, RollupRowsBefore int64
	// Scrubbed says what was done so that the deleted bytes are gone
	// from the database's files too (see docs/privacy.md).
	Scrubbed []string
	// Checks are the queries run after the deletion committed, each of
	// which counts what is left of the deleted records: all zero, or
	// Delete returns an error.
	Checks []Check
}

// Check is one query of a [Receipt]: what it looks for, and how many
// rows it found.
type Check struct {
	Name  string
	Query string
	Found int64
}

// Clean reports whether every check found nothing.
func (r *Receipt) Clean() bool {
	for _, c := range r.Checks {
		if c.Found != 0 {
			return false
		}
	}
	return true
}

// add adds o's counts to r's.
func (r *Receipt) add(o *Receipt) {
	r.Records += o.Records
	r.Traces += o.Traces
	r.TextEntries += o.TextEntries
	r.Attributes += o.Attributes
	r.Scores += o.Scores
	r.Messages += o.Messages
	r.MessagesShared += o.MessagesShared
	r.Restacked += o.Restacked
	r.Names += o.Names
	r.RollupRows += o.RollupRows
	r.RollupRowsBefore += o.RollupRowsBefore
}

// Delete deletes the records f selects, in one transaction, and with
// them everything that holds something of them: their full-text
// entries, tags and metadata, their scores (and their conversations'
// when no record of a conversation is left), the messages no remaining
// record uses (a message another record still uses stays: it is that
// record's too), the users, tags, models and other filter values no
// remaining record has, and their share of the rollups, which are
// rebuilt from the records that stay, so that every aggregate is what a
// store that never had the deleted records would give. A record whose
// args built on a deleted one is rewritten to stand alone first.
//
// It then makes the deleted bytes unreadable in the database's files (on
// SQLite: deleted bytes zeroed, in the full-text index too, the WAL
// checkpointed and truncated; on PostgreSQL: VACUUM of the tables it
// touched) and checks, with a query each, that nothing of the deleted
// records is left; the [Receipt] lists them. A filter that puts no
// condition on the records is refused ([ErrEmptyFilter]).
//
// Records waiting in the store's spill file are not in the database:
// import them first ([Store.Import]) for Delete to reach them.
func (s *Store) Delete(ctx context.Context, f Filter) (Receipt, error) {
	var rc Receipt
	if s.opts.ReadOnly {
		return rc, ErrReadOnly
	}
	var args []any
	where := f.where(s, &args)
	if where == "" {
		return rc, ErrEmptyFilter
	}
	s.pruneMu.Lock()
	defer s.pruneMu.Unlock()
	var gone erased
	if err := s.deleteChunk(ctx, where, args, 0, &rc, &gone); err != nil {
		return rc, err
	}
	if rc.Records == 0 {
		return rc, nil
	}
	var err error
	if rc.Scrubbed, err = s.scrub(ctx, gone.tables()); err != nil {
		return rc, err
	}
	rc.Checks, err = s.checkErased(ctx, &gone)
	if err != nil {
		return rc, err
	}
	if !rc.Clean() {
		return rc, fmt.Errorf("store: delete: %s: records were deleted but a check found some of them left (see the receipt)", s.url)
	}
	return rc, nil
}

// erased is what deletions took, for the checks that it is gone.
type erased struct {
	seqs, callIDs, messages, names, traces []any
	hours                                  map[int64]bool
	attrs, scores                          bool
}

// tables are the tables the deletions touched.
func (g *erased) tables() []string {
	t := []string{"records", "record_docs", "record_text", "messages", "rollups", "names"}
	if g.attrs {
		t = append(t, "record_attrs")
	}
	if g.scores {
		t = append(t, "scores")
	}
	return t
}

// deleteChunk deletes the records r that match where (its parameters
// args), the oldest first, up to limit of them (0: all), in one
// transaction, adding to rc what it deleted and to g what the checks
// look for.
func (s *Store) deleteChunk(ctx context.Context, where string, args []any, limit int, rc *Receipt, g *erased) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	// On a connection of its own, told to overwrite what it deletes.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return s.deleteErr(err)
	}
	defer conn.Close()
	if err := s.d.eraseMode(ctx, conn, true); err != nil {
		return s.deleteErr(err)
	}
	defer s.d.eraseMode(context.WithoutCancel(ctx), conn, false)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return s.deleteErr(err)
	}
	defer tx.Rollback()
	query := `SELECT r.seq, r.call_id, coalesce(r.trace_id, ''), r.ts, r.user_id, r.model, r.provider, r.method, r.status, r.error_type, r.tagset
		FROM records r WHERE ` + where + ` ORDER BY r.ts, r.seq`
	if limit > 0 {
		query += ` LIMIT ` + strconv.Itoa(limit)
	}
	var doomed []doomedRecord
	var d doomedRecord
	err = eachRow(ctx, tx, s.q(query), args, []any{&d.seq, &d.callID, &d.trace, &d.ts, &d.user, &d.model, &d.provider, &d.method, &d.status, &d.errorType, &d.tagset}, func() error {
		doomed = append(doomed, d)
		return nil
	})
	if err != nil {
		return s.deleteErr(err)
	}
	if len(doomed) == 0 {
		return nil
	}
	var one Receipt
	if err := s.eraseRecords(ctx, tx, doomed, &one, g); err != nil {
		s.dict.reset()
		return s.deleteErr(err)
	}
	if err := tx.Commit(); err != nil {
		s.dict.reset()
		return s.deleteErr(err)
	}
	if one.Names > 0 {
		// The dict may hold the deleted names.
		s.dict.reset()
	}
	rc.add(&one)
	return nil
}

// doomedRecord is a record about to be deleted: the columns its
// deletion needs.
type doomedRecord struct {
	seq, ts                                          int64
	callID, trace                                    string
	user, model, provider, method, status, errorType sql.NullString
	tagset                                           sql.NullInt32
}

// eraseRecords deletes the records doomed and all that holds something of
// them, in tx (see Delete).
func (s *Store) eraseRecords(ctx context.Context, tx *sql.Tx, doomed []doomedRecord, rc *Receipt, g *erased) error {
	seqs := make([]any, len(doomed))
	isDoomed := make(map[int64]bool, len(doomed))
	traceSet := map[string]bool{}
	hours := map[int64]bool{}
	callIDs := make([]any, len(doomed))
	for i, d := range doomed {
		seqs[i], callIDs[i] = d.seq, d.callID
		isDoomed[d.seq] = true
		if d.trace != "" {
			traceSet[d.trace] = true
		}
		hours[hourOf(d.ts)] = true
	}
	traces := make([]any, 0, len(traceSet))
	for _, t := range slices.Sorted(maps.Keys(traceSet)) {
		traces = append(traces, t)
	}

	// Their documents: the tags and metadata they were filed under, and
	// the messages their args reference.
	ch := &chains{s: s, db: tx, known: map[int64]*docRow{}, memo: idMemo{}}
	type attrKey struct{ name, value string }
	var attrs []struct {
		attrKey
		seq int64
	}
	tagNames := map[string]bool{}
	used := map[int64]bool{} // the messages the doomed records use
	err := chunked(seqs, 500, func(part []any) error {
		rows, err := tx.QueryContext(ctx, s.q(`SELECT `+docColumns+` FROM record_docs d WHERE d.seq IN (`+placeholders(1, len(part))+`)`), part...)
		if err != nil {
			return err
		}
		docs, err := scanDocs(rows)
		if err != nil {
			return err
		}
		for _, d := range docs {
			doc, err := decodeDoc(d.doc)
			if err != nil {
				return err
			}
			// The answer is a message of its own (withOutputRef), used
			// as its args' are.
			doc, answer := outputRef(doc)
			if answer != 0 {
				used[answer] = true
			}
			var filed struct {
				Tags     []string          `json:"tags"`
				Metadata map[string]string `json:"metadata"`
			}
			if err := json.Unmarshal(doc, &filed); err != nil {
				return fmt.Errorf("store: record %d: %w", d.seq, err)
			}
			for _, t := range filed.Tags {
				attrs = append(attrs, struct {
					attrKey
					seq int64
				}{attrKey{attrTag, t}, d.seq})
				tagNames[t] = true
			}
			for k, v := range filed.Metadata {
				attrs = append(attrs, struct {
					attrKey
					seq int64
				}{attrKey{attrMeta + k, v}, d.seq})
			}
			d.doc = nil
			ch.known[d.seq] = d
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := ch.fetchBases(ctx); err != nil {
		return err
	}
	for _, d := range doomed {
		ids, err := ch.ids(d.seq, 0)
		if err != nil {
			return err
		}
		for _, id := range ids {
			used[id] = true
		}
	}

	// Records that build on a doomed one stand alone first.
	n, err := s.restack(ctx, tx, traces, isDoomed)
	if err != nil {
		return err
	}
	rc.Restacked = n

	// The messages another record still uses stay.
	shared, err := s.usedElsewhere(ctx, tx, used, isDoomed)
	if err != nil {
		return err
	}
	var msgs []any
	for _, id := range slices.Sorted(maps.Keys(used)) {
		if !shared[id] {
			msgs = append(msgs, id)
		}
	}
	rc.MessagesShared = int64(len(shared))

	exec := func(into *int64, head string, in []any, tail string) error {
		return chunked(in, 500, func(part []any) error {
			res, err := tx.ExecContext(ctx, s.q(head+placeholders(1, len(part))+tail), part...)
			if err != nil {
				return err
			}
			if into != nil {
				n, _ := res.RowsAffected()
				*into += n
			}
			return nil
		})
	}
	// The full-text index first: SQLite's contentless index deletes by
	// rowid, and its count is read before.
	if err := s.countIn(ctx, tx, &rc.TextEntries, s.d.textRows(), seqs); err != nil {
		return err
	}
	if err := chunked(seqs, 500, func(part []any) error {
		_, err := tx.ExecContext(ctx, s.q(s.d.deleteText(placeholders(1, len(part)))), part...)
		return err
	}); err != nil {
		return err
	}
	// Tags and metadata by their key (the table has no index by record).
	for part := range slices.Chunk(attrs, 300) {
		var b strings.Builder
		args := make([]any, 0, 3*len(part))
		for i, a := range part {
			if i > 0 {
				b.WriteString(" OR ")
			}
			fmt.Fprintf(&b, "(name = $%d AND value = $%d AND seq = $%d)", len(args)+1, len(args)+2, len(args)+3)
			args = append(args, a.name, a.value, a.seq)
		}
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM record_attrs WHERE `+b.String()), args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		rc.Attributes += n
	}
	if err := exec(nil, `DELETE FROM record_docs WHERE seq IN (`, seqs, `)`); err != nil {
		return err
	}
	if err := exec(&rc.Records, `DELETE FROM records WHERE seq IN (`, seqs, `)`); err != nil {
		return err
	}

	// Conversations none of whose records is left.
	left := map[string]bool{}
	var t string
	if err := s.eachRowIn(ctx, tx, `SELECT DISTINCT trace_id FROM records WHERE trace_id IN (`, traces, `)`, []any{&t}, func() error {
		left[t] = true
		return nil
	}); err != nil {
		return err
	}
	var goneTargets []any
	for _, t := range traces {
		if !left[t.(string)] {
			goneTargets = append(goneTargets, "t:"+t.(string))
			g.traces = append(g.traces, t)
		}
	}
	rc.Traces = int64(len(goneTargets))
	if err := exec(&rc.Scores, `DELETE FROM scores WHERE call_id IN (`, callIDs, `)`); err != nil {
		return err
	}
	if err := exec(&rc.Scores, `DELETE FROM scores WHERE target IN (`, goneTargets, `)`); err != nil {
		return err
	}
	if err := exec(&rc.Messages, `DELETE FROM messages WHERE id IN (`, msgs, `)`); err != nil {
		return err
	}

	// Their share of the rollups, then the names no record has.
	before, after, err := s.rebuildHours(ctx, tx, slices.Sorted(maps.Keys(hours)))
	if err != nil {
		return err
	}
	rc.RollupRows, rc.RollupRowsBefore = after, before
	names, err := s.unusedNames(ctx, tx, doomed, tagNames)
	if err != nil {
		return err
	}
	if err := exec(&rc.Names, `DELETE FROM names WHERE id IN (`, names, `)`); err != nil {
		return err
	}
	if rc.Names > 0 {
		if err := s.bumpNamesEpoch(ctx, tx); err != nil {
			return err
		}
	}

	g.seqs = append(g.seqs, seqs...)
	g.callIDs = append(g.callIDs, callIDs...)
	g.messages = append(g.messages, msgs...)
	g.names = append(g.names, names...)
	if g.hours == nil {
		g.hours = map[int64]bool{}
	}
	maps.Copy(g.hours, hours)
	g.attrs = g.attrs || rc.Attributes > 0
	g.scores = g.scores || rc.Scores > 0
	return nil
}

// countIn adds to n the count query (ending "IN (") finds for the values
// in, a part at a time.
func (s *Store) countIn(ctx context.Context, db querier, n *int64, query string, in []any) error {
	var c int64
	return s.eachRowIn(ctx, db, query, in, `)`, []any{&c}, func() error {
		*n += c
		return nil
	})
}

// restack rewrites the records that build their args on a doomed record,
// and are not doomed themselves, to list their messages whole. A
// record's base is the previous record of its trace, so they are found
// among the records of the doomed records' traces. It returns how many
// it rewrote.
func (s *Store) restack(ctx context.Context, tx *sql.Tx, traces []any, doomed map[int64]bool) (int64, error) {
	var dependents []*docRow
	err := chunked(traces, 500, func(part []any) error {
		rows, err := tx.QueryContext(ctx, s.q(`SELECT d.seq, d.base_seq, d.base_count, d.refs FROM records r JOIN record_docs d ON d.seq = r.seq
			WHERE r.trace_id IN (`+placeholders(1, len(part))+`) AND d.base_seq IS NOT NULL`), part...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			d := &docRow{}
			if err := rows.Scan(&d.seq, &d.base, &d.count, &d.refs); err != nil {
				return err
			}
			if !doomed[d.seq] && doomed[d.base.Int64] {
				dependents = append(dependents, d)
			}
		}
		return rows.Err()
	})
	if err != nil || len(dependents) == 0 {
		return 0, err
	}
	ch := &chains{s: s, db: tx, known: map[int64]*docRow{}, memo: idMemo{}}
	for _, d := range dependents {
		ch.known[d.seq] = d
	}
	if err := ch.fetchBases(ctx); err != nil {
		return 0, err
	}
	for _, d := range dependents {
		ids, err := ch.ids(d.seq, 0)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE record_docs SET base_seq = NULL, base_count = 0, refs = $1 WHERE seq = $2`), appendRefs([]byte{}, 0, ids), d.seq); err != nil {
			return 0, err
		}
	}
	return int64(len(dependents)), nil
}

// usedElsewhere returns those of the messages ids that a record not
// doomed uses. A message is addressed under the hour of the record that
// brought it (contentKey): a record of another hour bringing the same
// text makes a message of its own, so the records that use a message are
// those of its hour that hold it, and the later records of their traces,
// which take it through their bases. Those are read, not the store.
func (s *Store) usedElsewhere(ctx context.Context, tx *sql.Tx, ids map[int64]bool, doomed map[int64]bool) (map[int64]bool, error) {
	hours := map[int64]bool{}
	var id int64
	var hash []byte
	err := s.eachRowIn(ctx, tx, `SELECT id, hash FROM messages WHERE id IN (`, anys(slices.Sorted(maps.Keys(ids))), `)`,
		[]any{&id, &hash}, func() error {
			if len(hash) >= 4 {
				hours[int64(binary.BigEndian.Uint32(hash[:4]))] = true
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	shared := map[int64]bool{}
	traces := map[string]bool{}
	// scan reads the records a query selects (seq, trace, then a docRow's
	// reference columns) and marks what each uses of ids.
	scan := func(query string, args []any, collect bool) error {
		ch := &chains{s: s, db: tx, known: map[int64]*docRow{}, memo: idMemo{}}
		var order []int64
		traceOf := map[int64]string{}
		d := &docRow{}
		var trace string
		var stored []byte
		err := eachRow(ctx, tx, s.q(query), args, []any{&trace, &d.seq, &d.base, &d.count, &d.refs, &stored}, func() error {
			row := *d
			ch.known[row.seq] = &row
			order = append(order, row.seq)
			traceOf[row.seq] = trace
			// A record's answer is a message it uses too.
			doc, err := decodeDoc(stored)
			if err != nil {
				return err
			}
			if _, answer := outputRef(doc); ids[answer] && !doomed[row.seq] {
				shared[answer] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := ch.fetchBases(ctx); err != nil {
			return err
		}
		for _, seq := range order {
			list, err := ch.ids(seq, 0)
			if err != nil {
				return err
			}
			for _, m := range list {
				if !ids[m] {
					continue
				}
				if !doomed[seq] {
					shared[m] = true
				}
				if collect && traceOf[seq] != "" {
					traces[traceOf[seq]] = true
				}
			}
		}
		return nil
	}
	const cols = `SELECT coalesce(r.trace_id, ''), d.seq, d.base_seq, d.base_count, d.refs, d.doc FROM records r JOIN record_docs d ON d.seq = r.seq WHERE `
	for _, h := range slices.Sorted(maps.Keys(hours)) {
		if err := scan(cols+`r.ts >= $1 AND r.ts < $2`, []any{h * hourMicros, (h + 1) * hourMicros}, true); err != nil {
			return nil, err
		}
	}
	for _, t := range slices.Sorted(maps.Keys(traces)) {
		if err := scan(cols+`r.trace_id = $1`, []any{t}, false); err != nil {
			return nil, err
		}
	}
	return shared, nil
}

func anys[T any](v []T) []any {
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// unusedNames returns the IDs of the names the doomed records had (users,
// tags, tagsets, models, providers, methods, statuses, error types) that
// no remaining record has.
func (s *Store) unusedNames(ctx context.Context, tx *sql.Tx, doomed []doomedRecord, tags map[string]bool) ([]any, error) {
	cands := map[nameKey]string{} // name → the query that finds a record with it
	colOf := map[kind]string{kindUser: "user_id", kindModel: "model", kindProvider: "provider", kindMethod: "method", kindStatus: "status", kindErrorType: "error_type"}
	var tagsets []any
	for _, d := range doomed {
		for k, v := range map[kind]sql.NullString{kindUser: d.user, kindModel: d.model, kindProvider: d.provider, kindMethod: d.method, kindStatus: d.status, kindErrorType: d.errorType} {
			if v.Valid && v.String != "" {
				cands[nameKey{k, v.String}] = `SELECT count(*) FROM (SELECT 1 FROM records WHERE ` + colOf[k] + ` = $1 LIMIT 1) x`
			}
		}
		if d.tagset.Valid && d.tagset.Int32 != 0 {
			tagsets = append(tagsets, d.tagset.Int32)
		}
	}
	for t := range tags {
		if t != "" {
			cands[nameKey{kindTag, t}] = `SELECT count(*) FROM (SELECT 1 FROM record_attrs WHERE name = '` + attrTag + `' AND value = $1 LIMIT 1) x`
		}
	}
	var out []any
	for _, k := range slices.SortedFunc(maps.Keys(cands), func(a, b nameKey) int {
		if a.kind != b.kind {
			return int(a.kind - b.kind)
		}
		return strings.Compare(a.name, b.name)
	}) {
		var n int64
		if err := tx.QueryRowContext(ctx, s.q(cands[k]), k.name).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			continue
		}
		var id int32
		err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM names WHERE kind = $1 AND name = $2`), int(k.kind), k.name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	seen := map[int32]bool{}
	for _, ts := range tagsets {
		id := ts.(int32)
		if seen[id] {
			continue
		}
		seen[id] = true
		var n int64
		if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM (SELECT 1 FROM records WHERE tagset = $1 LIMIT 1) x`), id).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			out = append(out, id)
		}
	}
	return out, nil
}

// The names epoch (meta key names_epoch) changes whenever names are
// deleted: a writer in another process, whose dict may hold a deleted
// name's ID, reads it in its transaction and forgets its dict when it
// has moved (checkNamesEpoch), so that the name gets an ID again rather
// than a dangling one.
func (s *Store) bumpNamesEpoch(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO llmhistory_meta (key, value) VALUES ('names_epoch', $1)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`), strconv.FormatInt(time.Now().UnixNano(), 10))
	return err
}

// checkNamesEpoch resets the dict when names were deleted since it last
// looked, by any process.
func (s *Store) checkNamesEpoch(ctx context.Context, tx *sql.Tx) error {
	var epoch string
	err := tx.QueryRowContext(ctx, `SELECT value FROM llmhistory_meta WHERE key = 'names_epoch'`).Scan(&epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	s.dict.mu.Lock()
	moved := s.dict.epoch != epoch
	s.dict.mu.Unlock()
	if moved {
		s.dict.reset()
		s.dict.mu.Lock()
		s.dict.epoch = epoch
		s.dict.mu.Unlock()
	}
	return nil
}

// rebuildHours computes again, from the records, the rollups of the
// given hours (ascending), and of the days and months they fall in. It
// returns how many rows those buckets had before and have after.
func (s *Store) rebuildHours(ctx context.Context, tx *sql.Tx, hours []int64) (before, after int64, err error) {
	if len(hours) == 0 {
		return 0, 0, nil
	}
	if err := s.lockRollups(ctx, tx); err != nil {
		return 0, 0, err
	}
	if err := s.dict.refresh(ctx, s, tx); err != nil {
		return 0, 0, err
	}
	sealed, err := s.sealedHour(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	// runs of consecutive buckets
	type run struct{ first, last int64 }
	runsOf := func(bs []int64) []run {
		var rs []run
		for _, b := range bs {
			if n := len(rs); n > 0 && rs[n-1].last+1 >= b {
				rs[n-1].last = max(rs[n-1].last, b)
				continue
			}
			rs = append(rs, run{b, b})
		}
		return rs
	}
	clear := func(sp span, rs []run) error {
		for _, r := range rs {
			res, err := tx.ExecContext(ctx, s.q(`DELETE FROM rollups WHERE span = $1 AND bucket BETWEEN $2 AND $3`), sp, r.first, r.last)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			before += n
		}
		return nil
	}
	put := func(rows map[rollupKey]*figures) error {
		after += int64(len(rows))
		return s.putRollups(ctx, tx, rows)
	}
	// Hours, from the records.
	hourRuns := runsOf(hours)
	if err := clear(spanHour, hourRuns); err != nil {
		return 0, 0, err
	}
	rows := map[rollupKey]*figures{}
	for _, r := range hourRuns {
		err := s.scanFacts(ctx, tx, `r.ts >= $1 AND r.ts < $2`, []any{r.first * hourMicros, (r.last + 1) * hourMicros}, false, func(f *fact) error {
			for _, cube := range []int16{cubeCalls, cubeUsers} {
				k := rollupKey{cube: cube, span: spanHour, bucket: hourOf(f.ts), dims: f.dims.in(cube)}
				fg := rows[k]
				if fg == nil {
					fg = &figures{}
					rows[k] = fg
				}
				fg.addRecord(f.ok, f.in, f.out, f.total, f.cost, f.duration)
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	if err := put(rows); err != nil {
		return 0, 0, err
	}
	// Days from their sealed hours, months from their days.
	var days, months []int64
	for _, h := range hours {
		if d := dayOfHour(h); len(days) == 0 || days[len(days)-1] != d {
			days = append(days, d)
		}
	}
	for _, d := range days {
		if m := monthOfDay(d); len(months) == 0 || months[len(months)-1] != m {
			months = append(months, m)
		}
	}
	for _, up := range []struct {
		from, to span
		buckets  []int64
		children func(b int64) (lo, hi int64)
		parent   func(child int64) int64
	}{
		{spanHour, spanDay, days, func(d int64) (int64, int64) { return d * 24, min(d*24+23, sealed-1) }, dayOfHour},
		{spanDay, spanMonth, months, func(m int64) (int64, int64) { return firstDayOfMonth(m), firstDayOfMonth(m+1) - 1 }, monthOfDay},
	} {
		rs := runsOf(up.buckets)
		if err := clear(up.to, rs); err != nil {
			return 0, 0, err
		}
		if sealed == math.MinInt64 {
			continue // no hour is sealed: days and months hold none
		}
		rows := map[rollupKey]*figures{}
		for _, r := range rs {
			lo, _ := up.children(r.first)
			_, hi := up.children(r.last)
			if hi < lo {
				continue
			}
			var rr rollupRow
			err := eachRow(ctx, tx, s.q(`SELECT `+rollupColumns+` FROM rollups WHERE span = $1 AND bucket BETWEEN $2 AND $3`), []any{up.from, lo, hi},
				[]any{&rr.cube, &rr.span, &rr.bucket, &rr.user, &rr.tagset, &rr.model, &rr.provider, &rr.method, &rr.status, &rr.errorType,
					&rr.calls, &rr.errors, &rr.in, &rr.out, &rr.total, &rr.cost, &rr.unpriced, &rr.unpricedTokens, &rr.enc}, func() error {
					k := rr.rollupKey
					k.span, k.bucket = up.to, up.parent(rr.bucket)
					f := rows[k]
					if f == nil {
						f = &figures{}
						rows[k] = f
					}
					return f.merge(&rr.figures, rr.enc)
				})
			if err != nil {
				return 0, 0, err
			}
		}
		if err := put(rows); err != nil {
			return 0, 0, err
		}
	}
	return before, after, nil
}

// checkErased runs, after the deletion committed, the queries that count
// what is left of what it took.
func (s *Store) checkErased(ctx context.Context, g *erased) ([]Check, error) {
	type check struct {
		name, head string
		in         []any
	}
	checks := []check{
		{"records by seq", `SELECT count(*) FROM records WHERE seq IN (`, g.seqs},
		{"records by call ID", `SELECT count(*) FROM records WHERE call_id IN (`, g.callIDs},
		{"record documents", `SELECT count(*) FROM record_docs WHERE seq IN (`, g.seqs},
		{"full-text entries", s.d.textRows(), g.seqs},
		{"tags and metadata", `SELECT count(*) FROM record_attrs WHERE seq IN (`, g.seqs},
		{"scores of the calls", `SELECT count(*) FROM scores WHERE call_id IN (`, g.callIDs},
		{"scores of the conversations", `SELECT count(*) FROM scores WHERE trace_id IN (`, g.traces},
		{"messages no record uses", `SELECT count(*) FROM messages WHERE id IN (`, g.messages},
		{"filter values no record has", `SELECT count(*) FROM names WHERE id IN (`, g.names},
		{"rollup rows of the deleted names", `SELECT count(*) FROM rollups WHERE user_id IN (`, g.names},
	}
	var out []Check
	for _, c := range checks {
		var n int64
		if err := s.countIn(ctx, s.r, &n, c.head, c.in); err != nil {
			return out, s.readErr(err)
		}
		out = append(out, Check{Name: c.name, Query: c.head + "...)", Found: n})
	}
	// The rollups agree with the records in every hour the deletions
	// touched: the calls they count, less those there are.
	var diff int64
	q := s.q(`SELECT (SELECT coalesce(sum(calls), 0) FROM rollups WHERE cube = 0 AND span = $1 AND bucket = $2) -
		(SELECT count(*) FROM records WHERE ts >= $3 AND ts < $4)`)
	for h := range g.hours {
		var n int64
		if err := s.r.QueryRowContext(ctx, q, spanHour, h, h*hourMicros, (h+1)*hourMicros).Scan(&n); err != nil {
			return out, s.readErr(err)
		}
		diff += max(n, -n)
	}
	out = append(out, Check{Name: "rollup calls the records do not account for", Query: q, Found: diff})
	return out, nil
}

// scrub makes what the deletions freed unreadable in the database's
// files, and says what it did.
func (s *Store) scrub(ctx context.Context, tables []string) ([]string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	done, err := s.d.scrub(ctx, s.w, tables)
	return done, s.deleteErr(err)
}

func (s *Store) deleteErr(err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), "store:") {
		return err
	}
	return fmt.Errorf("store: delete from %s: %w", s.url, err)
}

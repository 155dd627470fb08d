package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// How the store keeps a conversation linear (see the package doc):
const (
	// maxChainDepth bounds how many records back a record's args reach
	// through bases; past it a record lists its messages whole. Reading
	// one record then costs at most this many lookups, and a long
	// conversation stores a whole list once every maxChainDepth turns.
	maxChainDepth = 16
	// touchGrain is how far (seconds) a message's last_used may lag the
	// newest record using it: a message is touched at most about once
	// per half of it per trace, and retention keeps this much longer.
	touchGrain = 3600
	// defaultCacheTraces and defaultCacheIDs bound what a store remembers
	// of the traces it wrote last.
	defaultCacheTraces = 4096
	defaultCacheIDs    = 1 << 20
	// maxTextBytes bounds the text one record gives the full-text index.
	maxTextBytes = 1 << 20
	// writeChunk is the most records written in one transaction.
	writeChunk = 4096
)

// WriteResult counts what [Store.Write] did.
type WriteResult struct {
	Written    int // records new to the store
	Duplicates int // records skipped: the store held their call ID already
}

// Write writes records, exactly once by call ID: a record whose call ID
// the store holds already (written before, by any process, or earlier in
// recs) is skipped and counted, so a batch retried after a lost answer
// duplicates nothing. Records are written in transactions of up to 4,096;
// on an error, those before the failing transaction are written and the
// rest are not. Write does not spill: [Store.AppendBatch] is the sink,
// which does.
func (s *Store) Write(ctx context.Context, recs []record.Record) (WriteResult, error) {
	var res WriteResult
	if s.opts.ReadOnly {
		return res, ErrReadOnly
	}
	if s.closed.Load() {
		return res, ErrClosed
	}
	for len(recs) > 0 {
		n := min(len(recs), writeChunk)
		r, err := s.writePrepared(ctx, prepareChunk(recs[:n], nil))
		res.Written += r.Written
		res.Duplicates += r.Duplicates
		if err != nil {
			return res, err
		}
		recs = recs[n:]
	}
	return res, nil
}

// chunk is up to writeChunk records made ready to write: checked, hashed
// and encoded, which needs no database and may run beside another
// chunk's writing (Import does).
type chunk struct {
	ps   []*prep
	dups int // records given twice in it
}

// prepareChunk readies recs, each call ID once. args, when not nil, are
// the elements of each record's Args as record's reader split them
// (Reader.SplitArgs), which also normalized the records.
func prepareChunk(recs []record.Record, args [][][]byte) chunk {
	now := time.Now()
	var c chunk
	inBatch := make(map[string]bool, len(recs))
	var firsts []int
	for i, r := range recs {
		if inBatch[r.CallID] {
			c.dups++
			continue
		}
		inBatch[r.CallID] = true
		firsts = append(firsts, i)
	}
	c.ps = make([]*prep, len(firsts))
	parallel(len(firsts), func(i int) {
		if args != nil {
			c.ps[i] = prepareSplit(recs[firsts[i]], args[firsts[i]], now)
		} else {
			c.ps[i] = prepare(recs[firsts[i]], now)
		}
	})
	return c
}

// writePrepared writes a chunk in one transaction, as Write does.
func (s *Store) writePrepared(ctx context.Context, c chunk) (WriteResult, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return WriteResult{}, ErrClosed
	}
	r, err := s.writeChunk(ctx, c)
	for try := 0; err != nil && try < 5 && s.retryable(err); try++ {
		// Deadlocked with another writer (PostgreSQL chose this one to
		// fail): what the other wrote is held now, and skipped.
		s.dict.reset()
		r, err = s.writeChunk(ctx, c)
	}
	if err != nil {
		// The names and tagsets it gave IDs to were rolled back with it:
		// forget what the dict learnt, which may be them.
		s.dict.reset()
		return r, err
	}
	s.written.Add(uint64(r.Written))
	s.duplicates.Add(uint64(r.Duplicates))
	return r, nil
}

// retryable reports whether a chunk that failed with err is worth
// writing again at once.
func (s *Store) retryable(err error) bool {
	return s.backend.Fault != nil && s.d.retryable(s.backend.Fault(err), err)
}

func ctxAlive(err error) bool {
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// prep is one record on its way into the database.
type prep struct {
	r        record.Record // Args normalized, or nil when split (elems)
	ts, sec  int64         // timestamp in µs and s since the epoch
	provider string
	errType  string
	dims     dims     // its names' IDs (names.go), once resolved
	elems    [][]byte // the elements of Args, views into them
	sums     []uint64 // a keyed hash of each

	seq   int64
	base  *traceEntry // nil: args listed whole
	count int         // elements taken from base
	// whole: the record's references are stored as a list of all its
	// messages, not as base plus its own (the chain is as deep as it may
	// go); its messages are found through base all the same.
	whole bool
	tail  []*message  // the elements after them
	entry *traceEntry // this record, as the next of its trace will see it
	text  []byte
	doc   []byte // its JSON without args (and without its answer), stored
	// out is the record's answer (Output), kept as a message as args'
	// are: it is the message the next call of its conversation sends
	// back, so the two are one row. The doc names it (withOutputRef).
	out *message
}

// message is one element of args being written, by content.
type message struct {
	hash  [16]byte
	body  []byte
	id    int64
	used  int64 // its last_used, once known
	stamp int64 // the last_used the batch's records need of it (touchOf)
}

var sumSeed = maphash.MakeSeed()

// normalize is record.Normalize, a variable for the test that counts it.
var normalize = (*record.Record).Normalize

// prepare readies a record. Its Args are checked and normalized unless
// known to be already: added to the recorder's history, which checked
// them (record.ArgsShaped). The rest needs no normalizing: the record is
// stored as AppendJSON writes it.
func prepare(r record.Record, now time.Time) *prep {
	if !r.ArgsShaped() {
		normalize(&r)
	}
	var elems [][]byte
	record.EachValidElement(r.Args, func(v []byte) bool {
		elems = append(elems, v)
		return true
	})
	return prepareSplit(r, elems, now)
}

// prepareSplit readies a record whose Args are elems (its own Args
// unused): as record's reader decoded and split them, or as prepare
// found them.
func prepareSplit(r record.Record, elems [][]byte, now time.Time) *prep {
	p := &prep{r: r, elems: elems, sums: make([]uint64, len(elems))}
	for i, v := range elems {
		p.sums[i] = maphash.Bytes(sumSeed, v)
	}
	t, err := record.ParseTime(r.Timestamp)
	if err != nil {
		t = now // a record that says nothing of its time is kept as of its writing
	}
	p.ts = t.UnixMicro()
	p.sec = t.Unix()
	p.provider = r.Provider()
	p.errType = r.FailureType()
	doc := r
	doc.Args, doc.Output = nil, nil // kept as references
	p.doc = doc.AppendJSON(make([]byte, 0, 512))
	if r.Output != nil {
		body := r.Output.AppendJSON(nil)
		p.out = &message{hash: contentKey(p.sec, body), body: body}
	} else {
		p.doc = encodeDoc(p.doc) // else once its answer's ID is known
	}
	return p
}

func (s *Store) writeChunk(ctx context.Context, c chunk) (WriteResult, error) {
	res := WriteResult{Duplicates: c.dups}
	ps := slices.Clone(c.ps)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return WriteResult{}, err
	}
	defer tx.Rollback()

	held, err := s.heldCallIDs(ctx, tx, ps)
	if err != nil {
		return WriteResult{}, err
	}
	if len(held) > 0 {
		ps = slices.DeleteFunc(ps, func(p *prep) bool { return held[p.r.CallID] })
		res.Duplicates += len(held)
	}
	if len(ps) == 0 {
		return res, tx.Commit()
	}
	seqs, err := s.allocSeqs(ctx, tx, len(ps))
	if err != nil {
		return WriteResult{}, err
	}
	for i, p := range ps {
		p.seq = seqs[i]
	}
	if err := s.findBases(ctx, tx, ps); err != nil {
		return WriteResult{}, err
	}
	if err := s.resolveMessages(ctx, tx, ps); err != nil {
		return WriteResult{}, err
	}
	if err := s.resolveNames(ctx, tx, ps); err != nil {
		return WriteResult{}, err
	}
	kept, err := s.insertRecords(ctx, tx, ps)
	if err != nil {
		return WriteResult{}, err
	}
	res.Duplicates += len(ps) - len(kept)
	ps = kept
	if err := s.rollup(ctx, tx, ps); err != nil {
		return WriteResult{}, err
	}
	if err := tx.Commit(); err != nil {
		return WriteResult{}, err
	}
	for _, p := range ps {
		if p.entry != nil {
			s.traces.put(p.entry)
		}
	}
	res.Written = len(ps)
	return res, nil
}

// heldCallIDs returns the call IDs of ps the store holds already.
func (s *Store) heldCallIDs(ctx context.Context, tx *sql.Tx, ps []*prep) (map[string]bool, error) {
	held := map[string]bool{}
	ids := make([]any, len(ps))
	for i, p := range ps {
		ids[i] = p.r.CallID
	}
	var id string
	err := s.eachRowIn(ctx, tx, `SELECT call_id FROM records WHERE call_id IN (`, ids, `)`, []any{&id}, func() error {
		held[id] = true
		return nil
	})
	return held, err
}

// allocSeqs returns n new record sequence numbers, ascending.
func (s *Store) allocSeqs(ctx context.Context, tx *sql.Tx, n int) ([]int64, error) {
	return s.d.allocSeqs(ctx, tx, n)
}

// findBases picks, for each record of a trace, the record its args
// continue: the trace's previous record in this batch, or the one this
// store wrote last, if the database still holds it. It fills each prep's
// base, count, tail (unresolved) and entry.
func (s *Store) findBases(ctx context.Context, tx *sql.Tx, ps []*prep) error {
	// The cached records the batch would build on must still be there:
	// retention, here or in another process, may have taken them.
	var cached []any
	asked := map[int64]bool{}
	for _, p := range ps {
		if p.r.TraceID == "" {
			continue
		}
		if e := s.traces.get(p.r.TraceID); e != nil && !asked[e.seq] {
			asked[e.seq] = true
			cached = append(cached, e.seq)
		}
	}
	alive := map[int64]bool{}
	var seq int64
	err := s.eachRowIn(ctx, tx, `SELECT seq FROM record_docs WHERE seq IN (`, cached, `)`, []any{&seq}, func() error {
		alive[seq] = true
		return nil
	})
	if err != nil {
		return err
	}
	latest := map[string]*traceEntry{} // this batch's, ahead of the cache
	for _, p := range ps {
		p.base, p.count, p.whole, p.entry = nil, 0, false, nil // a chunk written again starts afresh
		var base *traceEntry
		if t := p.r.TraceID; t != "" {
			if e, ok := latest[t]; ok {
				base = e
			} else if e := s.traces.get(t); e != nil && alive[e.seq] {
				base = e
			}
		}
		if base != nil {
			k := 0
			for k < len(p.sums) && k < len(base.sums) && p.sums[k] == base.sums[k] {
				k++
			}
			if k > 0 {
				p.base, p.count, p.whole = base, k, base.depth >= maxChainDepth
			}
		}
		if p.r.TraceID != "" {
			depth := 0
			if p.base != nil && !p.whole {
				depth = p.base.depth + 1
			}
			p.entry = &traceEntry{trace: p.r.TraceID, seq: p.seq, depth: depth, sums: p.sums, touched: touchOf(p.sec)}
			latest[p.r.TraceID] = p.entry
		}
	}
	// What each record adds, addressed, and the text it gives the index.
	parallel(len(ps), func(i int) {
		p := ps[i]
		p.tail = make([]*message, 0, len(p.elems)-p.count)
		for _, el := range p.elems[p.count:] {
			p.tail = append(p.tail, &message{hash: contentKey(p.sec, el), body: el})
		}
		p.text = appendText(nil, p)
	})
	return nil
}

// parallel calls fn(0..n-1) on as many goroutines as there are CPUs,
// when n is worth it: the Go side of a batch (checking, hashing,
// encoding) then takes every core, not only the one the database's work
// runs on.
func parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/32)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// contentKey addresses a message: the hour (of the record that brings it)
// in 4 bytes, then the first 12 bytes of the SHA-256 of its bytes. The
// hour first keeps the index of addresses growing at one end, where its
// pages are in the cache, instead of dirtying pages all over it at every
// batch (a commit writes every page it dirtied, and a random index of a
// million messages dirties most of its pages at every batch). The price:
// a message repeated over many hours (a shared system prompt) is stored
// once per hour it appears in, not once in all; within a conversation
// nothing changes, as what a call resends is never looked up (the base
// record's references are taken as they are).
func contentKey(sec int64, b []byte) [16]byte {
	var k [16]byte
	binary.BigEndian.PutUint32(k[:4], uint32(max(sec, 0)/3600))
	sum := sha256.Sum256(b)
	copy(k[4:], sum[:12])
	return k
}

// touchOf is the last_used a record of second sec gives its messages:
// sec, rounded up to half a touchGrain, so that a write's touches take a
// few values.
func touchOf(sec int64) int64 {
	const half = touchGrain / 2
	return -floorDiv(-sec, half) * half
}

// resolveMessages finds or inserts every message the batch adds, fills
// each prep's entry with its whole list of IDs, and touches what needs
// it: every message of the batch's records ends with last_used no more
// than touchGrain before the newest record using it (each record's own
// time, however long the batch spans: an import of a year), which is
// what lets retention delete the messages no kept record uses
// (retention.go).
func (s *Store) resolveMessages(ctx context.Context, tx *sql.Tx, ps []*prep) error {
	byHash := map[[16]byte]*message{}
	var order []*message
	// one keeps one message of each content, stamped with the newest
	// record of the batch that uses it.
	one := func(m *message, stamp int64) *message {
		if seen, ok := byHash[m.hash]; ok {
			seen.stamp = max(seen.stamp, stamp)
			return seen
		}
		m.stamp = stamp
		byHash[m.hash] = m
		order = append(order, m)
		return m
	}
	for _, p := range ps {
		stamp := touchOf(p.sec)
		for i, m := range p.tail {
			p.tail[i] = one(m, stamp)
		}
		if p.out != nil {
			p.out = one(p.out, stamp)
		}
	}
	// Sorted by hash, so that replicas inserting the same messages take
	// their row locks in the same order and never deadlock.
	slices.SortFunc(order, func(a, b *message) int { return strings.Compare(string(a.hash[:]), string(b.hash[:])) })
	// Most messages are new: insert them all, and look up only those
	// the database held already (or another writer inserted meanwhile).
	if err := s.insertMessages(ctx, tx, order); err != nil {
		return err
	}
	var held []*message
	for _, m := range order {
		if m.id == 0 {
			held = append(held, m)
		}
	}
	if err := s.findMessages(ctx, tx, held); err != nil {
		return err
	}
	for _, m := range held {
		if m.id == 0 {
			return fmt.Errorf("store: message %x neither found nor inserted", m.hash)
		}
	}
	touch := map[int64]int64{} // message → the last_used it needs
	for _, m := range order {
		if m.used < m.stamp-touchGrain/2 {
			touch[m.id] = max(touch[m.id], m.stamp)
		}
	}
	for _, p := range ps {
		var ids []int64
		if p.base != nil {
			ids = append(ids, p.base.ids[:p.count]...)
			if stamp := touchOf(p.sec); p.base.touched < stamp-touchGrain/2 {
				for _, id := range p.base.ids[:p.count] {
					touch[id] = max(touch[id], stamp)
				}
			}
		}
		for _, m := range p.tail {
			ids = append(ids, m.id)
		}
		if p.entry != nil {
			p.entry.ids = ids
		} else {
			p.entry = &traceEntry{seq: p.seq, ids: ids} // not cached: no trace
		}
	}
	if len(touch) == 0 {
		return nil
	}
	byStamp := map[int64][]any{}
	for id, stamp := range touch {
		byStamp[stamp] = append(byStamp[stamp], id)
	}
	stamps := slices.Sorted(maps.Keys(byStamp))
	for _, stamp := range stamps {
		ids := byStamp[stamp]
		slices.SortFunc(ids, func(a, b any) int { return cmpInt(a.(int64), b.(int64)) })
		// Every row is updated (to the greater of the two), so that the
		// count tells whether retention deleted one meanwhile.
		err := chunked(ids, 500, func(part []any) error {
			args := append([]any{stamp}, part...)
			res, err := tx.ExecContext(ctx, s.q(`UPDATE messages SET last_used = `+s.d.greatest()+`(last_used, $1) WHERE id IN (`+placeholders(2, len(part))+`)`), args...)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err == nil && n != int64(len(part)) {
				return fmt.Errorf("store: %d of %d messages were deleted while being written (retention ran meanwhile); write again", int64(len(part))-n, len(part))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// findMessages sets the ID and last_used of each message the database
// holds.
func (s *Store) findMessages(ctx context.Context, tx *sql.Tx, ms []*message) error {
	if len(ms) == 0 {
		return nil
	}
	byHash := make(map[[16]byte]*message, len(ms))
	keys := make([]any, len(ms))
	for i, m := range ms {
		byHash[m.hash] = m
		keys[i] = m.hash[:]
	}
	var id, used int64
	var h []byte
	return s.eachRowIn(ctx, tx, `SELECT id, hash, last_used FROM messages WHERE hash IN (`, keys, `)`, []any{&id, &h, &used}, func() error {
		if m := byHash[[16]byte(h)]; m != nil && len(h) == 16 {
			m.id, m.used = id, used
		}
		return nil
	})
}

// insertMessages inserts messages the database did not hold; one another
// writer inserted meanwhile is left with ID 0.
func (s *Store) insertMessages(ctx context.Context, tx *sql.Tx, ms []*message) error {
	byHash := make(map[[16]byte]*message, len(ms))
	for _, m := range ms {
		byHash[m.hash] = m
	}
	for len(ms) > 0 {
		// Bounded by rows and by bytes, so that one statement stays a
		// reasonable size whatever the messages.
		n, size := 0, 0
		for n < len(ms) && n < 2000 && (n == 0 || size+len(ms[n].body) < 8<<20) {
			size += len(ms[n].body)
			n++
		}
		part := ms[:n]
		ms = ms[n:]
		rows := make([][]any, len(part))
		for i, m := range part {
			rows[i] = []any{m.hash[:], m.stamp, string(m.body)}
		}
		err := s.insertMany(ctx, tx, messagesInsert, rows, func(rs *sql.Rows) error {
			var id int64
			var h []byte
			if err := rs.Scan(&id, &h); err != nil {
				return err
			}
			if m := byHash[[16]byte(h)]; m != nil && len(h) == 16 {
				m.id, m.used = id, m.stamp
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// How each table's rows are inserted (insert.go).
var (
	recordsInsert = &insertSpec{table: "records", columns: []column{
		{"seq", colInt}, {"call_id", colText}, {"ts", colInt}, {"trace_id", colText}, {"user_id", colText}, {"method", colText},
		{"provider", colText}, {"model", colText}, {"status", colText}, {"error_type", colText}, {"duration_ms", colFloat},
		{"cost_usd", colFloat}, {"input_tokens", colInt}, {"output_tokens", colInt}, {"total_tokens", colInt}, {"tagset", colInt},
	}, tail: ` ON CONFLICT (call_id) DO NOTHING`, returning: `RETURNING seq`}
	messagesInsert = &insertSpec{table: "messages", columns: []column{{"hash", colBytes}, {"last_used", colInt}, {"body", colText}},
		tail: ` ON CONFLICT (hash) DO NOTHING`, returning: `RETURNING id, hash`}
	docsInsert = &insertSpec{table: "record_docs", columns: []column{
		{"seq", colInt}, {"base_seq", colInt}, {"base_count", colInt}, {"refs", colBytes}, {"doc", colBytes}}}
	attrsInsert = &insertSpec{table: "record_attrs", columns: []column{{"name", colText}, {"value", colText}, {"seq", colInt}}}
)

// record_attrs holds a record's tags (name attrTag, value the tag) and
// metadata (name attrMeta+key).
const (
	attrTag  = "#"
	attrMeta = "m:"
)

// insertRecords inserts the records of ps and returns those it inserted:
// all, unless another writer took some call IDs since heldCallIDs looked.
func (s *Store) insertRecords(ctx context.Context, tx *sql.Tx, ps []*prep) ([]*prep, error) {
	// records
	rows := make([][]any, 0, len(ps))
	for _, p := range ps {
		r := &p.r
		var in, out, total int64
		if r.Usage != nil {
			in, out, total = int64(r.Usage.InputTokens), int64(r.Usage.OutputTokens), int64(r.Usage.TotalTokens)
		}
		var cost any
		if r.Cost != nil {
			cost = r.Cost.USD
		}
		var tagset any
		if p.dims.tagset != 0 {
			tagset = p.dims.tagset
		}
		rows = append(rows, []any{p.seq, r.CallID, p.ts, null(r.TraceID), null(r.UserID), r.MethodName, p.provider,
			null(r.Model), r.Outcome.Status, null(p.errType), nullFloat(r.DurationMS), cost, in, out, total, tagset})
	}
	// In call ID order, so that writers inserting the same records take
	// their locks in the same order.
	slices.SortFunc(rows, func(a, b []any) int { return strings.Compare(a[1].(string), b[1].(string)) })
	inserted := make(map[int64]bool, len(ps))
	err := s.insertMany(ctx, tx, recordsInsert, rows, func(rs *sql.Rows) error {
		var seq int64
		err := rs.Scan(&seq)
		inserted[seq] = true
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(inserted) < len(ps) {
		// Another writer wrote some of these call IDs meanwhile: they are
		// its, and a record here that built on one stands alone instead.
		taken := map[int64]bool{}
		kept := ps[:0]
		for _, p := range ps {
			if !inserted[p.seq] {
				taken[p.seq] = true
				continue
			}
			if p.base != nil && taken[p.base.seq] {
				p.whole = true // its messages are found; its base is another writer's
				if p.entry != nil {
					p.entry.depth = 0
				}
			}
			kept = append(kept, p)
		}
		ps = kept
	}
	// record_docs
	parallel(len(ps), func(i int) {
		if p := ps[i]; p.out != nil {
			p.doc = encodeDoc(withOutputRef(p.doc, p.out.id))
		}
	})
	rows = rows[:0]
	for _, p := range ps {
		var base any
		var prev int64
		count := 0
		if p.base != nil && !p.whole {
			base, count = p.base.seq, p.count
			prev = p.base.ids[p.count-1]
		}
		refs := appendRefs([]byte{}, prev, p.entry.ids[count:])
		rows = append(rows, []any{p.seq, base, count, refs, p.doc})
	}
	if err := s.insertMany(ctx, tx, docsInsert, rows, nil); err != nil {
		return nil, err
	}
	// tags, metadata, text
	var attrs, text [][]any
	for _, p := range ps {
		seen := map[string]bool{}
		for _, t := range p.r.Tags {
			if !seen[t] {
				seen[t] = true
				attrs = append(attrs, []any{attrTag, t, p.seq})
			}
		}
		for k, v := range p.r.Metadata {
			attrs = append(attrs, []any{attrMeta + k, v, p.seq})
		}
		if len(p.text) > 0 {
			text = append(text, []any{p.seq, string(p.text)})
		}
	}
	if err := s.insertMany(ctx, tx, attrsInsert, attrs, nil); err != nil {
		return nil, err
	}
	return ps, s.insertMany(ctx, tx, s.d.textInsert(), text, nil)
}

// resolveNames gives each record of ps the IDs of its names and of its
// tagset, adding those the store has not had to the names
// tables.
func (s *Store) resolveNames(ctx context.Context, tx *sql.Tx, ps []*prep) error {
	if err := s.checkNamesEpoch(ctx, tx); err != nil {
		return err
	}
	want := map[nameKey]bool{}
	for _, p := range ps {
		r := &p.r
		for _, n := range []nameKey{{kindUser, r.UserID}, {kindModel, r.Model}, {kindProvider, p.provider},
			{kindMethod, r.MethodName}, {kindStatus, r.Outcome.Status}, {kindErrorType, p.errType}} {
			if n.name != "" {
				want[n] = true
			}
		}
		for _, t := range r.Tags {
			if t != "" {
				want[nameKey{kindTag, t}] = true
			}
		}
	}
	if err := s.dict.ensure(ctx, s, tx, want); err != nil {
		return err
	}
	sets := map[string]bool{}
	keys := make([]string, len(ps))
	for i, p := range ps {
		r := &p.r
		id := func(k kind, name string) int32 { v, _ := s.dict.id(k, name); return v }
		p.dims = dims{user: id(kindUser, r.UserID), model: id(kindModel, r.Model), provider: id(kindProvider, p.provider),
			method: id(kindMethod, r.MethodName), status: id(kindStatus, r.Outcome.Status), errorType: id(kindErrorType, p.errType)}
		var tags []int32
		for _, t := range r.Tags {
			if t != "" {
				tags = append(tags, id(kindTag, t))
			}
		}
		if len(tags) > 0 {
			keys[i] = tagsetKey(tags)
			sets[keys[i]] = true
		}
	}
	want = map[nameKey]bool{}
	for k := range sets {
		want[nameKey{kindTagset, k}] = true
	}
	if err := s.dict.ensure(ctx, s, tx, want); err != nil {
		return err
	}
	for i, p := range ps {
		p.dims.tagset, _ = s.dict.id(kindTagset, keys[i])
	}
	return nil
}

// rowsHook, when a test sets it, sees every row the store inserts, with
// the head of its INSERT ("INSERT INTO t (a, b) VALUES "): what the
// ingest benchmark's raw baseline inserts again, with nothing of the
// store around it.
var rowsHook func(head string, rows [][]any)

// tuple is "($first, ..., $first+n-1)".
func tuple(first, n int) string {
	return "(" + placeholders(first, n) + ")"
}

// tuple is a row of n parameters from the first-th, as the database
// takes them in a statement that needs no rewriting by q (which costs
// more than the statement, for a multi-row INSERT).
func (s *Store) tuple(first, n int) string { return s.d.tuple(first, n) }

// placeholders is "$first, ..., $first+n-1".
func placeholders(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(first + i))
	}
	return b.String()
}

// chunked calls fn with successive parts of at most n of vs.
func chunked(vs []any, n int, fn func([]any) error) error {
	for len(vs) > 0 {
		part := vs[:min(n, len(vs))]
		vs = vs[len(part):]
		if err := fn(part); err != nil {
			return err
		}
	}
	return nil
}

func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullFloat(f float64) any {
	if f == 0 || f != f {
		return nil
	}
	return f
}

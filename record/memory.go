package record

import (
	"bytes"
	"context"
	"hash/maphash"
	"sync"
)

// DefaultMemoryCapacity is the capacity of a [Memory] made with a
// capacity of zero or less.
const DefaultMemoryCapacity = 1000

// DefaultMemoryMaxBytes bounds the bytes a [Memory] holds unless told
// otherwise: about a thousand calls of 256 KiB that share nothing.
const DefaultMemoryMaxBytes = 256 << 20

// MemoryOptions configures [NewMemoryWith]. Zero fields are the defaults.
type MemoryOptions struct {
	// Capacity is the most records held; default [DefaultMemoryCapacity].
	Capacity int
	// MaxBytes bounds what the records held take: their Args (only what
	// each adds to the previous record of its trace), Kwargs, Output,
	// ProgramSource and error message. Past it the oldest records are
	// dropped, as when the ring is full. Default [DefaultMemoryMaxBytes].
	MaxBytes int64
}

// Memory keeps the latest records in a bounded ring: when it is full, or
// holds more bytes than its bound, the oldest record is dropped and
// counted. It is safe for concurrent use.
// What comes out are normalized copies (see [Record.Normalize]), and what
// goes in through Append is copied, so no caller can change another's view
// of the history.
//
// A conversation resends itself on every call, so the Args of a trace's
// records mostly repeat the previous record's. Memory keeps only what each
// record adds to the previous record of its trace (found by comparing
// hashes of their elements, see [ArgsPrefix]), and puts Args back together
// when they are read: a conversation costs memory in proportion to its
// length, not to its square.
type Memory struct {
	// linkMu orders adding: it guards the shapes, so that comparing a
	// record's Args with the previous record's is done outside mu, which
	// readers take.
	linkMu   sync.Mutex
	mu       sync.RWMutex
	ring     []entry // the records held are ring[start], ... (wrapping), n of them
	start, n int
	cap      int
	bytes    int64 // what the records held take (see MemoryOptions.MaxBytes)
	maxBytes int64
	dropped  uint64
	traces   map[string]*traceState
	// shared holds, by a hash of their bytes, the Args of the first
	// records of traces held, so that identical ones (the same request
	// made by independent calls: a probe, a batch job, a retry recorded
	// apart) are held once. Guarded by linkMu.
	shared map[uint64]*sharedArgs
	// answer is heldOnceLocked's buffer. Guarded by linkMu.
	answer []byte
}

// sharedArgs is the Args of first records that are the same bytes, held
// once, and how many records held share them.
type sharedArgs struct {
	b    []byte
	key  uint64
	refs int
}

// entry is a record as the ring holds it (heldRecord): with its Args, or
// with args, what they add to an earlier record's, and Args nil.
type entry struct {
	heldRecord
	args   *argsNode
	shared *sharedArgs // Args are these, shared with other first records
	bytes  int64       // counted against MaxBytes
}

// argsNode holds the Args of a record as what they add to those of an
// earlier record of the trace: their content (the Args without their
// brackets) is the first n bytes of the parent's content, then rest. A
// node without a parent holds its whole content in rest. Nodes never
// change once made, and outlive the records they came from as long as a
// later record is made of them: dropping the oldest record copies nothing.
type argsNode struct {
	parent *argsNode
	n      int    // bytes of the parent's content this one begins with
	rest   []byte // what follows them: nothing, or ",..." (the whole content at a root)
	size   int    // bytes of the content
}

// newArgsNode returns the node of content rest following the first n bytes
// of parent's. The parent kept is the oldest node that has those n bytes,
// so that a conversation that drops its middle messages lets the dropped
// ones go.
func newArgsNode(parent *argsNode, n int, rest []byte) *argsNode {
	for parent != nil && parent.parent != nil && n <= parent.n {
		parent = parent.parent
	}
	if parent == nil {
		n = 0
	}
	return &argsNode{parent: parent, n: n, rest: rest, size: n + len(rest)}
}

// appendArgs appends the Args node holds: its content, bracketed.
func (node *argsNode) appendArgs(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, node.size+2)...)
	out := dst[start:]
	out[0], out[len(out)-1] = '[', ']'
	// Fill out[1 : 1+end] from the node and its ancestors: each has, after
	// the bytes it shares with its parent, its rest.
	end := node.size
	for cur := node; cur != nil && end > 0; cur = cur.parent {
		if end > cur.n {
			copy(out[1+cur.n:1+end], cur.rest[:end-cur.n])
			end = cur.n
		}
	}
	return dst
}

// traceState is what the history knows of one trace of the records held.
type traceState struct {
	count int
	// newest holds the Args of the trace's newest record; shape is theirs,
	// and spare the previous shape, whose room the next one reuses. The
	// three are guarded by linkMu.
	newest       *argsNode
	shape, spare argsShape
	// lazy holds the Args of the trace's only record, not shaped yet: most
	// traces of independent calls never get a second record, and shaping
	// walks every byte. The second record shapes them (lazyID is their
	// call ID). Guarded by linkMu.
	lazy   []byte
	lazyID string
}

// NewMemory returns an empty history holding at most capacity records;
// capacity <= 0 means [DefaultMemoryCapacity].
func NewMemory(capacity int) *Memory {
	return NewMemoryWith(MemoryOptions{Capacity: capacity})
}

// NewMemoryWith returns an empty history bounded as o says.
func NewMemoryWith(o MemoryOptions) *Memory {
	if o.Capacity <= 0 {
		o.Capacity = DefaultMemoryCapacity
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMemoryMaxBytes
	}
	return &Memory{cap: o.Capacity, maxBytes: o.MaxBytes}
}

// Append stores a copy of r, dropping the oldest record when full (so a
// recorder may lend it records whose Args it then reuses).
func (m *Memory) Append(_ context.Context, r Record) error {
	m.add(r.Clone(), false, false)
	return nil
}

// Add appends r as the newest turn of its trace's conversation and returns
// it with the history telemetry filled in: HistoryRecordAppended set, and
// ConversationHistorySize the number of records of r's trace held, r
// included. The record returned also carries what its Args share with the
// previous record of its trace, which [JSONL] can write as an args_prefix.
//
// Unlike Append, Add takes r as it is, without a copy: the caller must not
// modify r's slices afterwards, nor those of the record returned, which
// shares them with the history. The recorder uses Add on its hot path.
func (m *Memory) Add(r Record) Record {
	return m.add(r, true, false)
}

// AddBorrowed is [Memory.Add] for a record whose Args the caller reuses
// once AddBorrowed returns (the recorder builds them in a pool buffer):
// the history keeps a copy of what it holds of them, which for a record
// that extends the previous record of its trace is only what it adds.
// The record returned shares r.Args, so it is good only until the caller
// reuses them; r's other slices are taken as Add takes them.
func (m *Memory) AddBorrowed(r Record) Record {
	return m.add(r, true, true)
}

func (m *Memory) add(r Record, telemetry, borrowed bool) Record {
	if telemetry {
		r.HistoryRecordAppended = true
	}
	m.linkMu.Lock()
	defer m.linkMu.Unlock()

	// Compare with the previous record of the trace outside mu: hashing a
	// long conversation's Args takes a while, and readers should not wait.
	m.mu.RLock()
	st := m.traces[r.TraceID]
	m.mu.RUnlock()
	var prev, shape *argsShape
	var base *argsNode
	first := st == nil && r.ArgsPrefix == nil // shaped later, if ever (traceState.lazy)
	if st != nil {
		if st.lazy != nil {
			m.shapeLazy(r.TraceID, st)
		}
		prev, shape, base = &st.shape, &st.spare, st.newest
		if prev.callID == "" {
			prev = nil
		}
	} else if !first {
		shape = new(argsShape)
	}
	r.link = nil
	switch {
	case first:
	case r.ArgsPrefix == nil:
		r.link = link(&r, prev, shape)
	default: // partial Args are no base for the next record
		shape.callID, shape.ends, shape.sums = "", shape.ends[:0], shape.sums[:0]
	}
	e := entry{heldRecord: hold(&r)}
	var node *argsNode
	switch {
	case r.link != nil && base != nil:
		// Keep only what r adds to the previous record.
		size := r.link.size
		node = newArgsNode(base, size, append([]byte(nil), r.Args[1+size:len(r.Args)-1]...))
		e.Args, e.args = nil, node
	case first:
		// A base for the next record if it shapes: a view of the Args it
		// keeps, held once for every first record with the same bytes.
		e.Args, e.shared = m.share(r.Args, borrowed)
		if n := len(e.Args); n >= 2 && e.Args[0] == '[' && e.Args[n-1] == ']' {
			node = newArgsNode(nil, 0, e.Args[1:n-1])
		}
	case shape.callID != "":
		// A base for the next record: a view of the Args it keeps.
		if borrowed {
			e.Args = bytes.Clone(r.Args)
		}
		node = newArgsNode(nil, 0, e.Args[1:len(e.Args)-1])
	case borrowed:
		e.Args = bytes.Clone(r.Args)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.traces == nil {
		m.traces = make(map[string]*traceState)
	}
	if m.n == m.cap {
		m.dropOldestLocked()
	}
	held := m.traces[r.TraceID]
	if held == nil {
		held = &traceState{}
		m.traces[r.TraceID] = held
	}
	held.count++
	if telemetry {
		r.ConversationHistorySize = held.count
		e.ConversationHistorySize = held.count
	}
	if e.args != nil {
		m.heldOnceLocked(r.TraceID, e.args.rest)
	}
	held.newest = node
	if first {
		held.lazy, held.lazyID = e.Args, r.CallID
		if held.lazy == nil {
			held.lazy = []byte{} // shaped, and found wanting, by the next record
		}
	} else {
		held.shape, held.spare = *shape, held.shape
	}
	e.bytes = e.payload()
	if e.args != nil {
		e.bytes += int64(len(e.args.rest))
	}
	m.pushLocked(e)
	for m.bytes > m.maxBytes && m.n > 1 {
		m.dropOldestLocked()
	}
	return r
}

// heldOnceLocked holds the answer of the trace's newest record once: when
// added, what the next record adds to its args (rest) carries it back, as
// the same bytes (the message model has one encoding), so the record
// reads its answer from those bytes and the Message it held goes. A
// conversation of short turns held each answer twice otherwise (4.5x its
// text at 200-byte turns). m.mu must be held for writing, and m.linkMu.
func (m *Memory) heldOnceLocked(trace string, rest []byte) {
	const look = 64 // the previous record of a trace is near the newest, but for many interleaved traces
	for i := m.n - 1; i >= 0 && i >= m.n-look; i-- {
		prev := &m.ring[(m.start+i)%len(m.ring)]
		if prev.TraceID != trace {
			continue
		}
		if prev.Output == nil || prev.outputIn != nil {
			return
		}
		m.answer = prev.Output.AppendJSON(m.answer[:0])
		at := bytes.Index(rest, m.answer)
		if at < 0 {
			return
		}
		freed := int64(prev.Output.size())
		prev.outputIn, prev.Output = rest[at:at+len(m.answer):at+len(m.answer)], nil
		prev.bytes -= freed
		m.bytes -= freed
		return
	}
}

// share returns args as the history holds them for a trace's first
// record: the bytes of an identical first record already held, else
// args (a copy when borrowed), now shared. m.linkMu must be held.
func (m *Memory) share(args []byte, borrowed bool) ([]byte, *sharedArgs) {
	key := maphash.Bytes(shapeSeed, args)
	if sh := m.shared[key]; sh != nil && bytes.Equal(sh.b, args) {
		sh.refs++
		return sh.b, sh
	}
	if borrowed {
		args = bytes.Clone(args)
	}
	if m.shared == nil {
		m.shared = make(map[uint64]*sharedArgs)
	}
	if m.shared[key] != nil {
		return args, nil // another first record's, by a rare collision: not shared
	}
	sh := &sharedArgs{b: args, key: key, refs: 1}
	m.shared[key] = sh
	return args, sh
}

// shapeLazy shapes the Args of a trace's only record (traceState.lazy),
// now that a second record may extend them, as link would have shaped
// them when they came: when they are not in the form AppendJSON writes
// (spaces, lines), the record held gets them normalized, so that what
// the next record shares is what a JSONL line holds. m.linkMu must be
// held.
func (m *Memory) shapeLazy(trace string, st *traceState) {
	args, id := st.lazy, st.lazyID
	st.lazy, st.lazyID = nil, ""
	st.shape.callID = ""
	if _, ok := shapeArgs(args, nil, &st.shape); ok {
		st.shape.callID = id
		return
	}
	norm := appendRawContainer(nil, args, '[')
	if _, ok := shapeArgs(norm, nil, &st.shape); !ok {
		st.shape.ends, st.shape.sums = st.shape.ends[:0], st.shape.sums[:0]
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := m.n - 1; i >= 0; i-- {
		e := &m.ring[(m.start+i)%len(m.ring)]
		if e.TraceID != trace {
			continue
		}
		if e.CallID == id && e.args == nil {
			m.bytes += int64(len(norm) - len(e.Args))
			e.bytes += int64(len(norm) - len(e.Args))
			e.Args = norm
			st.newest = newArgsNode(nil, 0, norm[1:len(norm)-1])
			st.shape.callID = id
		}
		break // the trace's newest record is the one shaped, or it is gone
	}
	if st.shape.callID == "" {
		st.shape.ends, st.shape.sums = st.shape.ends[:0], st.shape.sums[:0]
	}
}

// pushLocked stores e as the newest record.
func (m *Memory) pushLocked(e entry) {
	if m.n == len(m.ring) {
		// Every slot is taken, and there is room to grow: by a quarter, in
		// order. A slot is a whole record (over 600 bytes), and a history
		// that doubled would hold up to as many empty slots as records.
		grown := make([]entry, min(max(m.n+m.n/4, 16), m.cap))
		for i := range m.n {
			grown[i] = m.ring[(m.start+i)%len(m.ring)]
		}
		m.ring, m.start = grown, 0
	}
	m.ring[(m.start+m.n)%len(m.ring)] = e
	m.n++
	m.bytes += e.bytes
}

// dropOldestLocked drops the oldest record. What later records of its
// trace are made of stays, in their args nodes: nothing is copied.
func (m *Memory) dropOldestLocked() {
	old := &m.ring[m.start]
	held := m.traces[old.TraceID]
	if held.count--; held.count == 0 {
		delete(m.traces, old.TraceID)
	}
	m.bytes -= old.bytes
	if sh := old.shared; sh != nil {
		if sh.refs--; sh.refs == 0 {
			delete(m.shared, sh.key)
		}
	}
	*old = entry{}
	m.start = (m.start + 1) % len(m.ring)
	m.n--
	m.dropped++
}

// TraceLen returns how many records of one trace are held.
func (m *Memory) TraceLen(traceID string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if st := m.traces[traceID]; st != nil {
		return st.count
	}
	return 0
}

// Records returns copies of the records held, oldest first.
func (m *Memory) Records() []Record { return m.collect("", false) }

// Trace returns copies of the records of one trace, oldest first.
func (m *Memory) Trace(traceID string) []Record { return m.collect(traceID, true) }

// TraceTail returns copies of the last n records of one trace, oldest
// first, and how many records of that trace are held in all. It is the
// cheap way to preview a conversation: only the tail is copied.
func (m *Memory) TraceTail(traceID string, n int) (tail []Record, total int) {
	return m.tail(traceID, n, true)
}

// TraceSummaries is TraceTail without the payloads: the records come
// without Args, Kwargs, ProgramSource and Output,
// which are up to hundreds of KiB each, for previews and dashboards that
// show what happened, not what was said.
func (m *Memory) TraceSummaries(traceID string, n int) (tail []Record, total int) {
	return m.tail(traceID, n, false)
}

func (m *Memory) tail(traceID string, n int, payload bool) (tail []Record, total int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if st := m.traces[traceID]; st != nil {
		total = st.count
	}
	var held []*entry // newest first
	for i := m.n - 1; i >= 0 && len(held) < min(n, total); i-- {
		if e := &m.ring[(m.start+i)%len(m.ring)]; e.TraceID == traceID {
			held = append(held, e)
		}
	}
	tail = make([]Record, 0, len(held))
	var prev *entry
	var prevArgs []byte
	for i := len(held) - 1; i >= 0; i-- {
		e := held[i]
		if !payload {
			r := e.record()
			tail = append(tail, summary(&r))
			continue
		}
		c := copyOf(e, prev, prevArgs)
		prev, prevArgs = e, c.Args
		tail = append(tail, c)
	}
	return tail, total
}

// summary copies r without its payloads.
func summary(r *Record) Record {
	c := *r
	c.Args, c.Kwargs, c.ProgramSource, c.Output = nil, nil, "", nil
	return c.Clone()
}

func (m *Memory) collect(traceID string, oneTrace bool) []Record {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Record, 0, m.n)
	type copied struct {
		e    *entry
		args []byte
	}
	last := map[string]copied{} // each trace's latest record copied, and its Args
	for i := range m.n {
		e := &m.ring[(m.start+i)%len(m.ring)]
		if oneTrace && e.TraceID != traceID {
			continue
		}
		prev := last[e.TraceID]
		c := copyOf(e, prev.e, prev.args)
		last[e.TraceID] = copied{e, c.Args}
		out = append(out, c)
	}
	return out
}

// copyOf returns a normalized copy of e's record with its Args whole. When
// e's Args follow those of prev, whose Args whole are prevArgs, they are
// put together from prevArgs: one copy, however long the conversation.
func copyOf(e, prev *entry, prevArgs []byte) Record {
	r := e.record()
	if e.args == nil {
		return normalized(&r)
	}
	c := r.Clone()
	c.Normalize()
	node := e.args
	if prev != nil && prev.args != nil && node.parent == prev.args && prevArgs != nil {
		args := make([]byte, 0, node.size+2)
		args = append(args, prevArgs[:1+node.n]...)
		args = append(args, node.rest...)
		c.Args = append(args, ']')
		return c
	}
	c.Args = node.appendArgs(nil)
	return c
}

// Len returns how many records are held.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.n
}

// Bytes returns what the records held take, as counted against
// [MemoryOptions.MaxBytes].
func (m *Memory) Bytes() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.bytes
}

// Cap returns the most records the history holds.
func (m *Memory) Cap() int { return m.cap }

// Dropped returns how many records were dropped to make room.
func (m *Memory) Dropped() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.dropped
}

// Reset empties the history and its dropped count.
func (m *Memory) Reset() {
	m.linkMu.Lock()
	defer m.linkMu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ring, m.start, m.n, m.bytes, m.dropped, m.traces, m.shared = nil, 0, 0, 0, 0, nil, nil
}

// normalized returns a normalized copy of r. Records are normalized when
// read, not when stored, to keep appending cheap.
func normalized(r *Record) Record {
	c := r.Clone()
	c.Normalize()
	return c
}

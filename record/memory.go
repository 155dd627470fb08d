package record

import (
	"context"
	"slices"
	"sync"
)

// DefaultMemoryCapacity is the capacity of a [Memory] made with a
// capacity of zero or less.
const DefaultMemoryCapacity = 1000

// Memory keeps the latest records in a bounded ring: when it is full, the
// oldest record is dropped and counted. It is safe for concurrent use.
// What comes out are normalized copies (see [Record.Normalize]), and what
// goes in through Append is copied, so no caller can change another's view
// of the history.
type Memory struct {
	mu      sync.RWMutex
	ring    []Record // grows to capacity, then wraps
	start   int      // index of the oldest record once the ring wrapped
	cap     int
	dropped uint64
	traces  map[string]int // records held per trace
}

// NewMemory returns an empty history holding at most capacity records;
// capacity <= 0 means [DefaultMemoryCapacity].
func NewMemory(capacity int) *Memory {
	if capacity <= 0 {
		capacity = DefaultMemoryCapacity
	}
	return &Memory{cap: capacity}
}

// Append stores a copy of r, dropping the oldest record when full.
func (m *Memory) Append(_ context.Context, r Record) error {
	r = r.Clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appendLocked(r)
	return nil
}

// Add appends r as the newest turn of its trace's conversation and returns
// it with the history telemetry filled in: HistoryRecordAppended set, and
// ConversationHistorySize the number of records of r's trace held, r
// included.
//
// Unlike Append, Add takes r as it is, without a copy: the caller must not
// modify r's slices afterwards, nor those of the record returned, which
// shares them with the history. The recorder uses Add on its hot path.
func (m *Memory) Add(r Record) Record {
	r.HistoryRecordAppended = true
	m.mu.Lock()
	defer m.mu.Unlock()
	r.ConversationHistorySize = m.traces[r.TraceID] + 1
	if len(m.ring) == m.cap && m.ring[m.start].TraceID == r.TraceID {
		r.ConversationHistorySize-- // the oldest of this very trace makes room
	}
	m.appendLocked(r)
	return r
}

func (m *Memory) appendLocked(r Record) {
	if m.traces == nil {
		m.traces = make(map[string]int)
	}
	m.traces[r.TraceID]++
	if len(m.ring) < m.cap {
		m.ring = append(m.ring, r)
		return
	}
	old := m.ring[m.start].TraceID
	if m.traces[old]--; m.traces[old] == 0 {
		delete(m.traces, old)
	}
	m.ring[m.start] = r
	m.start = (m.start + 1) % m.cap
	m.dropped++
}

// TraceLen returns how many records of one trace are held.
func (m *Memory) TraceLen(traceID string) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.traces[traceID]
}

// Records returns copies of the records held, oldest first.
func (m *Memory) Records() []Record {
	return m.collect(func(*Record) bool { return true })
}

// Trace returns copies of the records of one trace, oldest first.
func (m *Memory) Trace(traceID string) []Record {
	return m.collect(func(r *Record) bool { return r.TraceID == traceID })
}

// TraceTail returns copies of the last n records of one trace, oldest
// first, and how many records of that trace are held in all. It is the
// cheap way to preview a conversation: only the tail is copied.
func (m *Memory) TraceTail(traceID string, n int) (tail []Record, total int) {
	return m.tail(traceID, n, normalized)
}

// TraceSummaries is TraceTail without the payloads: the records come
// without Args, Kwargs, ProgramSource and Output, which are up to hundreds
// of KiB each, for previews and dashboards that show what happened, not
// what was said.
func (m *Memory) TraceSummaries(traceID string, n int) (tail []Record, total int) {
	return m.tail(traceID, n, summary)
}

func (m *Memory) tail(traceID string, n int, copyOf func(*Record) Record) (tail []Record, total int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	total = m.traces[traceID]
	for i := len(m.ring) - 1; i >= 0 && len(tail) < min(n, total); i-- {
		r := &m.ring[(m.start+i)%len(m.ring)]
		if r.TraceID == traceID {
			tail = append(tail, copyOf(r))
		}
	}
	slices.Reverse(tail)
	return tail, total
}

// summary copies r without its payloads.
func summary(r *Record) Record {
	c := *r
	c.Args, c.Kwargs, c.ProgramSource, c.Output = nil, nil, "", ""
	return c.Clone()
}

func (m *Memory) collect(keep func(*Record) bool) []Record {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Record, 0, len(m.ring))
	for i := range m.ring {
		r := &m.ring[(m.start+i)%len(m.ring)]
		if keep(r) {
			out = append(out, normalized(r))
		}
	}
	return out
}

// Len returns how many records are held.
func (m *Memory) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.ring)
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
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ring, m.start, m.dropped, m.traces = nil, 0, 0, nil
}

// normalized returns a normalized copy of r. Records are normalized when
// read, not when stored, to keep appending cheap.
func normalized(r *Record) Record {
	c := r.Clone()
	c.Normalize()
	return c
}

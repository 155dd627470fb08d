package view

import (
	"hash/maphash"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// The index keeps, for every record of the files it reads, where its line
// is and a small summary of it (about 100 bytes whatever the size of its
// Args), and for every conversation a running summary. A page reads the
// bytes of the records it shows from the file when it needs them.

// strtab interns strings: users, tags, models, methods, error types.
type strtab struct {
	ids   map[string]int32
	names []string
}

func newStrtab() *strtab { return &strtab{ids: make(map[string]int32)} }

// id returns s's id, adding it; -1 for "".
func (t *strtab) id(s string) int32 {
	if s == "" {
		return -1
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := int32(len(t.names))
	s = strings.Clone(s)
	t.ids[s] = id
	t.names = append(t.names, s)
	return id
}

// lookup returns s's id, or -2 when s was never added ("" is -1).
func (t *strtab) lookup(s string) int32 {
	if s == "" {
		return -1
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	return -2
}

func (t *strtab) name(id int32) string {
	if id < 0 {
		return ""
	}
	return t.names[id]
}

// Outcome of a call, as the index keeps it.
const (
	statusOK uint8 = iota
	statusError
	statusCanceled
)

// Entry flags.
const (
	flagPriced   uint8 = 1 << iota // carries a cost
	flagPrefix                     // written with args_prefix: its Args need earlier lines
	flagStreamed                   // has a time to first chunk
)

// entry is what the index keeps of one record.
type entry struct {
	off      int64   // offset of its line in its segment
	start    int64   // start, µs since the epoch; 0 when unknown
	usd      float64 // cost, when flagPriced
	n        uint32  // length of its line
	line     int32   // its line number, from 1
	trace    int32
	model    int32
	method   int32
	user     int32
	tagset   int32
	errType  int32
	in, out  int32   // tokens
	dur      float64 // ms, kept whole: the latency sketch buckets what the store and the report bucket
	ttfc     float64
	seg      uint16
	depth    int16 // -1: unknown
	status   uint8
	attempts uint8 // capped at 255
	flags    uint8
}

func (e *entry) end() int64 { return e.start + int64(e.dur*1000) }

// unpriced reports whether the call used tokens and carries no cost: what
// the spend leaves out. A call that used none (most failures) costs
// nothing to leave out.
func (e *entry) unpriced() bool { return e.flags&flagPriced == 0 && e.in+e.out > 0 }

// Bounds of the values a conversation summary lists.
const maxListed = 8

// trace is a conversation's running summary.
type trace struct {
	id       string
	noTrace  bool
	inferred bool
	entries  []int32 // in file order: segment, then offset

	minStart, maxStart int64
	last               int64 // latest end
	calls, errors      int32
	retried, unpriced  int32
	turns              int32
	tokens             int64
	usd                float64

	firstUser   string
	firstUserAt int64

	users, tags, models, providers []int32
	moreUsers, moreTags, moreModel bool
}

// segment is one file's contents as far as they are indexed. A file
// replaced under its name (rotation) keeps its segment, read through the
// handle it was opened with; the new file gets a segment of its own.
type segment struct {
	src     *source
	size    int64   // bytes indexed: up to the end of the last whole line
	lines   int     // lines consumed
	records int     // of them, records
	entries []int32 // in offset order
}

// source is something a segment reads: a file or bytes in memory.
type source struct {
	name string
	r    io.ReaderAt
	size func() (int64, error)
}

// entries holds the index's entries in blocks that are never moved: a
// million of them grow without copying what is there.
type entries struct {
	blocks [][]entry
	n      int
}

const entryBlock = 1 << 14

func (es *entries) len() int { return es.n }

func (es *entries) at(id int32) *entry { return &es.blocks[id/entryBlock][id%entryBlock] }

func (es *entries) add(e entry) {
	if es.n%entryBlock == 0 {
		es.blocks = append(es.blocks, make([]entry, 0, entryBlock))
	}
	b := &es.blocks[len(es.blocks)-1]
	*b = append(*b, e)
	es.n++
}

// index is everything known of the records read so far. It is replaced
// whole when a file is truncated.
type index struct {
	segs    []*segment
	entries entries
	traces  []trace
	byTrace map[string]int32
	// byCall maps a hash of a call_id to its entry; byCallMore holds
	// the rare second entry of a hash (checked against the line).
	byCall     map[uint64]int32
	byCallMore map[uint64][]int32

	users, tags, models, methods, providers, errTypes *strtab
	providerOf                                        []int32 // method id → provider id
	tagsets                                           [][]int32
	tagsetIDs                                         map[string]int32

	badLines int
	problems []string // the first few lines that are not records
}

var callSeed = maphash.MakeSeed()

func newIndex() *index {
	return &index{
		byTrace:    make(map[string]int32),
		byCall:     make(map[uint64]int32),
		byCallMore: make(map[uint64][]int32),
		users:      newStrtab(),
		tags:       newStrtab(),
		models:     newStrtab(),
		methods:    newStrtab(),
		providers:  newStrtab(),
		errTypes:   newStrtab(),
		tagsetIDs:  make(map[string]int32),
	}
}

// summary is what a line's record contributes to the index, gathered
// before the index is locked.
type summary struct {
	off          int64
	n            uint32
	line         int
	callID       string
	traceID      string
	inferred     bool
	prefix       bool
	start        int64
	dur, ttfc    float64
	usd          float64
	priced       bool
	in, out      int32
	model        string
	method       string
	user         string
	errType      string
	tags         []string
	status       uint8
	attempts     uint8
	depth        int16
	turns        int32
	firstUser    string
	hasFirstUser bool
}

// summarize reads what the index keeps of r, a record decoded from a line.
func summarize(r *record.Record) summary {
	s := summary{
		callID:   r.CallID,
		traceID:  r.TraceID,
		inferred: r.TraceInferred,
		prefix:   r.ArgsPrefix != nil,
		dur:      finite(r.DurationMS),
		ttfc:     finite(r.TimeToFirstChunkMS),
		model:    modelOf(r),
		method:   r.MethodName,
		user:     r.UserID,
		errType:  r.FailureType(),
		tags:     r.Tags,
		attempts: uint8(min(max(r.Attempts, 0), 255)),
		depth:    -1,
	}
	if t, err := record.ParseTime(r.Timestamp); err == nil {
		s.start = t.UnixMicro()
	}
	if r.Cost != nil && r.Cost.USD >= 0 && r.Cost.USD < 1e9 {
		s.usd, s.priced = r.Cost.USD, true
	}
	if u := r.Usage; u != nil {
		s.in, s.out = clamp32(u.InputTokens), clamp32(u.OutputTokens)
	}
	switch r.Outcome.Status {
	case record.StatusOK:
		s.status = statusOK
	case record.StatusCanceled:
		s.status = statusCanceled
	default:
		s.status = statusError
	}
	if r.Depth != nil {
		s.depth = int16(min(max(*r.Depth, 0), math.MaxInt16))
	}
	n := 0
	record.EachValidElement(r.Args, func([]byte) bool { n++; return true })
	if r.ArgsPrefix != nil {
		n += r.ArgsPrefix.Count
	}
	s.turns = int32(min(n, math.MaxInt32))
	s.firstUser, s.hasFirstUser = firstUserText(r.Args)
	return s
}

// modelOf is the model a call is counted under: the one the response
// named, else the one asked for.
func modelOf(r *record.Record) string {
	if r.Model != "" {
		return r.Model
	}
	var m string
	record.EachValidMember(r.Kwargs, func(k, v []byte) bool {
		if string(k) == "model" {
			m, _ = record.String(v)
			return false
		}
		return true
	})
	return m
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

func clamp32(v int) int32 { return int32(min(max(v, 0), math.MaxInt32)) }

// add puts a record's summary in the index, as the next record of seg.
func (ix *index) add(seg int, s *summary) {
	id := int32(ix.entries.len())
	e := entry{
		off: s.off, n: s.n, line: int32(min(s.line, math.MaxInt32)), start: s.start, usd: s.usd, dur: s.dur, ttfc: s.ttfc,
		in: s.in, out: s.out, seg: uint16(seg), depth: s.depth, status: s.status, attempts: s.attempts,
		model: ix.models.id(s.model), user: ix.users.id(s.user), errType: ix.errTypes.id(s.errType),
		tagset: -1,
	}
	e.method = ix.methods.id(s.method)
	if e.method >= 0 && int(e.method) >= len(ix.providerOf) {
		ix.providerOf = append(ix.providerOf, ix.providers.id(record.ProviderOf(s.method)))
	}
	if s.priced {
		e.flags |= flagPriced
	}
	if s.prefix {
		e.flags |= flagPrefix
	}
	if s.ttfc > 0 {
		e.flags |= flagStreamed
	}
	if len(s.tags) > 0 {
		e.tagset = ix.tagset(s.tags)
	}

	key, noTrace := s.traceID, false
	if key == "" {
		key, noTrace = "\x00"+s.callID, true
	}
	ti, ok := ix.byTrace[key]
	if !ok {
		ti = int32(len(ix.traces))
		id := s.traceID
		if noTrace {
			id = s.callID
		}
		ix.traces = append(ix.traces, trace{id: strings.Clone(id), noTrace: noTrace, minStart: math.MaxInt64, maxStart: math.MinInt64})
		ix.byTrace[strings.Clone(key)] = ti
	}
	e.trace = ti
	ix.entries.add(e)
	sg := ix.segs[seg]
	sg.entries = append(sg.entries, id)
	sg.records++

	h := maphash.String(callSeed, s.callID)
	if prev, dup := ix.byCall[h]; dup {
		ix.byCallMore[h] = append(ix.byCallMore[h], prev)
	}
	ix.byCall[h] = id // the latest wins: a record written again supersedes

	t := &ix.traces[ti]
	t.entries = append(t.entries, id)
	t.inferred = t.inferred || s.inferred
	t.calls++
	t.minStart = min(t.minStart, e.start)
	t.maxStart = max(t.maxStart, e.start)
	t.last = max(t.last, e.end())
	if e.status != statusOK {
		t.errors++
	}
	if e.attempts > 1 {
		t.retried++
	}
	switch {
	case e.flags&flagPriced != 0:
		t.usd += e.usd
	case e.unpriced():
		t.unpriced++
	}
	t.tokens += int64(e.in) + int64(e.out)
	t.turns = max(t.turns, s.turns)
	if s.hasFirstUser && (t.firstUser == "" || e.start < t.firstUserAt) {
		t.firstUser, t.firstUserAt = strings.Clone(s.firstUser), e.start
	}
	t.users, t.moreUsers = addListed(t.users, e.user, t.moreUsers)
	t.models, t.moreModel = addListed(t.models, e.model, t.moreModel)
	if e.method >= 0 {
		t.providers, _ = addListed(t.providers, ix.providerOf[e.method], false)
	}
	if e.tagset >= 0 {
		for _, tag := range ix.tagsets[e.tagset] {
			t.tags, t.moreTags = addListed(t.tags, tag, t.moreTags)
		}
	}
}

func addListed(list []int32, id int32, more bool) ([]int32, bool) {
	if id < 0 || slices.Contains(list, id) {
		return list, more
	}
	if len(list) >= maxListed {
		return list, true
	}
	return append(list, id), more
}

func (ix *index) tagset(tags []string) int32 {
	key := strings.Join(tags, "\x00")
	if id, ok := ix.tagsetIDs[key]; ok {
		return id
	}
	ids := make([]int32, 0, len(tags))
	for _, t := range tags {
		if id := ix.tags.id(t); id >= 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	id := int32(len(ix.tagsets))
	ix.tagsets = append(ix.tagsets, ids)
	ix.tagsetIDs[strings.Clone(key)] = id
	return id
}

// callCandidates returns the entries whose call_id hashes as callID's.
func (ix *index) callCandidates(callID string) []int32 {
	h := maphash.String(callSeed, callID)
	id, ok := ix.byCall[h]
	if !ok {
		return nil
	}
	return append([]int32{id}, ix.byCallMore[h]...)
}

// conversation returns the summary of trace ti.
func (ix *index) conversation(ti int32) Conversation {
	t := &ix.traces[ti]
	c := Conversation{
		ID: t.id, NoTrace: t.noTrace, Inferred: t.inferred,
		FirstUserMessage: t.firstUser,
		Calls:            int(t.calls), Turns: int(t.turns), Errors: int(t.errors), Retried: int(t.retried),
		Tokens: t.tokens, CostUSD: t.usd, Unpriced: int(t.unpriced),
		More: t.moreUsers || t.moreTags || t.moreModel,
	}
	c.Users = names(ix.users, t.users)
	c.Tags = names(ix.tags, t.tags)
	c.Models = names(ix.models, t.models)
	c.Providers = names(ix.providers, t.providers)
	if t.minStart > 0 && t.minStart != math.MaxInt64 {
		c.First = time.UnixMicro(t.minStart).UTC()
	}
	if t.last > 0 {
		c.Last = time.UnixMicro(t.last).UTC()
	}
	return c
}

func names(tab *strtab, ids []int32) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tab.name(id)
	}
	return out
}

// filter is a Query resolved against the index's string tables.
type filter struct {
	from, to         int64 // µs; 0: unbounded
	user, tag, model int32 // -1: any
	provider         int32
	outcome          string
	none             bool // a value the index never saw: nothing matches
}

func (ix *index) filter(q Query) filter {
	f := filter{user: -1, tag: -1, model: -1, provider: -1, outcome: q.Outcome}
	if !q.From.IsZero() {
		f.from = q.From.UnixMicro()
	}
	if !q.To.IsZero() {
		f.to = q.To.UnixMicro()
	}
	resolve := func(tab *strtab, s string) int32 {
		id := tab.lookup(s)
		if id == -2 {
			f.none = true
		}
		return id
	}
	f.user = resolve(ix.users, q.User)
	f.tag = resolve(ix.tags, q.Tag)
	f.model = resolve(ix.models, q.Model)
	f.provider = resolve(ix.providers, q.Provider)
	return f
}

// matchEntry reports whether one call matches every field of f.
func (ix *index) matchEntry(f *filter, e *entry) bool {
	switch {
	case f.from != 0 && e.start < f.from, f.to != 0 && e.start >= f.to:
		return false
	case f.user >= 0 && e.user != f.user:
		return false
	case f.model >= 0 && e.model != f.model:
		return false
	case f.provider >= 0 && (e.method < 0 || ix.providerOf[e.method] != f.provider):
		return false
	case f.tag >= 0 && (e.tagset < 0 || !slices.Contains(ix.tagsets[e.tagset], f.tag)):
		return false
	}
	switch f.outcome {
	case OutcomeOK:
		return e.status == statusOK
	case OutcomeError:
		return e.status != statusOK
	case OutcomeRetried:
		return e.attempts > 1
	}
	return true
}

// matchTrace reports whether conversation ti has, for each field of f, a
// call that matches it; OutcomeOK asks that no call failed.
func (ix *index) matchTrace(f *filter, ti int32) bool {
	if f.none {
		return false
	}
	t := &ix.traces[ti]
	if f.from != 0 && t.maxStart < f.from || f.to != 0 && t.minStart >= f.to {
		return false
	}
	switch f.outcome {
	case OutcomeOK:
		if t.errors > 0 {
			return false
		}
	case OutcomeError:
		if t.errors == 0 {
			return false
		}
	case OutcomeRetried:
		if t.retried == 0 {
			return false
		}
	}
	if f.user >= 0 && !t.moreUsers && !slices.Contains(t.users, f.user) ||
		f.model >= 0 && !t.moreModel && !slices.Contains(t.models, f.model) ||
		f.tag >= 0 && !t.moreTags && !slices.Contains(t.tags, f.tag) ||
		f.provider >= 0 && !slices.Contains(t.providers, f.provider) {
		return false
	}
	// The summary says it may match: check each field against the calls
	// where the summary cannot tell (a bounded list, a time range that
	// cuts the conversation).
	exactTime := (f.from == 0 || t.minStart >= f.from) && (f.to == 0 || t.maxStart < f.to)
	check := []func(*entry) bool{}
	if !exactTime {
		check = append(check, func(e *entry) bool {
			return (f.from == 0 || e.start >= f.from) && (f.to == 0 || e.start < f.to)
		})
	}
	if f.user >= 0 && t.moreUsers && !slices.Contains(t.users, f.user) {
		check = append(check, func(e *entry) bool { return e.user == f.user })
	}
	if f.model >= 0 && t.moreModel && !slices.Contains(t.models, f.model) {
		check = append(check, func(e *entry) bool { return e.model == f.model })
	}
	if f.tag >= 0 && t.moreTags && !slices.Contains(t.tags, f.tag) {
		check = append(check, func(e *entry) bool {
			return e.tagset >= 0 && slices.Contains(ix.tagsets[e.tagset], f.tag)
		})
	}
	for _, c := range check {
		found := false
		for _, id := range t.entries {
			if c(ix.entries.at(id)) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

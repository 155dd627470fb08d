package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// JSONLOptions configures a [JSONL] source. The zero value is the
// defaults.
type JSONLOptions struct {
	// Poll is how often the files are looked at for new records; default
	// 250 ms. Negative: read what is there and do not follow.
	Poll time.Duration
	// MaxLine is the longest line read as a record; default
	// record.DefaultMaxLineBytes. Longer lines are skipped and counted.
	MaxLine int
}

// JSONL is a [Source] over JSON Lines history files: it indexes them as
// it streams them, in the background, and follows them as they grow.
//
// It keeps about 100 bytes per record (where its line is, its time,
// model, user, tags, tokens, cost, duration and outcome) and a summary
// per conversation, never Args: a page reads the lines it shows from the
// files. Pages are served while indexing; [JSONL.Wait] waits for the
// files as they were when opened to be read.
//
// Following copes with what happens to log files: a partial last line is
// waited for; a file truncated in place is read again from its start
// (the index is rebuilt); a file replaced under its name (rotation) keeps
// its records, read through the handle it was opened with, and the new
// file is read from its start. Lines that are not records are counted
// and skipped, the first few described in [JSONL.Status].
//
// Records written with args_prefix (record.JSONLOptions.ArgsPrefix) are
// put back together when read, from the earlier lines of their trace.
type JSONL struct {
	opts JSONLOptions

	mu       sync.RWMutex
	ix       *index
	srcs     []*source // every source read, in order: segment i of ix reads srcs[i]
	states   []*lineState
	files    []*followed // one per path given: the file read under that name now
	total    int64       // bytes to read at the start
	indexing bool
	errs     []string // read errors, the latest few

	hub    hub
	search searchCache

	ready  chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	closed sync.Once
}

// lineState is how far the follower has read a segment: whole lines up
// to lineStart, and the bytes of an unfinished line after it.
type lineState struct {
	pos       int64  // bytes read
	lineStart int64  // start of the line being read
	line      int    // lines finished
	pending   []byte // the line being read, unless skip
	skip      bool   // it grew past MaxLine
}

// followed is a path given and the file read under it now.
type followed struct {
	path string
	f    *os.File
	seg  int // the file's segment
}

var _ Source = (*JSONL)(nil)

// OpenJSONL opens every path (an error, before any is read, when one
// cannot be) and starts indexing them in the background. Close stops it
// and closes the files.
func OpenJSONL(paths []string, opts JSONLOptions) (*JSONL, error) {
	if len(paths) == 0 {
		return nil, errors.New("view: no history file given")
	}
	s := newJSONL(opts)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("view: %w", err)
		}
		if fi, err := f.Stat(); err == nil {
			if fi.IsDir() {
				f.Close()
				s.closeFiles()
				return nil, fmt.Errorf("view: %s is a directory, not a history file", p)
			}
			s.total += fi.Size()
		}
		fl := &followed{path: p, f: f, seg: len(s.srcs)}
		s.files = append(s.files, fl)
		s.addSource(fileSource(p, f))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
	return s, nil
}

// FromRecords returns a source holding records, already indexed: for a
// program that has its history in memory (a record.Memory, say) and
// wants to show it. The records are encoded as the JSONL sink encodes
// them; the source does not change.
func FromRecords(records []record.Record) *JSONL {
	var buf []byte
	for i := range records {
		buf = records[i].AppendJSON(buf)
		buf = append(buf, '\n')
	}
	return fromBytes("records", buf)
}

// fromBytes is a source over JSON Lines held in memory, indexed at once.
func fromBytes(name string, buf []byte) *JSONL {
	s := newJSONL(JSONLOptions{Poll: -1})
	s.total = int64(len(buf))
	r := bytes.NewReader(buf)
	s.addSource(&source{name: name, r: r, size: func() (int64, error) { return r.Size(), nil }})
	s.consume(context.Background(), 0)
	s.indexing = false
	close(s.ready)
	close(s.done)
	return s
}

func newJSONL(opts JSONLOptions) *JSONL {
	if opts.Poll == 0 {
		opts.Poll = 250 * time.Millisecond
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = record.DefaultMaxLineBytes
	}
	return &JSONL{
		opts: opts, ix: newIndex(), indexing: true,
		ready: make(chan struct{}), done: make(chan struct{}), cancel: func() {},
	}
}

func fileSource(name string, f *os.File) *source {
	return &source{name: name, r: f, size: func() (int64, error) {
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}}
}

// addSource adds a segment for src, to the index and to those that are
// read again when it is rebuilt.
func (s *JSONL) addSource(src *source) {
	s.mu.Lock()
	s.srcs = append(s.srcs, src)
	s.states = append(s.states, &lineState{})
	s.ix.segs = append(s.ix.segs, &segment{src: src})
	s.mu.Unlock()
}

// Wait waits until the files as they were when opened have been indexed,
// or ctx ends.
func (s *JSONL) Wait(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops following and closes the files. Pages being served may
// fail after it.
func (s *JSONL) Close() error {
	s.closed.Do(func() {
		s.cancel()
		<-s.done
		s.hub.close()
		s.closeFiles()
	})
	return nil
}

func (s *JSONL) closeFiles() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range s.srcs {
		if c, ok := src.r.(io.Closer); ok {
			c.Close()
		}
	}
}

// run indexes the files, then follows them until ctx ends.
func (s *JSONL) run(ctx context.Context) {
	defer close(s.done)
	for seg := range s.segCount() {
		s.consume(ctx, seg)
	}
	s.mu.Lock()
	s.indexing = false
	s.mu.Unlock()
	close(s.ready)
	s.hub.publish(Change{})
	if s.opts.Poll < 0 {
		return
	}
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.follow(ctx)
	}
}

func (s *JSONL) segCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.srcs)
}

// follow looks at every file once: a replaced one gets a new segment, a
// truncated one has everything read again, and new lines are indexed.
func (s *JSONL) follow(ctx context.Context) {
	for _, fl := range s.files {
		named, err := os.Stat(fl.path)
		if err != nil {
			continue // between a rename and a create: look again next time
		}
		cur, err := fl.f.Stat()
		if err != nil || os.SameFile(cur, named) {
			continue
		}
		f, err := os.Open(fl.path)
		if err != nil {
			continue
		}
		fl.f, fl.seg = f, s.segCount()
		s.addSource(fileSource(fl.path, f))
	}
	for seg := range s.segCount() {
		if ctx.Err() != nil {
			return
		}
		if err := s.consume(ctx, seg); errors.Is(err, errTruncated) {
			s.rebuild(ctx)
			return
		}
	}
}

var errTruncated = errors.New("truncated")

// rebuild reads every segment again from its start, into a new index:
// a file was truncated, so the places of its records are no longer true.
func (s *JSONL) rebuild(ctx context.Context) {
	s.mu.Lock()
	ix := newIndex()
	for i, src := range s.srcs {
		ix.segs = append(ix.segs, &segment{src: src})
		s.states[i] = &lineState{}
	}
	s.ix = ix
	s.mu.Unlock()
	s.hub.publish(Change{Reset: true})
	for seg := range s.segCount() {
		s.consume(ctx, seg)
	}
}

// batchSize is how many records are indexed under one hold of the lock.
const batchSize = 2048

// consume indexes the whole lines of segment seg not read yet.
//
// It is a pipeline: this goroutine reads a chunk and cuts it into lines,
// every core decodes them, and another goroutine adds them to the index
// in order while the next chunk is read and decoded.
func (s *JSONL) consume(ctx context.Context, seg int) error {
	s.mu.RLock()
	src, st, ix := s.srcs[seg], s.states[seg], s.ix
	s.mu.RUnlock()
	size, err := src.size()
	if err != nil {
		s.readError(src, err)
		return err
	}
	if size < st.pos {
		return errTruncated
	}
	if size == st.pos {
		return nil
	}
	chunks := make(chan *chunkLines, 2)
	free := make(chan *chunkLines, 4)
	for range cap(free) {
		free <- &chunkLines{}
	}
	added := make(chan struct{})
	go func() {
		defer close(added)
		s.addChunks(seg, src, ix, chunks, free)
	}()
	buf := make([]byte, min(1<<20, size-st.pos))
	for st.pos < size && ctx.Err() == nil {
		n, err := src.r.ReadAt(buf[:min(int64(len(buf)), size-st.pos)], st.pos)
		if n == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				s.readError(src, err)
			}
			break
		}
		c := <-free
		c.lines = s.cutLines(st, buf[:n], c.lines[:0])
		decodeLines(c.lines)
		for k := range c.lines {
			c.lines[k].data = nil // buf is read into again
		}
		c.end, c.line = st.lineStart, st.line
		chunks <- c
	}
	close(chunks)
	<-added
	return nil
}

// chunkLines is the lines of one chunk read, decoded, and how far the
// segment is read once they are added.
type chunkLines struct {
	lines []lineRef
	end   int64
	line  int
}

// cutLines appends to lines the lines chunk finishes, keeping an
// unfinished one in st for the next chunk.
func (s *JSONL) cutLines(st *lineState, chunk []byte, lines []lineRef) []lineRef {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.hold(st, chunk)
			st.pos += int64(len(chunk))
			break
		}
		l := lineRef{off: st.lineStart, n: st.pos + int64(i) - st.lineStart, line: st.line + 1, tooLong: st.skip}
		switch {
		case st.skip:
		case len(st.pending) == 0 && i <= s.opts.MaxLine:
			l.data = chunk[:i] // whole in this chunk: no copy
		default:
			s.hold(st, chunk[:i])
			l.data, l.tooLong = slices.Clone(st.pending), st.skip
		}
		st.pos += int64(i) + 1
		st.line++
		st.lineStart = st.pos
		st.pending, st.skip = st.pending[:0], false
		lines = append(lines, l)
		chunk = chunk[i+1:]
	}
	return lines
}

// addChunks adds the decoded lines of each chunk to the index, a batch
// under each hold of the lock, and tells subscribers what arrived.
func (s *JSONL) addChunks(seg int, src *source, ix *index, chunks <-chan *chunkLines, free chan<- *chunkLines) {
	var (
		batch   = make([]summary, 0, batchSize)
		bad     []string // described, while the index has room for them
		nbad    int
		changed = map[string]bool{}
		more    bool
		end     int64
		lineNo  int
	)
	s.mu.RLock()
	described := len(ix.problems)
	s.mu.RUnlock()
	problem := func(msg string) {
		if described < maxProblems {
			described++
			bad = append(bad, msg)
		}
	}
	flush := func() {
		s.mu.Lock()
		if s.ix != ix { // rebuilt meanwhile: this reading is stale
			s.mu.Unlock()
			return
		}
		records := len(batch)
		for i := range batch {
			sm := &batch[i]
			ix.add(seg, sm)
			if len(changed) < maxChangeTraces {
				changed[traceKey(sm)] = true
			} else {
				more = true
			}
		}
		sg := ix.segs[seg]
		sg.size, sg.lines = end, lineNo
		ix.badLines += nbad
		for _, b := range bad {
			if len(ix.problems) < maxProblems {
				ix.problems = append(ix.problems, b)
			}
		}
		s.mu.Unlock()
		if records > 0 || nbad > 0 {
			c := Change{Records: records, More: more}
			for k := range changed {
				c.Traces = append(c.Traces, k)
			}
			slices.Sort(c.Traces)
			s.hub.publish(c)
		}
		batch, bad, nbad, more = batch[:0], bad[:0], 0, false
		clear(changed)
	}
	for c := range chunks {
		for k := range c.lines {
			l := &c.lines[k]
			switch {
			case l.tooLong:
				nbad++
				problem(fmt.Sprintf("%s:%d: line longer than %s; skipped", src.name, l.line, byteSize(s.opts.MaxLine)))
			case l.err != nil:
				nbad++
				problem(fmt.Sprintf("%s:%d: %v", src.name, l.line, l.err))
			case l.ok:
				batch = append(batch, l.sum)
			}
			if len(batch) >= batchSize {
				// The segment is read up to this line, no further.
				end, lineNo = l.off+l.n+1, l.line
				flush()
			}
		}
		end, lineNo = c.end, c.line
		free <- c
	}
	flush()
}

// lineRef is one line cut from what a segment read, and what decoding it
// gave.
type lineRef struct {
	data    []byte
	off, n  int64
	line    int
	tooLong bool

	sum summary
	ok  bool  // a record
	err error // not a record
}

// decodeLines decodes lines on every core.
func decodeLines(lines []lineRef) {
	workers := min(runtime.GOMAXPROCS(0), max(len(lines)/16, 1))
	var wg sync.WaitGroup
	per := (len(lines) + workers - 1) / workers
	for w := range workers {
		part := lines[min(w*per, len(lines)):min((w+1)*per, len(lines))]
		wg.Go(func() {
			for k := range part {
				decodeOne(&part[k])
			}
		})
	}
	wg.Wait()
}

func decodeOne(l *lineRef) {
	if l.tooLong {
		return
	}
	line := bytes.TrimSpace(l.data)
	if len(line) == 0 {
		return
	}
	r, err := record.DecodeLine(line)
	if err != nil {
		l.err = err
		return
	}
	l.sum = summarize(&r)
	l.sum.off, l.sum.n, l.sum.line = l.off, uint32(min(l.n, 1<<32-1)), l.line
	l.ok = true
}

// maxProblems bounds the bad lines described; all are counted.
const maxProblems = 20

func traceKey(sm *summary) string {
	if sm.traceID != "" {
		return sm.traceID
	}
	return sm.callID
}

// hold keeps b as part of the line being read, up to MaxLine.
func (s *JSONL) hold(st *lineState, b []byte) {
	if st.skip {
		return
	}
	if len(st.pending)+len(b) > s.opts.MaxLine {
		st.skip, st.pending = true, nil
		return
	}
	st.pending = append(st.pending, b...)
}

func (s *JSONL) readError(src *source, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := src.name + ": " + err.Error()
	if len(s.errs) > 0 && s.errs[len(s.errs)-1] == msg {
		return
	}
	s.errs = append(s.errs, msg)
	if len(s.errs) > 5 {
		s.errs = s.errs[1:]
	}
}

// Status describes the files, the indexing and what was skipped.
func (s *JSONL) Status() Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix := s.ix
	st := Status{Indexing: s.indexing, Records: ix.entries.len(), BadLines: ix.badLines}
	var names []string
	var read int64
	seen := map[string]bool{}
	for _, sg := range ix.segs {
		read += sg.size
		if !seen[sg.src.name] {
			seen[sg.src.name] = true
			names = append(names, filepath.Base(sg.src.name))
		}
	}
	st.Description = strings.Join(names, ", ")
	if s.total > 0 {
		st.Progress = min(float64(read)/float64(s.total), 1)
	} else {
		st.Progress = 1
	}
	st.Problems = append(slices.Clone(ix.problems), s.errs...)
	return st
}

// Conversations implements [Source].
func (s *JSONL) Conversations(ctx context.Context, q Query) (Page, error) {
	if strings.TrimSpace(q.Text) == "" {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.ix.conversations(q, nil)
	}
	for range 3 {
		match, searched, err := s.searchText(ctx, q.Text)
		if err != nil {
			return Page{}, err
		}
		s.mu.RLock()
		if s.ix == searched {
			defer s.mu.RUnlock()
			return s.ix.conversations(q, match)
		}
		s.mu.RUnlock() // the files were read again meanwhile: search the new index
	}
	return Page{}, errors.New("view: the history keeps being read again; search again later")
}

// Stats implements [Source].
func (s *JSONL) Stats(ctx context.Context, q Query) (Stats, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ix.stats(q), ctx.Err()
}

// Facets implements [Source].
func (s *JSONL) Facets(ctx context.Context, limit int) (Facets, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ix.facets(limit), ctx.Err()
}

// Subscribe implements [Source].
func (s *JSONL) Subscribe(ctx context.Context) (<-chan Change, error) {
	return s.hub.subscribe(ctx), nil
}

// located is an entry copied out of the index with what reading it needs.
type located struct {
	entry
	id  int32
	src *source
}

// traceEntries returns trace id's summary and its entries in file order.
func (s *JSONL) traceEntries(id string) (Conversation, []located, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix := s.ix
	ti, ok := ix.byTrace[id]
	if !ok {
		if ti, ok = ix.byTrace["\x00"+id]; !ok {
			return Conversation{}, nil, false
		}
	}
	t := &ix.traces[ti]
	out := make([]located, len(t.entries))
	for i, e := range t.entries {
		out[i] = located{entry: *ix.entries.at(e), id: e, src: ix.segs[ix.entries.at(e).seg].src}
	}
	return ix.conversation(ti), out, true
}

// Trace implements [Source].
func (s *JSONL) Trace(ctx context.Context, q TraceQuery) (TracePage, error) {
	conv, ents, ok := s.traceEntries(q.ID)
	if !ok {
		return TracePage{}, ErrNotFound
	}
	// Start order; ents are in file order, which breaks ties.
	order := make([]int, len(ents))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch ea, eb := ents[a].start, ents[b].start; {
		case ea < eb:
			return -1
		case ea > eb:
			return 1
		}
		return 0
	})
	from := min(max(q.Offset, 0), len(order))
	to := len(order)
	if q.Limit > 0 {
		to = min(from+q.Limit, to)
	}
	want := order[from:to]
	calls, err := s.read(ctx, ents, want, q.SkipArgs)
	if err != nil {
		return TracePage{}, err
	}
	return TracePage{Conversation: conv, Calls: calls, Offset: from}, nil
}

// Call implements [Source].
func (s *JSONL) Call(ctx context.Context, callID string) (Call, error) {
	s.mu.RLock()
	ix := s.ix
	cands := ix.callCandidates(callID)
	traces := make([]string, len(cands))
	for i, c := range cands {
		traces[i] = ix.traces[ix.entries.at(c).trace].id
	}
	s.mu.RUnlock()
	for i, c := range cands {
		_, ents, ok := s.traceEntries(traces[i])
		if !ok {
			continue
		}
		k := slices.IndexFunc(ents, func(l located) bool { return l.id == c })
		if k < 0 {
			continue
		}
		calls, err := s.read(ctx, ents, []int{k}, false)
		if err != nil {
			return Call{}, err
		}
		if calls[0].Record.CallID == callID {
			return calls[0], nil
		}
	}
	return Call{}, ErrNotFound
}

// read reads the records ents[want...] (indices into ents, which are one
// trace's entries in file order) and returns them in want's order, their
// Args put back together from the earlier lines of the trace when they
// were written with args_prefix.
func (s *JSONL) read(ctx context.Context, ents []located, want []int, skipArgs bool) ([]Call, error) {
	out := make([]Call, len(want))
	pos := make(map[int]int, len(want)) // ents index → out index
	for i, k := range want {
		pos[k] = i
	}
	// Which lines to read: the wanted ones, and, before one that needs
	// them, the earlier lines of its segment back to one written whole.
	need := make([]bool, len(ents))
	for _, k := range want {
		need[k] = true
		if skipArgs || ents[k].flags&flagPrefix == 0 {
			continue
		}
		for j := k - 1; j >= 0; j-- {
			if ents[j].src != ents[k].src {
				continue
			}
			need[j] = true
			if ents[j].flags&flagPrefix == 0 {
				break
			}
		}
	}
	joiners := map[*source]*record.ArgsJoiner{}
	for k, e := range ents {
		if !need[k] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line := make([]byte, e.n)
		if _, err := e.src.r.ReadAt(line, e.off); err != nil && !(errors.Is(err, io.EOF) && len(line) == int(e.n)) {
			return nil, fmt.Errorf("view: read %s: %w", e.src.name, err)
		}
		line = bytes.TrimSpace(line)
		r, err := record.DecodeLine(line)
		if err != nil {
			return nil, fmt.Errorf("view: %s changed since it was indexed: %w", e.src.name, err)
		}
		hadPrefix := r.ArgsPrefix != nil
		if !skipArgs {
			j := joiners[e.src]
			if j == nil {
				j = record.NewArgsJoiner()
				joiners[e.src] = j
			}
			j.Join(&r)
		}
		i, ok := pos[k]
		if !ok {
			continue
		}
		raw := json.RawMessage(line)
		if hadPrefix && r.ArgsPrefix == nil {
			raw = withArgs(line, r.Args)
		}
		if skipArgs {
			r.Args = nil
		}
		out[i] = Call{Record: r, Raw: raw, Line: filepath.Base(e.src.name) + ":" + strconv.Itoa(int(e.line))}
	}
	return out, nil
}

// withArgs returns the record line with its Args replaced by args and its
// args_prefix left out: the record as it was before it was written with
// args_prefix, every other member as the line has it.
func withArgs(line []byte, args []byte) json.RawMessage {
	out := make([]byte, 0, len(line)+len(args))
	out = append(out, '{')
	first := true
	record.EachMember(line, func(k, v []byte) bool {
		if string(k) == "args_prefix" {
			return true
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		key, _ := json.Marshal(string(k))
		out = append(out, key...)
		out = append(out, ':')
		if string(k) == "args" {
			out = append(out, args...)
		} else {
			out = append(out, v...)
		}
		return true
	})
	return append(out, '}')
}

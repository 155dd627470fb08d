package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrBacklog is returned by [JSONL.Append] when the writer has been failing
// long enough that its backlog is full; the record is dropped and counted.
var ErrBacklog = errors.New("record: jsonl backlog is full; record dropped")

// JSONLOptions configures a [JSONL] sink. The zero value is the defaults.
type JSONLOptions struct {
	// BufferSize is how many bytes of whole lines are gathered before they
	// are written; default 64 KiB. A line longer than that is written alone.
	BufferSize int
	// FlushInterval bounds how long a buffered line waits to be written;
	// default one second. Negative: lines are written only when the buffer
	// fills, on Flush and on Close.
	FlushInterval time.Duration
	// MaxBacklog is how many bytes are kept while the writer fails (a full
	// disk); default 8 MiB. Past it, new records are dropped and counted.
	MaxBacklog int
	// ArgsPrefix writes a record whose Args begin with the Args of the
	// previous line of its trace as only the elements it adds, and an
	// args_prefix naming that line's record (see [ArgsPrefix]): a
	// conversation then takes space in proportion to its length, not to
	// its square. The history found what is shared when the record was
	// added to it ([Memory.Add], as a recorder does); other records are
	// written whole, and so is any record when the line it would name is
	// not the latest of its trace in this file, or one of the 4096 traces
	// written last. [Reader] and [ReadJSONL] put the Args back together;
	// tools that read lines raw see only the new elements, which is why
	// this is not the default.
	ArgsPrefix bool
}

// JSONL writes records as JSON Lines: one record per line, each line
// encoded by [Record.AppendJSON]. It is safe for concurrent use. Lines are
// gathered in a buffer and every Write to the underlying writer carries
// whole lines only, so writers sharing a file opened for appending (even
// in several processes) never interleave within a line.
//
// When a Write fails, the unwritten bytes are kept and written first next
// time, so a failing disk loses nothing until the backlog limit.
type JSONL struct {
	w        io.Writer
	file     *os.File // set when OpenJSONL opened it: ours to sync and close
	size     int
	backlog  int
	interval time.Duration

	mu      sync.Mutex
	buf     []byte // whole lines not yet written
	timer   *time.Timer
	armed   bool
	closed  bool
	lines   uint64
	dropped uint64
	// latest is the call ID of the latest line of each trace written last,
	// when writing args_prefix.
	latest *lru[string]
}

// NewJSONL returns a sink writing to w with default options. Close flushes
// it but does not close w, which the caller owns.
func NewJSONL(w io.Writer) *JSONL { return NewJSONLWith(w, JSONLOptions{}) }

// NewJSONLWith returns a sink writing to w with the given options.
func NewJSONLWith(w io.Writer, o JSONLOptions) *JSONL {
	if o.BufferSize <= 0 {
		o.BufferSize = 64 << 10
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = time.Second
	}
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = 8 << 20
	}
	j := &JSONL{w: w, size: o.BufferSize, backlog: max(o.MaxBacklog, o.BufferSize), interval: o.FlushInterval}
	if o.ArgsPrefix {
		j.latest = newLRU[string](prefixTraces, prefixBytes)
	}
	return j
}

// OpenJSONL opens path for appending records, creating it with mode 0600
// (history holds prompts). A torn last line left by a crash is repaired
// first, as [RepairJSONL] does. Close flushes, syncs and closes the file.
func OpenJSONL(path string) (*JSONL, error) { return OpenJSONLWith(path, JSONLOptions{}) }

// OpenJSONLWith is [OpenJSONL] with options.
func OpenJSONLWith(path string, o JSONLOptions) (*JSONL, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record: open history file: %w", err)
	}
	if _, err := repairTail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("record: repair %s: %w", path, err)
	}
	j := NewJSONLWith(f, o)
	j.file = f
	return j, nil
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// Append encodes r as one line and buffers it. It keeps nothing of r once
// it returns (a recorder lends it records whose Args it then reuses).
func (j *JSONL) Append(_ context.Context, r Record) error {
	bp := linePool.Get().(*[]byte)
	shared := j.shareable(&r)
	line, argsLen := r.appendJSON((*bp)[:0], shared)
	line = append(line, '\n')
	defer func() {
		if cap(line) <= 64<<10 { // do not let one huge record pin memory
			*bp = line[:0]
			linePool.Put(bp)
		}
	}()

	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	if shared != nil {
		if latest, _ := j.latest.get(r.TraceID); latest != shared.prev {
			// Another line of the trace was written since we looked.
			line, argsLen = r.appendJSON(line[:0], nil)
			line = append(line, '\n')
		}
	}
	var werr error
	if len(j.buf) > 0 && len(j.buf)+len(line) > j.size {
		werr = j.flushLocked()
	}
	started := false // part of line already reached the writer
	if werr == nil && len(j.buf) == 0 && len(line) > j.size {
		// Too big to gather: write it alone, in one Write.
		n, err := j.w.Write(line)
		if err == nil && n < len(line) {
			err = io.ErrShortWrite
		}
		if err == nil {
			j.lines++
			j.wroteLocked(&r, argsLen)
			return nil
		}
		werr = fmt.Errorf("record: jsonl write: %w", err)
		line, started = line[n:], n > 0
	}
	if !started && len(j.buf)+len(line) > j.backlog {
		j.dropped++
		return fmt.Errorf("%w: %w", ErrBacklog, werr)
	}
	j.buf = append(j.buf, line...)
	j.lines++
	j.wroteLocked(&r, argsLen)
	j.armLocked()
	// An error here means the writer is failing, not that r was lost: it
	// waits in the backlog.
	return werr
}

// shareable returns what r's Args share with the latest line of its trace
// in this file, or nil when they are to be written whole.
func (j *JSONL) shareable(r *Record) *argsLink {
	l := r.link
	if j.latest == nil || l == nil || !l.valid(r.Args) {
		return nil
	}
	j.mu.Lock()
	latest, _ := j.latest.get(r.TraceID)
	j.mu.Unlock()
	if latest != l.prev {
		return nil
	}
	return l
}

// wroteLocked notes r as the latest line of its trace, whose Args take
// argsLen bytes once read back: a reader counts them so, and must forget
// no record this writer remembers.
func (j *JSONL) wroteLocked(r *Record, argsLen int) {
	switch {
	case j.latest == nil:
	case r.ArgsPrefix != nil: // partial Args: no line may name it
		j.latest.forget(r.TraceID)
	default:
		j.latest.put(r.TraceID, r.CallID, argsLen)
	}
}

// armLocked makes sure buffered lines are written within the interval.
func (j *JSONL) armLocked() {
	if j.interval < 0 || j.armed || len(j.buf) == 0 {
		return
	}
	j.armed = true
	if j.timer == nil {
		j.timer = time.AfterFunc(j.interval, j.tick)
		return
	}
	j.timer.Reset(j.interval)
}

func (j *JSONL) tick() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.armed = false
	if !j.closed {
		// A failure keeps the bytes; the next Append, Flush or Close retries
		// and reports it.
		_ = j.flushLocked()
	}
}

func (j *JSONL) flushLocked() error {
	if len(j.buf) == 0 {
		return nil
	}
	n, err := j.w.Write(j.buf)
	if err == nil && n < len(j.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Keep what was not written; a later write continues the same line.
		j.buf = j.buf[:copy(j.buf, j.buf[n:])]
		return fmt.Errorf("record: jsonl write: %w", err)
	}
	j.buf = j.buf[:0]
	if cap(j.buf) > 4*j.size {
		j.buf = nil // a burst of huge lines should not pin memory
	}
	return nil
}

// Flush writes the buffered lines.
func (j *JSONL) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flushLocked()
}

// Close flushes the buffered lines and, for a file opened by [OpenJSONL],
// syncs and closes it. Later Appends return [ErrClosed]. Calling Close
// again returns nil.
func (j *JSONL) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	if j.timer != nil {
		j.timer.Stop()
	}
	err := j.flushLocked()
	if j.file != nil {
		err = errors.Join(err, j.file.Sync(), j.file.Close())
	}
	return err
}

// JSONLStats counts what a [JSONL] sink did.
type JSONLStats struct {
	Lines    uint64 // records accepted (written or buffered)
	Dropped  uint64 // records refused because the backlog was full
	Buffered int    // bytes waiting to be written
}

// Stats returns the counters.
func (j *JSONL) Stats() JSONLStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	return JSONLStats{Lines: j.lines, Dropped: j.dropped, Buffered: len(j.buf)}
}

// maxRepairTail is the longest torn tail RepairJSONL reads to see whether
// it is a whole record after all; a longer one is cut without looking.
const maxRepairTail = 16 << 20

// RepairJSONL makes the file at path end with a whole line, as a crash in
// the middle of a write can leave it otherwise. When the bytes after the
// last newline are a whole JSON value, a newline is added; otherwise they
// are cut off. It returns how many bytes were cut.
func RepairJSONL(path string) (cut int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("record: repair: %w", err)
	}
	cut, err = repairTail(f)
	return cut, errors.Join(err, f.Close())
}

func repairTail(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return 0, nil
	}
	// Find the start of the torn line, reading backwards in chunks.
	start := int64(0)
	chunk := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := min(int64(len(chunk)), end)
		if _, err := f.ReadAt(chunk[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk[:n], '\n'); i >= 0 {
			start = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if tail := size - start; tail <= maxRepairTail {
		b := make([]byte, tail)
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if json.Valid(b) {
			// A whole record that only lacks its newline.
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				return 0, err
			}
			_, err := f.Write([]byte{'\n'})
			return 0, err
		}
	}
	return size - start, f.Truncate(start)
}

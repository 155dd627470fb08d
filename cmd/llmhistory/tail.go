package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

func init() {
	register("tail", "follow a JSONL history file or a store as records arrive", runTail)
}

const tailAbout = `Tail prints the last -n records of a JSONL history file, then follows the
file as records are appended, one line per record: errors in red, retries
folded into a record and detected history reads highlighted. It notices a
file that is truncated or replaced (log rotation) and starts again from its
beginning. Interrupt (Ctrl-C) to stop. On a terminal a line fits its
width; colour follows -color (auto: only on a terminal, and never with
NO_COLOR set). Like the slog sink, tail never prints args, kwargs, output
or program source.

FILE may be - for standard input, which is read to its end and its last
-n records printed (a pipe cannot be followed past its end). It may be a
store's URL (sqlite:FILE, postgres://...): tail prints the newest -n
records the store holds, then each record as the store takes it, from
whichever process or replica wrote it.

Lines that are not records (not JSON, or without the fields every record
has) are reported on standard error, the first 20 of each kind, and
skipped; a line still being written is waited for. A file with lines of
which none is a record is not a history file: tail says so and exits 1.`

// maxTailLine bounds a line tail will wait for: past it the line is
// reported and skipped, so a file that is not JSONL cannot eat memory.
const maxTailLine = record.DefaultMaxLineBytes

func runTail(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("tail", "[flags] FILE|URL", tailAbout, io)
	n := fs.Int("n", 10, "print the last `N` records first (0: none)")
	follow := fs.Bool("f", true, "keep following the file; -f=false prints and exits")
	poll := fs.Duration("poll", 250*time.Millisecond, "how often to look for new records")
	colorMode := fs.String("color", "auto", "colour: auto, always or never")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(io.err, "llmhistory tail: want exactly one FILE or store URL")
		fs.Usage()
		return exitUsage
	}
	if *n < 0 {
		fmt.Fprintf(io.err, "llmhistory tail: -n must be 0 or more, not %d\n", *n)
		return exitUsage
	}
	if *poll <= 0 {
		fmt.Fprintf(io.err, "llmhistory tail: -poll must be more than 0, not %v\n", *poll)
		return exitUsage
	}
	color, err := useColor(*colorMode, io.out)
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory tail:", err)
		return exitUsage
	}
	t := &tailer{cmd: "tail", path: fs.Arg(0), con: newConsole(io.out, color, termWidth(io.out)), warn: io.err, poll: *poll}
	if t.path == "-" {
		t.path, t.r = "<stdin>", io.in
		*follow = false
	}
	err = t.run(ctx, *n, *follow)
	t.summarize()
	if err != nil {
		fmt.Fprintln(io.err, "llmhistory tail:", err)
		return exitFailure
	}
	return exitOK
}

// maxTailWarnings bounds the lines of one kind of trouble (not a record,
// too long) listed one by one, as report does; the rest are counted.
const maxTailWarnings = 20

// tailer reads a JSONL history file, or standard input, line by line:
// every whole record to a function, every line that is not one reported
// (bounded), and then, when asked, follows the file as it grows. tail
// prints what it reads; export sends it.
type tailer struct {
	cmd  string // the subcommand, for its messages
	path string
	con  *console // tail's; nil for export
	warn io.Writer
	poll time.Duration

	f       *os.File     // the file followed; nil when reading r
	r       io.Reader    // standard input, read once to its end
	st      *storeTailer // a store, when path is its URL
	off     int64        // bytes of f consumed, up to the end of the last whole line
	line    int          // number of the last whole line consumed
	partial int64        // bytes read of the current, unfinished line
	pending []byte       // those bytes, unless skip
	skip    bool         // the current line grew past maxTailLine: drop it at its newline
	// lineUnknown: the file was read from its end (printLastFromEnd), so
	// line is not the number of the lines before.
	lineUnknown bool

	records, bad int                // whole lines read that were, and were not, records
	args         *record.ArgsJoiner // completes the Args of records written with args_prefix
	listed       map[string]int     // lines of each kind of trouble listed
	unlisted     map[string]int     // and those past maxTailWarnings
}

// errNotHistory is a file with lines of which none is a record.
type errNotHistory struct {
	path  string
	lines int
}

func (e errNotHistory) Error() string {
	if e.lines == 1 {
		return e.path + ": not a history file: its one line is not a record"
	}
	return fmt.Sprintf("%s: not a history file: none of its %s lines is a record", e.path, group(int64(e.lines)))
}

func (t *tailer) run(ctx context.Context, n int, follow bool) error {
	if err := t.open(); err != nil {
		return err
	}
	defer t.close()
	if err := t.printLast(ctx, n); err != nil {
		return err
	}
	if err := t.history(); err != nil {
		return err
	}
	if !follow {
		return nil
	}
	return t.follow(ctx, t.con.print, nil)
}

// open opens the file or the store, unless the tailer reads standard
// input.
func (t *tailer) open() error {
	if t.r != nil {
		return nil
	}
	if isStoreURL(t.path) {
		return t.openStore()
	}
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	t.f, t.r = f, f
	return nil
}

func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
	}
	if t.st != nil {
		t.st.s.Close()
	}
}

// history is errNotHistory when the lines read so far are some and none
// is a record.
func (t *tailer) history() error {
	if t.records == 0 && t.bad > 0 {
		return errNotHistory{t.path, t.bad}
	}
	return nil
}

// follow looks for new records every t.poll, hands each to emit and calls
// polled (when not nil) after each look, until ctx ends.
func (t *tailer) follow(ctx context.Context, emit func(record.Record), polled func()) error {
	tick := time.NewTicker(t.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if t.st == nil {
			if err := t.check(); err != nil {
				return err
			}
		}
		if err := t.consume(ctx, emit); err != nil {
			return err
		}
		if polled != nil {
			polled()
		}
	}
}

// trouble reports a line that is not a record, listing the first few of
// each kind and counting the rest.
func (t *tailer) trouble(kind, format string, args ...any) {
	if t.listed == nil {
		t.listed, t.unlisted = map[string]int{}, map[string]int{}
	}
	switch t.listed[kind] {
	case maxTailWarnings:
		t.unlisted[kind]++
		if t.unlisted[kind] == 1 {
			fmt.Fprintf(t.warn, "%s: more %s; no longer listing them\n", t.path, kind)
		}
	default:
		t.listed[kind]++
		fmt.Fprintf(t.warn, format, args...)
	}
}

// summarize says how many lines of each kind were not listed.
func (t *tailer) summarize() {
	for kind, n := range t.unlisted {
		fmt.Fprintf(t.warn, "llmhistory %s: %s: %s more %s\n", t.cmd, t.path, group(int64(n)), kind)
	}
}

// readWholeBelow is the size under which tail reads a file front to back
// to print its last records; a larger one is read from its end.
const readWholeBelow = 1 << 20

// printLast prints the last n whole records and leaves t.off at the end of
// the last whole line, so following picks up right after. A large file is
// read backwards from its end, only as far as its last n records: tail -n
// 3 of a file of millions of records reads a few kilobytes. Standard
// input, and a small file, is read once, front to back, keeping only n
// records.
func (t *tailer) printLast(ctx context.Context, n int) error {
	if t.st != nil {
		return t.printLastStore(ctx, n)
	}
	if t.f != nil && n > 0 {
		if st, err := t.f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() >= readWholeBelow {
			return t.printLastFromEnd(n, st.Size())
		}
	}
	ring := make([]record.Record, 0, n)
	next := 0
	err := t.consume(ctx, func(r record.Record) {
		if n == 0 {
			return
		}
		if len(ring) < n {
			ring = append(ring, r)
			return
		}
		ring[next] = r
		next = (next + 1) % n
	})
	for i := range ring {
		t.con.print(ring[(next+i)%len(ring)])
	}
	return err
}

// printLastFromEnd is printLast for a regular file of size bytes, read
// backwards: the bytes after its last newline are the line being written
// (held, as consume holds them), and whole lines are read from there
// towards the start until n records are found. Lines before are never
// read, so their numbers are not known: a line that is not a record is
// reported by where it starts.
func (t *tailer) printLastFromEnd(n int, size int64) error {
	const chunk = 64 << 10
	var (
		recs  []record.Record // newest first
		bad   []string        // the trouble found, newest first
		carry []byte          // the start of the line read last, which began before its chunk
		long  bool            // that line is longer than maxTailLine: dropped
		end   = size          // bytes from end on are read
		buf   = make([]byte, chunk)
	)
	// take handles one whole line that starts at off.
	take := func(line []byte, off int64, tooLong bool) {
		switch line = bytes.TrimSpace(line); {
		case tooLong:
			bad = append(bad, fmt.Sprintf("%s: the line at byte %d is longer than %d MiB; skipped\n", t.path, off, maxTailLine>>20))
		case len(line) == 0:
		default:
			r, err := record.DecodeLine(line)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: the line at byte %d: %v\n", t.path, off, err))
				return
			}
			recs = append(recs, r)
		}
	}
	first := true // the chunk at the end of the file
	for end > 0 && len(recs) < n {
		start := max(0, end-chunk)
		b := buf[:end-start]
		if _, err := t.f.ReadAt(b, start); err != nil {
			return err
		}
		if first {
			// What follows the last newline is a line still being
			// written: consume takes it on when it ends.
			first = false
			i := bytes.LastIndexByte(b, '\n')
			for i < 0 && start > 0 {
				// The unfinished line is longer than a chunk: find its start.
				end, start = start, max(0, start-chunk)
				b = buf[:end-start]
				if _, err := t.f.ReadAt(b, start); err != nil {
					return err
				}
				i = bytes.LastIndexByte(b, '\n')
			}
			t.off = start + int64(i) + 1
			t.partial = size - t.off
			if t.partial > maxTailLine {
				t.skip = true
			} else if t.partial > 0 {
				t.pending = make([]byte, t.partial)
				if _, err := t.f.ReadAt(t.pending, t.off); err != nil {
					return err
				}
			}
			b = b[:max(i, 0)] // the whole lines of this chunk, the last newline left out
			if i < 0 {
				break // no newline at all: no whole line
			}
		}
		// b holds [start, start+len(b)); carry continues its last line.
		for len(recs) < n {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			line := b[i+1:]
			if len(carry) > 0 || long {
				line = append(append([]byte(nil), line...), carry...)
			}
			take(line, start+int64(i)+1, long || len(line) > maxTailLine)
			carry, long = carry[:0], false
			b = b[:i]
		}
		if len(recs) >= n {
			break
		}
		// b is the start of a line that began before this chunk.
		if long || len(b)+len(carry) > maxTailLine {
			carry, long = carry[:0], true
		} else {
			carry = append(append([]byte(nil), b...), carry...)
		}
		if start == 0 {
			take(carry, 0, long)
		}
		end = start
	}
	t.lineUnknown = true
	for i := len(bad) - 1; i >= 0; i-- {
		t.bad++
		t.trouble("lines that are not records", "%s", bad[i])
	}
	for i := min(len(recs), n) - 1; i >= 0; i-- {
		t.records++
		t.join(&recs[i])
		t.con.print(recs[i])
	}
	return nil
}

// where names the line consume has just ended, for a message:
// "history.jsonl:42", or, after printLastFromEnd, which does not count
// the lines it skips, by the byte it starts at.
func (t *tailer) where(start int64) string {
	if t.lineUnknown {
		return fmt.Sprintf("%s: the line at byte %d", t.path, start)
	}
	return fmt.Sprintf("%s:%d", t.path, t.line)
}

// consume reads from t.off to the end of the file, hands every whole,
// valid record to emit, and keeps a trailing partial line for next time.
// When ctx ends it stops before its next read (what it read is handed
// on), and returns nil.
func (t *tailer) consume(ctx context.Context, emit func(record.Record)) error {
	if t.st != nil {
		return t.consumeStore(ctx, emit)
	}
	if t.f != nil {
		if _, err := t.f.Seek(t.off+t.partial, io.SeekStart); err != nil {
			return err
		}
	}
	buf := make([]byte, 256<<10)
	for {
		if ctx.Err() != nil {
			return nil
		}
		m, err := t.r.Read(buf)
		chunk := buf[:m]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				t.hold(chunk)
				break
			}
			t.hold(chunk[:i])
			lineStart := t.off
			t.off += t.partial + 1
			t.line++
			if t.skip {
				t.bad++
				t.trouble("lines that are too long", "%s: line longer than %d MiB; skipped\n", t.where(lineStart), maxTailLine>>20)
			} else if line := bytes.TrimSpace(t.pending); len(line) > 0 {
				if r, err := record.DecodeLine(line); err != nil {
					t.bad++
					t.trouble("lines that are not records", "%s: %v\n", t.where(lineStart), err)
				} else {
					t.records++
					t.join(&r)
					emit(r)
				}
			}
			t.partial, t.pending, t.skip = 0, t.pending[:0], false
			chunk = chunk[i+1:]
		}
		if errors.Is(err, io.EOF) || (err == nil && m == 0) {
			if t.f == nil {
				t.flushLast(emit) // standard input ends here: its last line too
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// flushLast takes a last line without a newline, at the end of an input
// that will not grow, as a line: a record if it is one, skipped quietly if
// it is a torn write.
func (t *tailer) flushLast(emit func(record.Record)) {
	line := bytes.TrimSpace(t.pending)
	if t.skip || len(line) == 0 {
		return
	}
	t.line++
	if r, err := record.DecodeLine(line); err == nil {
		t.records++
		t.join(&r)
		emit(r)
	} else if record.ValidJSON(line) {
		t.bad++
		t.trouble("lines that are not records", "%s:%d: %v\n", t.path, t.line, err)
	}
	t.partial, t.pending = 0, t.pending[:0]
}

// join completes r's Args from the records read before it, when it was
// written with args_prefix: export sends them whole (with -content).
func (t *tailer) join(r *record.Record) {
	if t.args == nil {
		t.args = record.NewArgsJoiner()
	}
	t.args.Join(r)
}

// hold keeps b as part of the current line, up to maxTailLine.
func (t *tailer) hold(b []byte) {
	t.partial += int64(len(b))
	if t.skip {
		return
	}
	if len(t.pending)+len(b) > maxTailLine {
		t.skip, t.pending = true, nil
		return
	}
	t.pending = append(t.pending, b...)
}

// check notices a file truncated in place or replaced under its name, and
// starts again from the beginning of what is there now.
func (t *tailer) check() error {
	cur, err := t.f.Stat()
	if err != nil {
		return err
	}
	if named, err := os.Stat(t.path); err == nil && !os.SameFile(cur, named) {
		f, err := os.Open(t.path)
		if err != nil {
			return nil // between rename and create: look again next tick
		}
		t.f.Close()
		t.f, t.r = f, f
		fmt.Fprintf(t.warn, "%s: replaced; reading the new file from its start\n", t.path)
		t.restart()
		return nil
	}
	if cur.Size() < t.off+t.partial {
		fmt.Fprintf(t.warn, "%s: truncated; reading from its start\n", t.path)
		t.restart()
	}
	return nil
}

func (t *tailer) restart() {
	t.off, t.line, t.partial, t.pending, t.skip, t.lineUnknown = 0, 0, 0, t.pending[:0], false, false
}

package replay

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// errReadAfterClose is what a replayed body's Read returns once closed,
// as net/http's bodies do.
var errReadAfterClose = errors.New("http: read on closed response body")

// playBody replays a recorded body frame by frame: each frame is given by
// one or more Reads of its own, never merged with the next, so a stream
// reader sees the events one at a time as it did live. It honours the
// request's context and Close at any point, including during a wait.
type playBody struct {
	ctx    context.Context
	frames [][]byte
	gaps   []time.Duration // wait before each frame; nil means none
	end    error           // what Read returns after the last frame
	sleep  func(context.Context, time.Duration) error

	// Owned by the reading goroutine (one Read at a time, as io.Reader).
	i, off int
	waited bool

	mu     sync.Mutex
	closed bool
	wake   context.CancelFunc // ends a wait when Close comes; nil until a wait
}

func (b *playBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return 0, errReadAfterClose
	}
	for {
		if b.i >= len(b.frames) {
			return 0, b.end
		}
		if !b.waited {
			b.waited = true
			if b.gaps != nil && b.gaps[b.i] > 0 {
				if err := b.wait(b.gaps[b.i]); err != nil {
					return 0, err
				}
			}
		}
		f := b.frames[b.i]
		if b.off < len(f) {
			if len(p) == 0 {
				return 0, nil
			}
			n := copy(p, f[b.off:])
			b.off += n
			if b.off == len(f) {
				b.i, b.off, b.waited = b.i+1, 0, false
			}
			return n, nil
		}
		b.i, b.off, b.waited = b.i+1, 0, false // an empty frame
	}
}

// wait sleeps d, or less if the context ends or the body is closed.
func (b *playBody) wait(d time.Duration) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errReadAfterClose
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.wake = cancel
	b.mu.Unlock()
	err := b.sleep(ctx, d)
	cancel()
	if err == nil {
		return nil
	}
	if e := b.ctx.Err(); e != nil {
		return e
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return errReadAfterClose
	}
	return err
}

func (b *playBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.wake != nil {
		b.wake()
	}
	return nil
}

// sleep waits d or until ctx ends: the default of WithSleep.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recBody tees a live response body into the interaction being recorded:
// the caller gets every byte as it arrives, and the interaction is written
// once, when the body ends (EOF, a read error, Close, or the cassette's
// Close). A non-stream body closed before its end is drained first, so
// the cassette holds the whole response; a stream is not (a stream closed
// half way was abandoned on purpose).
type recBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	start   time.Time
	stream  bool
	sse     bool
	maxBody int64
	finish  func(r *recBody, end End, err error) error // called once, by end

	readMu sync.Mutex // held during a read of rc; Close drains only if free

	mu     sync.Mutex
	body   []byte  // the whole body (not a stream)
	frames []Frame // finished frames (a stream)
	split  sseSplitter
	last   time.Duration // when the last bytes arrived
	size   int64
	over   bool // more than maxBody arrived: not recorded
	done   bool
	result error // what finish said: a refused interaction's error
}

func (b *recBody) Read(p []byte) (int, error) {
	b.readMu.Lock()
	n, err := b.rc.Read(p)
	b.readMu.Unlock()
	if n > 0 {
		b.take(p[:n])
	}
	switch {
	case err == io.EOF:
		if ferr := b.end(EndEOF, nil); ferr != nil {
			return n, ferr // fail loudly rather than leave the call unrecorded in silence
		}
	case err != nil:
		if b.ctx.Err() != nil { // the caller gave up: as if it had closed the body
			b.end(EndClosed, nil)
		} else {
			b.end(EndError, err)
		}
	}
	return n, err
}

// take records bytes that arrived.
func (b *recBody) take(p []byte) {
	at := time.Since(b.start)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.over {
		return
	}
	b.size += int64(len(p))
	if b.size > b.maxBody {
		b.over = true
		b.body, b.frames, b.split = nil, nil, sseSplitter{}
		return
	}
	b.last = at
	switch {
	case !b.stream:
		b.body = append(b.body, p...)
	case b.sse:
		for _, f := range b.split.feed(p) {
			b.frames = append(b.frames, Frame{At: at, Data: f})
		}
	default:
		b.frames = append(b.frames, Frame{At: at, Data: append([]byte(nil), p...)})
	}
}

func (b *recBody) Close() error {
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if !done && !b.stream && b.readMu.TryLock() {
		b.drain()
		b.readMu.Unlock()
	}
	// End before closing: a Read that fails because of this Close is not
	// a read error of the provider's.
	ferr := b.end(EndClosed, nil)
	err := b.rc.Close()
	if ferr != nil {
		return ferr
	}
	return err
}

// drain reads the rest of a non-stream body, up to the size limit, so the
// cassette holds the whole response.
func (b *recBody) drain() {
	buf := make([]byte, 32<<10)
	for {
		n, err := b.rc.Read(buf)
		if n > 0 {
			b.take(buf[:n])
		}
		b.mu.Lock()
		over := b.over
		b.mu.Unlock()
		switch {
		case err == io.EOF:
			b.end(EndEOF, nil)
			return
		case err != nil:
			b.end(EndError, err)
			return
		case over:
			return
		}
	}
}

// end finalizes the interaction once and returns what finish said, then
// and on every later call.
func (b *recBody) end(end End, err error) error {
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return b.result
	}
	b.done = true
	if tail := b.split.rest(); len(tail) > 0 {
		b.frames = append(b.frames, Frame{At: b.last, Data: tail})
	}
	b.mu.Unlock()
	res := b.finish(b, end, err)
	b.mu.Lock()
	b.result = res
	b.mu.Unlock()
	return res
}

// sseSplitter cuts a server-sent event stream into events, each with the
// blank line that ends it, whatever the reads' boundaries were.
type sseSplitter struct {
	pending []byte
	scanned int  // bytes of pending already looked at
	blank   bool // the line being scanned is empty so far
	started bool
}

// feed adds p and returns the events it completed.
func (s *sseSplitter) feed(p []byte) [][]byte {
	if !s.started {
		s.started, s.blank = true, true
	}
	s.pending = append(s.pending, p...)
	var out [][]byte
	i := s.scanned
	for i < len(s.pending) {
		c := s.pending[i]
		if c != '\r' && c != '\n' {
			s.blank = false
			i++
			continue
		}
		n := 1
		if c == '\r' {
			if i+1 == len(s.pending) {
				break // maybe the first half of a CRLF: wait for the next byte
			}
			if s.pending[i+1] == '\n' {
				n = 2
			}
		}
		i += n
		if s.blank { // an empty line ends the event
			out = append(out, append([]byte(nil), s.pending[:i]...))
			s.pending = s.pending[i:]
			i = 0
		}
		s.blank = true
	}
	s.scanned = i
	if len(s.pending) == 0 {
		s.pending = nil // let the buffer go between events
	}
	return out
}

// rest returns bytes of an unfinished event, at the end of the stream.
func (s *sseSplitter) rest() []byte {
	r := s.pending
	*s = sseSplitter{}
	return r
}

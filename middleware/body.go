package middleware

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// body wraps a response body: bytes pass through to the caller unchanged
// and as they arrive, while a copy goes into a bounded capture. The record
// is finalized exactly once, on the first of EOF, a read error, Close, the
// end of the call's context, or the recorder closing.
type body struct {
	rc   io.ReadCloser
	a    *attempt
	info finishInfo

	mu    sync.Mutex // guards cap, first and stop: finish may run beside Read
	cap   capture
	first time.Time   // when the first bytes of the body were read
	stop  func() bool // unregisters the context watcher
	done  atomic.Bool
	endMu sync.Mutex // held while finishing
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && !b.done.Load() {
		b.mu.Lock()
		if !b.done.Load() {
			if b.cap.total == 0 && b.info.stream {
				b.first = b.a.r.cfg.now()
			}
			b.cap.write(p[:n])
		}
		b.mu.Unlock()
	}
	if err != nil {
		// finish even when the context watcher got there first: it waits
		// for the record, which the caller may look for next.
		if err == io.EOF {
			b.finish(endEOF, nil)
		} else {
			b.finish(endReadError, err)
		}
	}
	return n, err
}

// Close finalizes the record from what was read, then closes the body. It
// never reads: the caller is done with the body, and a stalled server must
// not turn its Close into a wait (an SDK closes a 429 unread before it
// retries). The record is settled first, so that it does not wait on the
// underlying Close either.
func (b *body) Close() error {
	b.finish(endClose, nil)
	return b.rc.Close()
}

// finish finalizes the record once. A later call waits until the first
// is done, so that whoever sees the body end (a Read failing because the
// context's deadline passed) also sees its record.
func (b *body) finish(reason endReason, err error) {
	b.endMu.Lock()
	defer b.endMu.Unlock()
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	b.mu.Lock() // no Read writes the capture after this: it checks done under mu
	stop, first := b.stop, b.first
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
	b.a.r.forget(b)
	f := b.info
	f.reason, f.err, f.cap, f.firstChunk = reason, err, &b.cap, first
	b.a.finish(f)
}

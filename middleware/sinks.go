package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/record"
)

// sink is one sink of a recorder. Each has a queue of its own (or, with
// WithSyncSinks, is fed on the worker), so one stuck, slow or panicking
// sink costs no other sink its records.
type sink struct {
	s     record.Sink
	typ   string        // its type, for errors and Stats
	queue *record.Async // nil with WithSyncSinks
	// lends: s keeps nothing of a record once Append returns, so a
	// record's Args may be lent to it (lendsArgs)
	lends bool

	dropped         atomic.Uint64
	written, failed atomic.Uint64 // with WithSyncSinks; the queue counts its own
}

// SinkStats counts what reached one sink of a recorder.
type SinkStats struct {
	Sink    string // the sink's type, e.g. "*record.JSONL"
	Written uint64 // records it took
	Dropped uint64 // records it never got: its queue was full, or it was closed
	Errors  uint64 // records it failed on, by an error or a panic
}

func (r *Recorder) newSinks(cfg *config) {
	for _, s := range cfg.sinks {
		k := &sink{s: s, typ: fmt.Sprintf("%T", s)}
		var queued record.Sink = s
		if lendsArgs(s) {
			k.lends = true
			queued = lendingSink{s}
		}
		if !cfg.syncSinks {
			k.queue = record.NewAsync(queued, &record.AsyncOptions{
				QueueSize: cfg.sinkQueue,
				OnError:   r.sinkFailed,
			})
		}
		r.sinks = append(r.sinks, k)
	}
}

// lendsArgs reports whether a record's Args may be lent to s: whether s
// keeps nothing of them once its Append returns. The sinks of package
// record that do are known here: JSONL encodes a record before Append
// returns, Slog never logs Args, and Memory's Append stores a copy. Types
// are matched exactly, not by a method: a type that embeds one of them
// to change its Append would have the method too.
func lendsArgs(s record.Sink) bool {
	switch s.(type) {
	case *record.JSONL, *record.Slog, *record.Memory:
		return true
	}
	return false
}

// allLend reports whether records' Args may be lent to every sink.
func allLend(sinks []*sink) bool {
	for _, k := range sinks {
		if !k.lends {
			return false
		}
	}
	return true
}

// appendSinks hands rec to every sink. A non-nil l holds the pool buffer
// rec's Args are in: it is taken back once every sink is done with them,
// when the loop is over or the last of the sink queues has fed its sink.
func (r *Recorder) appendSinks(ctx context.Context, rec record.Record, l *lease) {
	if l != nil {
		// The lease goes into each queue as the record's context.
		l.Context = ctx
		l.readers.Store(1) // this goroutine's, until the loop is done
		defer l.release()
		ctx = l
	}
	for _, k := range r.sinks {
		if k.queue != nil {
			if l != nil {
				l.readers.Add(1) // the queue's, until its sink has the record
			}
			if err := k.queue.Append(ctx, rec); err != nil {
				if l != nil {
					l.release() // never to reach the sink
				}
				k.dropped.Add(1)
				r.trouble("a sink queue is full or closed; records are dropped", err)
			}
			continue
		}
		if err := safeAppend(context.WithoutCancel(ctx), k.s, rec); err != nil {
			k.failed.Add(1)
			r.sinkFailed(err)
			continue
		}
		k.written.Add(1)
	}
}

// safeAppend calls s.Append, turning a panic into a *record.PanicError.
func safeAppend(ctx context.Context, s record.Sink, rec record.Record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &record.PanicError{Value: p, Method: "Append"}
		}
	}()
	return s.Append(ctx, rec)
}

// A lease counts the readers of a pool buffer that a record's Args are
// lent in: the worker while it hands the record out, and each sink queue
// until its sink has taken the record. The last one gives the buffer
// back. A record a queue never delivers (it was given up on at
// shutdown) keeps its buffer from the pool, for the collector to take.
// A lease is the context its record is queued with, so that the record's
// sink finds it (lendingSink) with no allocation: it lives in the
// attempt.
type lease struct {
	context.Context
	readers atomic.Int32
	buf     *[]byte
}

func (l *lease) release() {
	if l.readers.Add(-1) == 0 {
		releaseBuf(l.buf)
	}
}

type leaseKey struct{}

func (l *lease) Value(key any) any {
	if key == (leaseKey{}) {
		return l
	}
	return l.Context.Value(key)
}

// lendingSink is what a sink queue feeds a sink that lends (lendsArgs)
// through: it gives up the queue's hold on the record's Args once the
// sink has returned.
type lendingSink struct{ s record.Sink }

func (s lendingSink) Append(ctx context.Context, rec record.Record) error {
	if l, ok := ctx.Value(leaseKey{}).(*lease); ok {
		defer l.release() // after the sink, even if it panics
	}
	return s.s.Append(ctx, rec)
}

// Flush and Close reach the sink itself.
func (s lendingSink) Flush() error { return record.Flush(s.s) }
func (s lendingSink) Close() error { return record.Close(s.s) }

func (r *Recorder) sinkFailed(err error) {
	r.trouble("a sink failed", err)
}

func (r *Recorder) flushSinks() error {
	var errs []error
	for _, k := range r.sinks {
		if k.queue != nil {
			errs = append(errs, k.queue.Flush())
		} else {
			errs = append(errs, record.Flush(k.s))
		}
	}
	return errors.Join(errs...)
}

// sinkStats returns each sink's counters, and their sums.
func (r *Recorder) sinkStats() (all []SinkStats, dropped, failed uint64) {
	for _, k := range r.sinks {
		st := SinkStats{Sink: k.typ, Dropped: k.dropped.Load()}
		if k.queue != nil {
			qs := k.queue.Stats()
			st.Written, st.Errors = qs.Written, qs.Errors
		} else {
			st.Written, st.Errors = k.written.Load(), k.failed.Load()
		}
		all = append(all, st)
		dropped += st.Dropped
		failed += st.Errors
	}
	return all, dropped, failed
}

// shutdownSinks drains, flushes and closes every sink at once, each on
// its own, until ctx ends; then it gives up on those not done.
func (r *Recorder) shutdownSinks(ctx context.Context) error {
	errs := make([]error, len(r.sinks))
	var wg sync.WaitGroup
	for i, k := range r.sinks {
		wg.Go(func() {
			if k.queue != nil {
				errs[i] = k.queue.Shutdown(ctx)
				return
			}
			// Fed on the worker, which has stopped: only Close is left.
			closed := make(chan error, 1)
			go func() { closed <- record.Close(k.s) }()
			select {
			case errs[i] = <-closed:
			case <-ctx.Done():
				errs[i] = &record.UndeliveredError{Sink: k.typ, Closing: true, Err: ctx.Err()}
			}
		})
	}
	wg.Wait()
	var gaveUp *ShutdownError
	for i, err := range errs {
		var ue *record.UndeliveredError
		if !errors.As(err, &ue) {
			continue
		}
		if gaveUp == nil {
			gaveUp = &ShutdownError{Err: ue.Err}
		}
		gaveUp.Sinks = append(gaveUp.Sinks, r.sinks[i].typ)
		gaveUp.Undelivered += ue.Records
		errs[i] = nil
	}
	if gaveUp != nil {
		errs = append(errs, gaveUp)
	}
	return errors.Join(errs...)
}

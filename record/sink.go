package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Sink receives finished records.
//
// Append is called once per record, possibly from many goroutines at once,
// so a Sink must be safe for concurrent use (wrap one that is not in
// [NewAsync], which calls it from a single goroutine). A record handed to
// Append is never modified afterwards, so a sink may keep it; it must not
// modify the record itself. An error from Append is counted and logged by
// the caller and never reaches the call being recorded.
//
// A sink that buffers implements [Flusher]; one that holds resources
// implements [io.Closer]. Closing a recorder flushes and closes its sinks.
type Sink interface {
	Append(ctx context.Context, r Record) error
}

// BatchSink is a [Sink] that can take several records in one call, as a
// database writes them in one transaction. [Async] hands a BatchSink the
// records that queued up while it was busy, up to [AsyncOptions].MaxBatch
// at once, so the sink's cost per record falls as the load rises; a
// record alone in the queue is handed over alone, without waiting for
// company.
//
// AppendBatch takes every record of rs or none of them: an error counts
// each one as failed. It must not keep rs once it returns (the records
// themselves it may keep), nor modify them.
type BatchSink interface {
	Sink
	AppendBatch(ctx context.Context, rs []Record) error
}

// SinkFunc adapts an ordinary function to [Sink].
type SinkFunc func(ctx context.Context, r Record) error

// Append calls f(ctx, r).
func (f SinkFunc) Append(ctx context.Context, r Record) error { return f(ctx, r) }

// Flusher is implemented by sinks that buffer records.
type Flusher interface {
	Flush() error
}

// ErrClosed is returned by Append on a sink that has been closed.
var ErrClosed = errors.New("record: sink is closed")

// ErrQueueFull is returned by [Async.Append] when its queue is full; the
// record is dropped and counted.
var ErrQueueFull = errors.New("record: async queue is full; record dropped")

// Flush flushes s if it buffers; it is a no-op otherwise. A panic in the
// sink's Flush is returned as a [*PanicError].
func Flush(s Sink) (err error) {
	f, ok := s.(Flusher)
	if !ok {
		return nil
	}
	defer recoverInto(&err, "Flush")
	return f.Flush()
}

// Close flushes s and closes it if it holds resources. A panic in the
// sink's Close or Flush is returned as a [*PanicError].
func Close(s Sink) (err error) {
	c, ok := s.(io.Closer)
	if !ok {
		return Flush(s)
	}
	defer recoverInto(&err, "Close")
	return c.Close()
}

// recoverInto turns a panic of a sink's method into *err.
func recoverInto(err *error, method string) {
	if p := recover(); p != nil {
		*err = &PanicError{Value: p, Method: method}
	}
}

// Fanout appends each record to several sinks in order. One sink failing,
// even by panicking, does not keep the record from the others.
type Fanout struct {
	sinks []Sink
}

// NewFanout returns a sink that appends to every one of sinks; nil sinks
// are skipped.
func NewFanout(sinks ...Sink) *Fanout {
	f := &Fanout{}
	for _, s := range sinks {
		if s != nil {
			f.sinks = append(f.sinks, s)
		}
	}
	return f
}

// Append appends r to every sink and returns their errors joined.
func (f *Fanout) Append(ctx context.Context, r Record) error {
	var errs []error
	for _, s := range f.sinks {
		if err := safeAppend(ctx, s, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Flush flushes every sink that buffers.
func (f *Fanout) Flush() error {
	var errs []error
	for _, s := range f.sinks {
		errs = append(errs, Flush(s))
	}
	return errors.Join(errs...)
}

// Close flushes and closes every sink.
func (f *Fanout) Close() error {
	var errs []error
	for _, s := range f.sinks {
		errs = append(errs, Close(s))
	}
	return errors.Join(errs...)
}

// PanicError is the error a sink's panic is turned into.
type PanicError struct {
	Value  any    // what the sink panicked with
	Method string // the sink's method that panicked: "Append", "Flush", "Close"; "" when not a sink's
}

func (e *PanicError) Error() string {
	if e.Method == "" {
		return fmt.Sprintf("record: panic: %v", e.Value)
	}
	return fmt.Sprintf("record: sink panicked in %s: %v", e.Method, e.Value)
}

// safeAppend calls s.Append, turning a panic into a *PanicError.
func safeAppend(ctx context.Context, s Sink, r Record) (err error) {
	defer recoverInto(&err, "Append")
	return s.Append(ctx, r)
}

// UndeliveredError is returned by [Async.Shutdown] when its context ended
// before the sink behind it had taken every record and closed: the sink is
// stuck, or too slow for the time allowed. It says what did not get there.
type UndeliveredError struct {
	Sink    string // the sink given up on, by its type
	Records int    // records queued for it that it never took
	Closing bool   // it took every record but did not finish Close
	Err     error  // the context's error
}

func (e *UndeliveredError) Error() string {
	if e.Records == 0 && e.Closing {
		return fmt.Sprintf("record: gave up on sink %s while it was closing: %v", e.Sink, e.Err)
	}
	return fmt.Sprintf("record: gave up on sink %s: %d %s did not reach it: %v", e.Sink, e.Records, plural(e.Records, "record", "records"), e.Err)
}

func (e *UndeliveredError) Unwrap() error { return e.Err }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// AsyncOptions configures [NewAsync]. The zero value is the defaults.
type AsyncOptions struct {
	// QueueSize is how many records may wait for the sink; default 1024.
	QueueSize int
	// OnError, when set, is called from the worker goroutine with each
	// error the sink returns. Errors are counted either way.
	OnError func(error)
	// MaxBatch bounds the records handed at once to a sink that is a
	// [BatchSink]; default [DefaultMaxBatch]. 1 hands them one by one.
	MaxBatch int
}

// DefaultMaxBatch is how many queued records [Async] hands at most to a
// [BatchSink] in one call.
const DefaultMaxBatch = 512

// AsyncStats counts what an [Async] sink did.
type AsyncStats struct {
	Queued  int    // records waiting now
	Written uint64 // records the inner sink accepted
	Dropped uint64 // records refused because the queue was full
	Errors  uint64 // records the inner sink failed on (including panics)
}

// Async hands records to another sink from a goroutine of its own, through
// a bounded queue, so that a slow sink never blocks a call. When the queue
// is full a record is dropped and counted, never waited for. A
// [BatchSink] is handed the records queued behind each other in one call,
// with the first one's context.
type Async struct {
	inner    Sink
	onError  func(error)
	maxBatch int
	queue    chan asyncItem
	done     chan struct{}

	mu     sync.RWMutex // held for reading while sending, for writing to close
	closed bool

	written, dropped, errs atomic.Uint64
	waiting                atomic.Int64 // records queued or being appended
	closeOnce              sync.Once
	closeDone              chan struct{} // closed once the inner sink is closed
	closeErr               error         // set before closeDone is closed
}

type asyncItem struct {
	ctx   context.Context
	rec   Record
	flush chan error // non-nil: a flush request, answered when reached
}

// NewAsync starts a goroutine that appends queued records to inner. Call
// [Async.Close] to drain the queue and stop it. A nil opts means defaults.
func NewAsync(inner Sink, opts *AsyncOptions) *Async {
	var o AsyncOptions
	if opts != nil {
		o = *opts
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	a := &Async{
		inner:     inner,
		onError:   o.OnError,
		maxBatch:  o.MaxBatch,
		queue:     make(chan asyncItem, o.QueueSize),
		done:      make(chan struct{}),
		closeDone: make(chan struct{}),
	}
	go a.run()
	return a
}

// Append queues r without waiting. It returns [ErrQueueFull] when the queue
// is full and [ErrClosed] after Close. The context keeps its values but
// loses its cancellation: the record outlives the call that made it.
func (a *Async) Append(ctx context.Context, r Record) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		return ErrClosed
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx) // only cancelable contexts need it; saves an allocation
	}
	a.waiting.Add(1)
	select {
	case a.queue <- asyncItem{ctx: ctx, rec: r}:
		return nil
	default:
		a.waiting.Add(-1)
		a.dropped.Add(1)
		return ErrQueueFull
	}
}

// Flush waits until every record queued before it has reached the inner
// sink, then flushes that sink.
func (a *Async) Flush() error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return ErrClosed
	}
	reply := make(chan error, 1)
	a.queue <- asyncItem{flush: reply} // waits for room: a flush is not droppable
	a.mu.RUnlock()
	return <-reply
}

// Close stops accepting records, waits until the queue is drained, then
// flushes and closes the inner sink. It is safe to call more than once. A
// sink that never returns holds Close forever; [Async.Shutdown] bounds the
// wait.
func (a *Async) Close() error { return a.Shutdown(context.Background()) }

// Shutdown is Close bounded by ctx. It stops accepting records and waits
// for the queue to drain and the inner sink to flush and close, until ctx
// ends. Then it gives up on the inner sink and returns an
// [*UndeliveredError] counting the records that did not reach it; the
// sink's goroutine is left to finish on its own, and records it takes
// later still count in [Async.Stats]. Shutdown is safe to call more than
// once; a later call waits again, with its own context.
func (a *Async) Shutdown(ctx context.Context) error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		close(a.queue)
		a.mu.Unlock()
		go func() {
			<-a.done
			a.closeErr = Close(a.inner)
			close(a.closeDone)
		}()
	})
	select {
	case <-a.closeDone:
		return a.closeErr
	case <-ctx.Done():
	}
	select {
	case <-a.closeDone: // both ready: the sink made it
		return a.closeErr
	default:
	}
	n := int(a.waiting.Load())
	return &UndeliveredError{Sink: fmt.Sprintf("%T", a.inner), Records: n, Closing: n == 0, Err: ctx.Err()}
}

// Stats returns the counters; they are safe to read at any time.
func (a *Async) Stats() AsyncStats {
	return AsyncStats{
		Queued:  len(a.queue),
		Written: a.written.Load(),
		Dropped: a.dropped.Load(),
		Errors:  a.errs.Load(),
	}
}

func (a *Async) run() {
	defer close(a.done)
	if bs, ok := a.inner.(BatchSink); ok && a.maxBatch > 1 {
		a.runBatches(bs)
		return
	}
	for it := range a.queue {
		if it.flush != nil {
			it.flush <- Flush(a.inner)
			continue
		}
		err := safeAppend(it.ctx, a.inner, it.rec)
		a.waiting.Add(-1)
		if err != nil {
			a.errs.Add(1)
			a.report(err)
			continue
		}
		a.written.Add(1)
	}
}

// runBatches is run for a BatchSink: each record taken from the queue
// goes with those queued behind it, up to maxBatch, never waiting for
// more. A flush request ends the batch before it, so that it is answered
// once every record queued ahead of it has reached the sink.
func (a *Async) runBatches(bs BatchSink) {
	batch := make([]Record, 0, min(a.maxBatch, cap(a.queue)+1))
	for it := range a.queue {
		if it.flush != nil {
			it.flush <- Flush(a.inner)
			continue
		}
		ctx := it.ctx
		batch = append(batch, it.rec)
		var flush chan error
	gather:
		for len(batch) < a.maxBatch {
			select {
			case next, ok := <-a.queue:
				if !ok {
					break gather
				}
				if next.flush != nil {
					flush = next.flush
					break gather
				}
				batch = append(batch, next.rec)
			default:
				break gather
			}
		}
		err := safeAppendBatch(ctx, bs, batch)
		n := uint64(len(batch))
		a.waiting.Add(-int64(n))
		if err != nil {
			a.errs.Add(n)
			a.report(err)
		} else {
			a.written.Add(n)
		}
		clear(batch) // let the records go
		batch = batch[:0]
		if flush != nil {
			flush <- Flush(a.inner)
		}
	}
}

// safeAppendBatch calls s.AppendBatch, turning a panic into a *PanicError.
func safeAppendBatch(ctx context.Context, s BatchSink, rs []Record) (err error) {
	defer recoverInto(&err, "AppendBatch")
	return s.AppendBatch(ctx, rs)
}

// report hands err to OnError; a panicking callback must not stop the worker.
func (a *Async) report(err error) {
	if a.onError == nil {
		return
	}
	defer func() { _ = recover() }()
	a.onError(err)
}

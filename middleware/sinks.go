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
		if !cfg.syncSinks {
			k.queue = record.NewAsync(s, &record.AsyncOptions{
				QueueSize: cfg.sinkQueue,
				OnError:   r.sinkFailed,
			})
		}
		r.sinks = append(r.sinks, k)
	}
}

// append hands rec to every sink.
func (r *Recorder) appendSinks(ctx context.Context, rec record.Record) {
	for _, k := range r.sinks {
		if k.queue != nil {
			if err := k.queue.Append(ctx, rec); err != nil {
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

package middleware

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
)

// builtinProviders are asked after the ones given with WithProviders; the
// generic provider recognizes everything, so it comes last.
var builtinProviders = []providers.Provider{openai.Provider{}, gemini.Provider{}, generic.Provider{}}

// Recorder turns every call through its middleware into one history
// record. It is safe for concurrent use; share one across clients.
//
// The work on a call's path is kept small: copying bounded captures of the
// bodies and deciding which logical call an attempt belongs to. Parsing
// the bodies and building the record happen on the recorder's own
// goroutine, in the order calls end, so a record appears in the history
// moments after its call ends. [Recorder.History], [Recorder.Flush] and
// [Recorder.Close] wait for the calls that have ended. Close also stops
// the recorder's goroutines; call it when you are done.
type Recorder struct {
	cfg      config
	history  *record.Memory
	fanout   *record.Fanout
	async    *record.Async // nil with WithSyncSinks or without sinks
	hashSeed maphash.Seed
	work     workQueue

	mu      sync.Mutex
	closed  bool               // guarded by mu
	closing atomic.Bool        // closed, readable without the lock
	open    map[*body]struct{} // response bodies not yet finalized
	held    map[string][]*held // retriable failures waiting for their retry
	nHeld   int
	closeE  error
	once    sync.Once

	// ended calls per trace whose records are not yet in the history:
	// a preview waits for them only (WithHistoryPreview; nil without)
	pendMu    sync.Mutex
	pendTrace map[string]int

	inflight                              atomic.Int64
	recorded, dropped, sinkErrors, panics atomic.Uint64
	logged                                sync.Map // kinds of trouble already logged
}

// Stats counts what a recorder did. Every counter only grows, except
// Pending.
type Stats struct {
	Recorded   uint64 // records emitted to the history and the sinks
	Dropped    uint64 // records the sinks never got: their queue was full, or they were closed
	Pending    int    // calls not yet recorded: in flight, being parsed, or failures held for their retry
	SinkErrors uint64 // appends a sink failed
	Panics     uint64 // panics recovered inside recording (parsers, sinks, hooks)
}

// NewRecorder returns a recorder. With no options it records into an
// in-memory history ([Recorder.History]) and nowhere else.
func NewRecorder(opts ...Option) *Recorder {
	cfg := newConfig(opts)
	r := &Recorder{
		cfg:      cfg,
		history:  cfg.history,
		hashSeed: maphash.MakeSeed(),
		open:     make(map[*body]struct{}),
		held:     make(map[string][]*held),
	}
	if cfg.previewLatest > 0 {
		r.pendTrace = make(map[string]int)
	}
	if len(cfg.sinks) > 0 {
		r.fanout = record.NewFanout(cfg.sinks...)
		if !cfg.syncSinks {
			r.async = record.NewAsync(r.fanout, &record.AsyncOptions{
				QueueSize: cfg.sinkQueue,
				OnError:   r.sinkFailed,
			})
		}
	}
	r.work.start(r)
	return r
}

// Middleware returns the recording middleware, to use with [Chain].
func (r *Recorder) Middleware() Middleware {
	return func(next http.RoundTripper) http.RoundTripper {
		if next == nil {
			next = http.DefaultTransport
		}
		return &transport{r: r, next: next}
	}
}

// Client returns a copy of base that records every call; nil base means a
// zero http.Client over [http.DefaultTransport]. Hand it to an SDK:
// go-openai's ClientConfig.HTTPClient, genai's ClientConfig.HTTPClient,
// openai-go's option.WithHTTPClient.
func (r *Recorder) Client(base *http.Client) *http.Client {
	return NewClient(base, r.Middleware())
}

// History returns the in-memory history every record is appended to,
// once the records of the calls that have already ended are in it.
func (r *Recorder) History() *record.Memory {
	r.work.wait()
	return r.history
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	held := r.nHeld
	r.mu.Unlock()
	return Stats{
		Recorded:   r.recorded.Load(),
		Dropped:    r.dropped.Load(),
		Pending:    int(r.inflight.Load()) + r.work.pending() + held,
		SinkErrors: r.sinkErrors.Load(),
		Panics:     r.panics.Load(),
	}
}

// Flush waits until the records of the calls that have ended are in the
// history and the sinks, and flushes the sinks that buffer. Failures held
// for their retry are not emitted by Flush; Close emits them.
func (r *Recorder) Flush() error {
	r.work.wait()
	switch {
	case r.async != nil:
		return r.async.Flush()
	case r.fanout != nil:
		return r.fanout.Flush()
	}
	return nil
}

// Close finishes recording: response bodies never closed are finalized
// (marked incomplete), failures held for their retry are emitted, and the
// sinks are drained, flushed and closed. Calls made afterwards pass through
// unrecorded. Close is safe to call more than once.
func (r *Recorder) Close() error {
	r.once.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.closing.Store(true)
		bodies := make([]*body, 0, len(r.open))
		for b := range r.open {
			bodies = append(bodies, b)
		}
		r.mu.Unlock()
		for _, b := range bodies {
			b.finish(endAbandoned, nil)
		}
		r.mu.Lock()
		var waiting []*held
		for _, list := range r.held {
			waiting = append(waiting, list...)
		}
		clear(r.held)
		r.nHeld = 0
		r.mu.Unlock()
		for _, h := range waiting {
			h.timer.Stop()
			r.work.submit(&job{emit: h})
		}
		r.work.stop()
		switch {
		case r.async != nil:
			r.closeE = r.async.Close()
		case r.fanout != nil:
			r.closeE = r.fanout.Close()
		}
	})
	return r.closeE
}

func (r *Recorder) isClosed() bool { return r.closing.Load() }

// trouble counts and logs, once per kind, a failure inside recording.
func (r *Recorder) trouble(kind string, err error) {
	var pe *record.PanicError
	if errors.As(err, &pe) {
		r.panics.Add(1)
	}
	if _, seen := r.logged.LoadOrStore(kind, true); seen {
		return
	}
	r.cfg.logger.LogAttrs(context.Background(), slog.LevelWarn, "llmhistory: "+kind+"; the call was not affected (logged once, counted in Recorder.Stats)",
		slog.String("error", Redact(err.Error())))
}

func (r *Recorder) sinkFailed(err error) {
	r.sinkErrors.Add(1)
	r.trouble("a sink failed", err)
}

// recovered turns a panic inside recording into a counted trouble.
func (r *Recorder) recovered(where string) {
	if p := recover(); p != nil {
		r.trouble("panic in "+where, &record.PanicError{Value: p})
	}
}

type transport struct {
	r    *Recorder
	next http.RoundTripper
}

// RoundTrip records the call and hands back exactly what next returned.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	a, req2 := t.r.begin(req)
	if a == nil {
		return t.next.RoundTrip(req)
	}
	resp, err := t.next.RoundTrip(req2)
	if err != nil {
		a.finish(finishInfo{reason: endTransport, err: err})
		return resp, err
	}
	t.r.watch(a, resp)
	return resp, nil
}

// watch wraps the response body so that reading it finalizes the record.
func (r *Recorder) watch(a *attempt, resp *http.Response) {
	defer r.recovered("watching a response")
	f := finishInfo{
		status: resp.StatusCode,
		header: safeHeader(resp.Header),
		length: resp.ContentLength,
		stream: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
	}
	if !resp.Uncompressed { // the caller gets the bytes as encoded: decode our copy
		f.encoding = resp.Header.Get("Content-Encoding")
	}
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		f.reason = endEOF
		a.finish(f)
		return
	}
	b := &body{rc: resp.Body, a: a, info: f, cap: newCapture(r.cfg.maxResp)}
	if resp.ContentLength > 0 {
		b.cap.size = int(min(resp.ContentLength, int64(r.cfg.maxResp)))
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		f.reason = endEOF
		a.finish(f)
		return
	}
	r.open[b] = struct{}{}
	r.mu.Unlock()
	if a.ctx.Done() != nil { // a context that can end: watch it
		stop := context.AfterFunc(a.ctx, func() { b.finish(endContext, a.ctx.Err()) })
		b.mu.Lock() // the watcher may already have fired and be reading stop
		b.stop = stop
		b.mu.Unlock()
	}
	resp.Body = b
}

func (r *Recorder) forget(b *body) {
	r.mu.Lock()
	delete(r.open, b)
	r.mu.Unlock()
}

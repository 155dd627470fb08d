package middleware

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/anthropic"
	"github.com/llmhistory/llmhistory/providers/bedrock"
	"github.com/llmhistory/llmhistory/providers/gemini"
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/providers/ollama"
	"github.com/llmhistory/llmhistory/providers/openai"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// builtinProviders are asked after the ones given with WithProviders; the
// generic provider recognizes everything, so it comes last.
var builtinProviders = []providers.Provider{openai.Provider{}, gemini.Provider{}, anthropic.Provider{}, bedrock.Provider{}, ollama.Provider{}, generic.Provider{}}

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
	cfg     config
	history *record.Memory
	sinks   []*sink
	// lendArgs: a record's Args can be built in a pool buffer, taken back
	// once the history has copied what it keeps of them and every sink
	// has returned from Append: every sink keeps nothing of a record
	// (lendsArgs), and no redactor (which may keep what it is given) is
	// set.
	lendArgs bool
	hashSeed maphash.Seed
	work     workQueue
	convs    *conversations // nil: no inference (WithConversations(0))
	fold     *folder        // which attempts are one call

	mu      sync.Mutex
	closed  bool               // guarded by mu
	closing atomic.Bool        // closed, readable without the lock
	open    map[*body]struct{} // response bodies not yet finalized
	closeE  error              // Shutdown's result
	once    sync.Once          // Shutdown runs once

	// ended calls per trace whose records are not yet in the history:
	// a preview waits for them only (WithHistoryPreview; nil without)
	pendMu    sync.Mutex
	pendTrace map[string]int

	inflight         atomic.Int64
	recorded, panics atomic.Uint64
	logged           sync.Map // kinds of trouble already logged
}

// Stats counts what a recorder did. Every counter only grows, except
// Pending.
type Stats struct {
	Recorded   uint64 // records emitted to the history and the sinks
	Dropped    uint64 // records a sink never got (its queue was full, or it was closed), summed over the sinks
	Pending    int    // calls not yet recorded: in flight, being parsed, or failures held for their retry
	SinkErrors uint64 // records a sink failed on, summed over the sinks
	Panics     uint64 // panics recovered inside recording (parsers, sinks, hooks)
	// FoldedByContext counts the attempts folded into an earlier failure
	// because they sent the same bytes under the same context, with
	// nothing else to show them a retry (no call ID, Idempotency-Key, SDK
	// retry count, or same request value). That is right for a retry loop
	// that keeps its call's context, and wrong for identical calls that
	// share one: two calls then make one record. Give each logical call
	// its own context, or a call ID ([WithCallID]), to be sure.
	FoldedByContext uint64
	// FoldedBySequence counts the attempts folded into an earlier failure
	// of the same bytes because they came after it with no identical call
	// beside either, under contexts that tell nothing (a bare background,
	// or one an SDK derives for each request). That is right for a retry
	// loop that builds its request again, and wrong for a sequence of
	// identical calls one of which failed. A call ID ([WithCallID]) makes
	// either sure.
	FoldedBySequence uint64
	// RetriesGuessed counts the retries an SDK marked as such (openai-go's
	// and the Anthropic SDK's X-Stainless-Retry-Count) that had several
	// identical failures to fold into and nothing but their bytes to
	// choose by. Each call still has its one record; the attempts and
	// times of two identical calls may be swapped.
	RetriesGuessed uint64
	Sinks          []SinkStats // each sink's own counts, in the order they were given
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
	}
	r.fold = newFolder(cfg.dedupWindow, func(h *held) { r.work.submit(&job{emit: h}) })
	if cfg.previewLatest > 0 {
		r.pendTrace = make(map[string]int)
	}
	if cfg.conversations > 0 {
		r.convs = newConversations(cfg.conversations, r.hashSeed)
	}
	r.newSinks(&cfg)
	r.lendArgs = allLend(r.sinks) && len(cfg.redactors) == 0
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
	held := r.fold.heldCount()
	sinks, dropped, failed := r.sinkStats()
	return Stats{
		Recorded:   r.recorded.Load(),
		Dropped:    dropped,
		Pending:    int(r.inflight.Load()) + r.work.pending() + held,
		SinkErrors: failed,
		Panics:     r.panics.Load(),
		Sinks:      sinks,

		FoldedByContext:  r.fold.byContext.Load(),
		FoldedBySequence: r.fold.bySequence.Load(),
		RetriesGuessed:   r.fold.guessed.Load(),
	}
}

// Flush waits until the records of the calls that have ended are in the
// history and the sinks, and flushes the sinks that buffer. Failures held
// for their retry are not emitted by Flush; Close emits them. A sink that
// never returns holds Flush too; [Recorder.Shutdown] is the bounded way
// out.
func (r *Recorder) Flush() error {
	r.work.wait()
	err := r.flushSinks()
	if err != nil {
		r.trouble("a sink failed to flush", err)
	}
	return err
}

// Close is [Recorder.Shutdown] with a bound of its own: it waits at most
// the close timeout ([WithCloseTimeout], default [DefaultCloseTimeout]), so
// a program that defers Close never hangs at exit on a stuck sink. Close
// is safe to call more than once.
func (r *Recorder) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.closeTimeout)
	defer cancel()
	return r.Shutdown(ctx)
}

// Shutdown finishes recording, in the manner of [http.Server.Shutdown]:
// response bodies never closed are finalized (marked incomplete), failures
// held for their retry are emitted, and the sinks are drained, flushed and
// closed, each on its own, so that one slow sink does not hold the others.
// Calls made from the start of Shutdown pass through unrecorded.
//
// If ctx ends first, Shutdown gives up on what has not finished: it
// returns a [*ShutdownError] that says which sinks it gave up on and how
// many records did not reach them, and the recorder stays closed. Only
// the first call of Shutdown or Close does the work; later ones return
// its result.
func (r *Recorder) Shutdown(ctx context.Context) error {
	r.once.Do(func() {
		if r.closeE = r.shutdown(ctx); r.closeE != nil {
			r.trouble("shutting down: a sink failed or was given up on", r.closeE)
		}
	})
	return r.closeE
}

// ShutdownError is what [Recorder.Shutdown] and [Recorder.Close] return
// when their time ran out before every record reached every sink.
type ShutdownError struct {
	Sinks       []string // the sinks given up on, by type; "recorder" when records never left the recorder
	Undelivered int      // records that did not reach them, counted once per sink
	Err         error    // the context's error
}

func (e *ShutdownError) Error() string {
	n := e.Undelivered
	records := "records"
	if n == 1 {
		records = "record"
	}
	return fmt.Sprintf("llmhistory: shutdown gave up on %s: %d %s did not reach them: %v", strings.Join(e.Sinks, ", "), n, records, e.Err)
}

func (e *ShutdownError) Unwrap() error { return e.Err }

func (r *Recorder) shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.closing.Store(true)
	bodies := make([]*body, 0, len(r.open))
	for b := range r.open {
		bodies = append(bodies, b)
	}
	r.mu.Unlock()
	waiting := r.fold.close()

	// Finishing what is open goes through the worker, which a stuck sink
	// (WithSyncSinks) or hook can hold: wait for it within ctx only.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for _, b := range bodies {
			b.finish(endAbandoned, nil)
		}
		for _, h := range waiting {
			r.work.submit(&job{emit: h})
		}
		r.work.stop()
	}()
	select {
	case <-drained:
	case <-ctx.Done():
		return &ShutdownError{Sinks: []string{"recorder"}, Undelivered: r.work.pending() + len(bodies), Err: ctx.Err()}
	}

	return r.shutdownSinks(ctx)
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
	defer func() { _ = recover() }() // the logger is user code too; nowhere left to report it
	r.cfg.logger.LogAttrs(context.Background(), slog.LevelWarn, "llmhistory: "+kind+"; the call was not affected (logged once, counted in Recorder.Stats)",
		slog.String("error", redact.Secrets(err.Error())))
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
	if err == nil && resp == nil {
		// A broken RoundTripper below. The caller gets what it would get
		// without the recorder (http.Client turns it into its usual error);
		// the record says what happened.
		a.finish(finishInfo{reason: endTransport, err: fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", t.next)})
		return nil, nil
	}
	if err != nil {
		a.finish(finishInfo{reason: endTransport, err: err})
		return resp, err
	}
	t.r.watch(a, resp)
	return resp, nil
}

// isRedirect reports whether http.Client may follow a response with this
// status to its Location.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// watch wraps the response body so that reading it finalizes the record.
// Whatever goes wrong in here, the attempt is finished: a call is never
// left unrecorded (finish runs once; a later call does nothing).
func (r *Recorder) watch(a *attempt, resp *http.Response) {
	defer func() {
		if p := recover(); p != nil {
			r.trouble("panic in watching a response", &record.PanicError{Value: p})
			a.finish(finishInfo{reason: endEOF, status: resp.StatusCode, length: -1})
		}
	}()
	ct := resp.Header.Get("Content-Type")
	f := finishInfo{
		status:      resp.StatusCode,
		contentType: ct,
		length:      resp.ContentLength,
		stream:      isStream(ct),
		framed:      framed(resp),
	}
	if !resp.Uncompressed { // the caller gets the bytes as encoded: decode our copy
		f.encoding = resp.Header.Get("Content-Encoding")
	}
	if r.cfg.userProviders || resp.StatusCode >= 400 {
		// Only theirs may read a success's (a copy on every call costs);
		// an error's, rare, may name the error (Bedrock's X-Amzn-ErrorType).
		f.header = redact.SafeHeader(resp.Header)
	}
	if isRedirect(resp.StatusCode) {
		if f.location = resp.Header.Get("Location"); f.location != "" {
			f.redirect = resp
		}
	}
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		f.reason = endEOF
		a.finish(f)
		return
	}
	b := &a.respBody
	*b = body{rc: resp.Body, a: a, info: f, cap: newCapture(r.cfg.maxResp)}
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

// isStream reports whether a Content-Type is a stream's: server-sent
// events, Ollama's newline-delimited JSON, AWS's binary eventstream.
func isStream(ct string) bool {
	return strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "application/x-ndjson") ||
		strings.HasPrefix(ct, eventStream)
}

// eventStream is the Content-Type of AWS's binary framing (Bedrock's
// ConverseStream and InvokeModelWithResponseStream).
const eventStream = "application/vnd.amazon.eventstream"

// framed reports whether the end of resp's body is marked apart from the
// connection's end, so that net/http's reader returns io.EOF only when the
// whole body came: a Content-Length, a chunked body's last chunk, an
// HTTP/2 or /3 stream's end, or the end of a gzip stream the transport
// decoded. A body that ends only where its connection closes (HTTP/1.0
// style) is not: a dropped connection ends it the same way.
func framed(resp *http.Response) bool {
	return resp.ContentLength >= 0 || resp.ProtoMajor >= 2 || resp.Uncompressed ||
		len(resp.TransferEncoding) > 0 && resp.TransferEncoding[len(resp.TransferEncoding)-1] == "chunked"
}

func (r *Recorder) forget(b *body) {
	r.mu.Lock()
	delete(r.open, b)
	r.mu.Unlock()
}

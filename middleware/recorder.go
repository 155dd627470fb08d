package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/record"
)

// builtinProviders are asked after the ones given with WithProviders; the
// generic provider recognizes everything, so it comes last.
var builtinProviders = []providers.Provider{generic.Provider{}}

// Recorder turns every call through its middleware into one history
// record. It is safe for concurrent use; share one across clients.
type Recorder struct {
	cfg      config
	history  *record.Memory
	fanout   *record.Fanout
	async    *record.Async // nil with WithSyncSinks or without sinks
	hashSeed maphash.Seed

	mu     sync.Mutex
	closed bool
	open   map[*body]struct{} // response bodies not yet finalized
	held   map[string][]*held // retriable failures waiting for their retry
	nHeld  int
	closeE error
	once   sync.Once

	inflight                              atomic.Int64
	recorded, dropped, sinkErrors, panics atomic.Uint64
	logged                                sync.Map // kinds of trouble already logged
}

// Stats counts what a recorder did. Every counter only grows, except
// Pending.
type Stats struct {
	Recorded   uint64 // records emitted to the history and the sinks
	Dropped    uint64 // records the sinks never got: their queue was full, or they were closed
	Pending    int    // calls not yet recorded: in flight, or failures held for their retry
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
	if len(cfg.sinks) > 0 {
		r.fanout = record.NewFanout(cfg.sinks...)
		if !cfg.syncSinks {
			r.async = record.NewAsync(r.fanout, &record.AsyncOptions{
				QueueSize: cfg.sinkQueue,
				OnError:   r.sinkFailed,
			})
		}
	}
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

// History returns the in-memory history every record is appended to.
func (r *Recorder) History() *record.Memory { return r.history }

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	held := r.nHeld
	r.mu.Unlock()
	return Stats{
		Recorded:   r.recorded.Load(),
		Dropped:    r.dropped.Load(),
		Pending:    int(r.inflight.Load()) + held,
		SinkErrors: r.sinkErrors.Load(),
		Panics:     r.panics.Load(),
	}
}

// Flush waits until the sinks have every record emitted so far, and
// flushes the ones that buffer. Failures held for their retry are not
// emitted by Flush; Close emits them.
func (r *Recorder) Flush() error {
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
			r.emit(h.ctx, h.rec)
		}
		switch {
		case r.async != nil:
			r.closeE = r.async.Close()
		case r.fanout != nil:
			r.closeE = r.fanout.Close()
		}
	})
	return r.closeE
}

func (r *Recorder) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

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
		if resp != nil && resp.Body != nil {
			// Against the contract, but seen: keep the caller's view intact.
			a.end(finishInfo{reason: endTransport, err: err})
			return resp, err
		}
		a.end(finishInfo{reason: endTransport, err: err})
		return nil, err
	}
	t.r.watch(a, resp)
	return resp, nil
}

// attempt is one HTTP attempt being recorded.
type attempt struct {
	r       *Recorder
	ctx     context.Context
	start   time.Time
	prov    providers.Provider
	call    providers.Call
	callID  string
	trace   string
	parent  string
	depth   int
	speaker string
	key     string // identifies the logical call across attempts
	claimed *held  // earlier failed attempts of the same logical call
	inner   atomic.Int32
}

// begin captures and parses the request. It returns nil when recording is
// off or failed, and the request to send otherwise: a clone, never req.
func (r *Recorder) begin(req *http.Request) (a *attempt, out *http.Request) {
	if r.isClosed() {
		return nil, req
	}
	defer func() {
		if p := recover(); p != nil {
			r.trouble("panic in recording a request", &record.PanicError{Value: p})
			a, out = nil, req
		}
	}()
	ctx := req.Context()
	a = &attempt{r: r, ctx: ctx, start: r.cfg.now()}

	captured, cut, pooled, body, getBody := r.captureRequest(req)
	if pooled != nil {
		defer releaseBuf(pooled)
	}

	preq := providers.Request{
		Method:        req.Method,
		URL:           safeURL(req.URL),
		Header:        safeHeader(req.Header),
		Body:          redactBytes(captured),
		BodyTruncated: cut,
	}
	a.prov, a.call = r.parseRequest(&preq)

	a.callID = CallIDFrom(ctx)
	explicit := a.callID != ""
	if !explicit {
		a.callID = newCallID(a.start)
	}
	a.trace = TraceFrom(ctx)
	if a.trace == "" {
		a.trace = traceparentID(req.Header.Get("Traceparent"))
	}
	a.parent, a.depth = parentFrom(ctx)
	a.speaker = speakerFrom(ctx)
	if a.speaker == "" {
		a.speaker = a.call.Speaker
	}
	if a.speaker == "" {
		a.speaker = record.SpeakerUser
	}

	// Which logical call is this attempt part of?
	retryCount := req.Header.Get("X-Stainless-Retry-Count")
	switch idem := req.Header.Get("Idempotency-Key"); {
	case explicit:
		a.key = "call:" + a.callID
		a.claimed = r.claim(a.key)
	case idem != "":
		a.key = "idem:" + idem
		a.claimed = r.claim(a.key)
	default:
		a.key = r.fingerprint(req.Method, preq.URL.String(), a.trace, captured, cut)
		if retryCount != "0" { // "0" marks a first attempt: never a retry
			a.claimed = r.claim(a.key)
		}
	}

	out = req.Clone(context.WithValue(ctx, attemptsKey{}, &a.inner))
	if body != nil {
		out.Body, out.GetBody = body, getBody
	}
	r.inflight.Add(1)
	return a, out
}

// captureRequest copies up to the cap of the request body for parsing,
// leaving what the transport sends intact. With GetBody it reads a fresh
// copy and the request keeps its body; without, it reads the body itself
// and returns a replacement that replays the same bytes (and, when the
// whole body fit, a GetBody so redirects and retries can resend it).
func (r *Recorder) captureRequest(req *http.Request) (captured []byte, cut bool, pooled *[]byte, body io.ReadCloser, getBody func() (io.ReadCloser, error)) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, false, nil, nil, nil
	}
	limit := r.cfg.maxReq
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, false, nil, nil, nil
		}
		defer rc.Close()
		pooled = bufPool.Get().(*[]byte)
		buf, more, _ := readUpTo(rc, (*pooled)[:0], limit)
		*pooled = buf
		return buf, more, pooled, nil, nil
	}
	buf, more, err := readUpTo(req.Body, nil, limit)
	switch {
	case err != nil:
		// The body broke while we read it; the transport must see the same.
		req.Body.Close()
		body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), errReader{err}))
	case more:
		// Too long to keep: what we read, then the rest, unread.
		body = readCloser{io.MultiReader(bytes.NewReader(buf), req.Body), req.Body}
	default:
		req.Body.Close()
		body = io.NopCloser(bytes.NewReader(buf))
		getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	}
	return buf, more, nil, body, getBody
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// readUpTo appends at most limit bytes of rd to buf and reports whether
// more remained (it reads one byte past the limit to know).
func readUpTo(rd io.Reader, buf []byte, limit int) ([]byte, bool, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := min(cap(buf), limit+1) - len(buf)
		if room <= 0 {
			break
		}
		n, err := rd.Read(buf[len(buf) : len(buf)+room])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
		if len(buf) > limit {
			break
		}
	}
	if len(buf) > limit {
		// The extra byte was consumed; callers replay buf whole, so only the
		// capture is cut, not the body.
		return buf, true, nil
	}
	return buf, false, nil
}

func releaseBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

func (r *Recorder) parseRequest(req *providers.Request) (p providers.Provider, call providers.Call) {
	defer func() {
		if x := recover(); x != nil {
			r.trouble("panic in a provider parsing a request", &record.PanicError{Value: x})
			p = generic.Provider{}
			call, _ = p.ParseRequest(&providers.Request{Method: req.Method, URL: req.URL})
		}
	}()
	p, call, ok := providers.Match(r.cfg.providers, req)
	if !ok {
		p = generic.Provider{}
		call, _ = p.ParseRequest(req)
	}
	return p, call
}

// fingerprint identifies an attempt by what it sends, for retries that
// carry no marker (genai resends the same request).
func (r *Recorder) fingerprint(method, url, trace string, body []byte, cut bool) string {
	var h maphash.Hash
	h.SetSeed(r.hashSeed)
	h.WriteString(method)
	h.WriteByte(0)
	h.WriteString(url)
	h.WriteByte(0)
	h.WriteString(trace)
	h.WriteByte(0)
	h.Write(body)
	if cut {
		h.WriteByte(1)
	}
	return "fp:" + strconv.FormatUint(h.Sum64(), 36)
}

// traceparentID returns the trace id of a W3C traceparent header:
// "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>".
func traceparentID(h string) string {
	parts := strings.Split(strings.TrimSpace(h), "-")
	if len(parts) < 4 || len(parts[1]) != 32 || parts[1] == strings.Repeat("0", 32) {
		return ""
	}
	for _, c := range parts[1] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return parts[1]
}

// endReason says what finalized a call.
type endReason int

const (
	endTransport endReason = iota // no response: the transport failed
	endEOF                        // the body was read to its end
	endReadError                  // reading the body failed
	endClose                      // the caller closed the body
	endContext                    // the call's context ended
	endAbandoned                  // the recorder closed with the body still open
)

type finishInfo struct {
	reason   endReason
	err      error
	status   int
	header   http.Header
	encoding string // Content-Encoding still on the captured bytes
	stream   bool
	length   int64 // Content-Length, -1 when unknown
	cap      *capture
}

// end builds the record of this attempt and emits it, or holds it for the
// retry that may follow.
func (a *attempt) end(f finishInfo) {
	r := a.r
	defer r.inflight.Add(-1)
	defer r.recovered("finishing a record")
	now := r.cfg.now()

	var res providers.Result
	var msg string
	switch {
	case f.reason == endTransport:
		typ := record.ErrorTypeForError(f.err)
		if typ == record.ErrorUnknown || typ == record.ErrorDecode {
			typ = record.ErrorTransport
		}
		res.Outcome = record.Failure(typ)
		msg = f.err.Error()
	default:
		res = a.parseResponse(&f)
		msg = res.ErrorMessage
		res.Outcome.HTTPStatus = f.status
		if f.status < 400 {
			complete := f.reason == endEOF || res.Finished ||
				f.length >= 0 && f.cap != nil && f.cap.total == f.length && f.reason != endAbandoned
			if !complete {
				keep := res.Outcome
				typ, why := record.ErrorIncomplete, ""
				switch f.reason {
				case endReadError, endContext:
					typ = record.ErrorTypeForError(f.err)
					if typ == record.ErrorUnknown || typ == record.ErrorDecode {
						typ = record.ErrorTransport
					}
					why = f.err.Error()
				case endClose:
					why = fmt.Sprintf("response body closed after %d bytes, before its end", f.cap.total)
				case endAbandoned:
					why = "response body never closed; finalized when the recorder closed"
				}
				res.Outcome = record.Failure(typ)
				res.Outcome.HTTPStatus = f.status
				res.Outcome.ResponseID, res.Outcome.FinishReason = keep.ResponseID, keep.FinishReason
				msg = why
			}
		}
	}
	if f.cap != nil {
		f.cap.release()
	}

	rec := record.Record{
		CallID:       a.callID,
		Timestamp:    record.FormatTime(a.start),
		Speaker:      a.speaker,
		MethodName:   a.call.MethodName,
		Args:         a.call.Args,
		Kwargs:       a.call.Kwargs,
		Outcome:      res.Outcome,
		TraceID:      a.trace,
		ParentCallID: a.parent,
		Depth:        record.Int(a.depth),
		ErrorType:    res.Outcome.ErrorType,
		ErrorMessage: clipMessage(Redact(msg)),
		Model:        res.Model,
		Usage:        res.Usage,
		Truncated:    a.call.Truncated,
	}
	if rec.Model == "" {
		rec.Model = a.call.Model
	}
	if res.Outcome.OK {
		rec.ErrorMessage = ""
	}
	attempts := max(1, int(a.inner.Load()))
	first := a.start
	if h := a.claimed; h != nil {
		rec.CallID, rec.Timestamp = h.rec.CallID, h.rec.Timestamp
		attempts += h.attempts
		first = h.start
	}
	rec.Attempts = attempts
	rec.DurationMS = float64(now.Sub(first).Microseconds()) / 1000

	if res.Outcome.Retriable && r.cfg.dedupWindow > 0 && r.hold(a.key, &held{
		rec: rec, start: first, attempts: attempts, ctx: context.WithoutCancel(a.ctx),
	}) {
		return
	}
	r.emit(a.ctx, rec)
}

func (a *attempt) parseResponse(f *finishInfo) (res providers.Result) {
	r := a.r
	presp := providers.Response{StatusCode: f.status, Header: f.header, Stream: f.stream, EOF: f.reason == endEOF}
	if c := f.cap; c != nil {
		presp.Body, presp.Truncated = c.head, c.truncated()
		if presp.Truncated {
			presp.Tail = c.tailBytes()
		}
		if f.encoding != "" {
			if plain, ok := decompress(f.encoding, presp.Body, r.cfg.maxResp); ok {
				presp.Body, presp.Tail = plain, nil
			} else {
				presp.Body, presp.Tail = nil, nil
			}
		}
		presp.Body = redactBytes(presp.Body)
		presp.Tail = redactBytes(presp.Tail)
	}
	defer func() {
		if x := recover(); x != nil {
			r.trouble("panic in a provider parsing a response", &record.PanicError{Value: x})
			res = providers.Result{Outcome: statusOutcome(f.status)}
		}
	}()
	return a.prov.ParseResponse(&a.call, &presp)
}

func statusOutcome(status int) record.Outcome {
	if t := record.ErrorTypeForStatus(status); t != "" {
		return record.Failure(t)
	}
	return record.Success("http.response")
}

const maxMessage = 1024

func clipMessage(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxMessage], "") + "…"
}

// emit appends rec to the history, then hands it to the sinks.
func (r *Recorder) emit(ctx context.Context, rec record.Record) {
	defer r.recovered("emitting a record")
	for _, fn := range r.cfg.redactors {
		r.redactHook(fn, &rec)
	}
	stored := r.history.Add(rec)
	r.recorded.Add(1)
	switch {
	case r.async != nil:
		if err := r.async.Append(ctx, stored); err != nil {
			r.dropped.Add(1)
			r.trouble("the sink queue is full or closed; records are dropped", err)
		}
	case r.fanout != nil:
		if err := r.fanout.Append(context.WithoutCancel(ctx), stored); err != nil {
			r.sinkFailed(err)
		}
	}
}

func (r *Recorder) redactHook(fn func(*record.Record), rec *record.Record) {
	defer r.recovered("a redactor")
	fn(rec)
}

// watch wraps the response body so that reading it finalizes the record.
func (r *Recorder) watch(a *attempt, resp *http.Response) {
	defer r.recovered("watching a response")
	f := finishInfo{
		status: resp.StatusCode,
		header: safeHeader(resp.Header),
		length: resp.ContentLength,
		stream: a.call.Stream || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
	}
	if !resp.Uncompressed { // the caller gets the bytes as encoded: decode our copy
		f.encoding = resp.Header.Get("Content-Encoding")
	}
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		f.reason = endEOF
		a.end(f)
		return
	}
	b := &body{rc: resp.Body, a: a, info: f, cap: newCapture(r.cfg.maxResp)}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		f.reason = endEOF
		a.end(f)
		return
	}
	r.open[b] = struct{}{}
	r.mu.Unlock()
	stop := context.AfterFunc(a.ctx, func() { b.finish(endContext, a.ctx.Err()) })
	b.mu.Lock() // the watcher may already have fired and be reading stop
	b.stop = stop
	b.mu.Unlock()
	resp.Body = b
}

func (r *Recorder) forget(b *body) {
	r.mu.Lock()
	delete(r.open, b)
	r.mu.Unlock()
}

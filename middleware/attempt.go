package middleware

import (
	"bytes"
	"cmp"
	"context"
	"hash/maphash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/record"
)

// attempt is one HTTP attempt being recorded. What is set in begin is
// read-only afterwards; the parsed call is filled by whoever parses first
// (the finish of an error, or the worker), never by two at once.
type attempt struct {
	r     *Recorder
	ctx   context.Context
	start time.Time

	// The request as captured: parsed later, off the call's path.
	method  string
	url     url.URL
	header  http.Header
	reqBody []byte
	reqCut  bool
	pooled  *[]byte // reqBody's pool buffer, if any

	callID  string
	trace   string
	parent  string
	depth   int
	speaker string // from the context; "" means from the request
	key     string // identifies the logical call across attempts
	claimed *held  // earlier failed attempts of the same logical call
	inner   atomic.Int32
	guided  bool // the body sent carries the history preview

	parsed bool
	prov   providers.Provider
	call   providers.Call
}

// begin captures the request and decides which logical call it belongs
// to. It returns nil when recording is off or failed, and the request to
// send otherwise: a clone, never req.
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
	a = &attempt{r: r, ctx: ctx, start: r.cfg.now(), method: req.Method, header: safeHeader(req.Header)}
	if req.URL != nil {
		a.url = *req.URL
	}
	c := r.captureRequest(req)
	a.reqBody, a.reqCut, a.pooled = c.buf, c.cut, c.pooled

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

	// Which logical call is this attempt part of?
	switch idem := req.Header.Get("Idempotency-Key"); {
	case explicit:
		a.key = "call:" + a.callID
		a.claimed = r.claim(a.key)
	case idem != "":
		a.key = "idem:" + idem
		a.claimed = r.claim(a.key)
	default:
		a.key = r.fingerprint(a)
		// X-Stainless-Retry-Count "0" marks a first attempt: never a retry.
		if req.Header.Get("X-Stainless-Retry-Count") != "0" {
			a.claimed = r.claim(a.key)
		}
	}

	// A shallow copy: nothing below the recorder may change the request
	// (the RoundTripper contract), so its header map can be shared.
	out = req.WithContext(context.WithValue(ctx, attemptsKey{}, &a.inner))
	if c.body != nil {
		out.Body, out.GetBody = c.body, c.getBody
	}
	if r.cfg.previewLatest > 0 {
		// After the key: a retry resent by the caller matches the
		// caller's body, whatever the preview says by then.
		r.addPreview(a, req, out, &c)
	}
	r.inflight.Add(1)
	return a, out
}

// captured is what captureRequest took of a request body.
type captured struct {
	buf    []byte  // the body, or its head when cut
	cut    bool    // the body is longer than the cap
	whole  bool    // buf is the entire body, read without error
	pooled *[]byte // buf's pool buffer, if any

	// body and getBody replace the request's when body is not nil.
	body    io.ReadCloser
	getBody func() (io.ReadCloser, error)
}

// captureRequest copies up to the cap of the request body for parsing,
// leaving what the transport sends intact. With GetBody it reads a fresh
// copy and the request keeps its body; without, it reads the body itself
// and returns a replacement that replays the same bytes (and, when the
// whole body fit, a GetBody so redirects and retries can resend it).
func (r *Recorder) captureRequest(req *http.Request) (c captured) {
	if req.Body == nil || req.Body == http.NoBody {
		return c
	}
	limit := r.cfg.maxReq
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return c
		}
		defer rc.Close()
		c.pooled = bufPool.Get().(*[]byte)
		buf, more, err := readUpTo(rc, (*c.pooled)[:0], limit, req.ContentLength)
		*c.pooled = buf
		c.buf, c.cut, c.whole = buf, more, !more && err == nil
		return c
	}
	buf, more, err := readUpTo(req.Body, nil, limit, req.ContentLength)
	c.buf, c.cut = buf, more
	switch {
	case err != nil:
		// The body broke while we read it; the transport must see the same.
		req.Body.Close()
		c.body = io.NopCloser(io.MultiReader(bytes.NewReader(buf), errReader{err}))
	case more:
		// Too long to keep: what we read, then the rest, unread.
		c.body = readCloser{io.MultiReader(bytes.NewReader(buf), req.Body), req.Body}
	default:
		req.Body.Close()
		c.whole = true
		c.body = io.NopCloser(bytes.NewReader(buf))
		c.getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	}
	return c
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// readUpTo appends at most limit bytes of rd to buf and reports whether
// more remained (it reads one byte past the limit to know). size is the
// body's length when known (else 0 or -1), so that buf grows once.
func readUpTo(rd io.Reader, buf []byte, limit int, size int64) ([]byte, bool, error) {
	hint := 0
	if size > 0 {
		hint = int(min(size+1, int64(limit)+1))
	}
	for {
		if len(buf) == cap(buf) {
			buf = grow(buf, hint, limit+1)
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
	// Past the limit: only the capture is cut, not the body, which callers
	// replay whole.
	return buf, len(buf) > limit, nil
}

// grow returns buf, same length, with room for at least one more byte and
// at most limit in all: in one step to hint when that is more, else by
// doubling. append grows large slices by only 1.25×, which for a 1 MiB
// capture allocates about five times its size on the way.
func grow(buf []byte, hint, limit int) []byte {
	c := cmp.Or(max(2*cap(buf), hint), 4<<10)
	c = min(c, limit)
	if c <= cap(buf) {
		c = cap(buf) + 1
	}
	nb := make([]byte, len(buf), c)
	copy(nb, buf)
	return nb
}

func releaseBuf(b *[]byte) {
	if cap(*b) <= maxPooled {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

// fingerprint identifies an attempt by what it sends, for retries that
// carry no marker (genai resends the same request).
func (r *Recorder) fingerprint(a *attempt) string {
	var h maphash.Hash
	h.SetSeed(r.hashSeed)
	for _, s := range []string{a.method, a.url.Scheme, a.url.Host, a.url.Path, a.url.RawQuery, a.trace} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	h.Write(a.reqBody)
	if a.reqCut {
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

// parse reads the request with the first provider that recognizes it,
// once, and lets the capture go.
func (a *attempt) parse() {
	if a.parsed {
		return
	}
	a.parsed = true
	r := a.r
	preq := providers.Request{
		Method:        a.method,
		URL:           safeURL(&a.url),
		Header:        a.header,
		Body:          redactBytes(a.reqBody),
		BodyTruncated: a.reqCut,
	}
	func() {
		defer func() {
			if x := recover(); x != nil {
				r.trouble("panic in a provider parsing a request", &record.PanicError{Value: x})
				a.prov = generic.Provider{}
				a.call, _ = a.prov.ParseRequest(&providers.Request{Method: preq.Method, URL: preq.URL})
			}
		}()
		var ok bool
		if a.prov, a.call, ok = providers.Match(r.cfg.providers, &preq); !ok {
			a.prov = generic.Provider{}
			a.call, _ = a.prov.ParseRequest(&preq)
		}
	}()
	if a.pooled != nil {
		releaseBuf(a.pooled)
		a.pooled = nil
	}
	a.reqBody = nil
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
	stream   bool   // text/event-stream
	length   int64  // Content-Length, -1 when unknown
	cap      *capture
	end      time.Time
}

// finish is the one finalize point of an attempt. On the call's path it
// only decides what cannot wait: whether the attempt failed in a way worth
// retrying, so that its retry, which may start at once, finds it held.
// Everything else is left to the worker.
func (a *attempt) finish(f finishInfo) {
	r := a.r
	defer r.inflight.Add(-1)
	defer r.recovered("finishing a record")
	f.end = r.cfg.now()
	j := &job{a: a, f: f}
	// Failures are rare and their bodies small: settle them here.
	if f.reason == endTransport || f.status >= 400 || f.reason == endReadError || f.reason == endContext {
		res := a.result(&j.f)
		j.res = &res
		if res.Outcome.Retriable && r.cfg.dedupWindow > 0 {
			j.hold = &held{key: a.key, start: a.firstStart(), attempts: a.attempts(), ctx: context.WithoutCancel(a.ctx)}
		}
	}
	r.tracePending(a.trace, 1) // undone by process
	r.work.submit(j)
	if j.hold != nil {
		r.hold(j.hold) // after submit: the record is built before it can expire
	}
}

// firstStart is when the logical call began: its first attempt's start.
func (a *attempt) firstStart() time.Time {
	if a.claimed != nil {
		return a.claimed.start
	}
	return a.start
}

// attempts counts the HTTP attempts of the logical call so far.
func (a *attempt) attempts() int {
	n := max(1, int(a.inner.Load()))
	if a.claimed != nil {
		n += a.claimed.attempts
	}
	return n
}

// result parses the response and decides the outcome.
func (a *attempt) result(f *finishInfo) providers.Result {
	if f.reason == endTransport {
		typ := record.ErrorTypeForError(f.err)
		if typ == record.ErrorUnknown || typ == record.ErrorDecode {
			typ = record.ErrorTransport
		}
		return providers.Result{Outcome: record.Failure(typ), ErrorMessage: f.err.Error()}
	}
	a.parse()
	res := a.parseResponse(f)
	res.Outcome.HTTPStatus = f.status
	if f.status >= 400 {
		return res
	}
	complete := f.reason == endEOF || res.Finished ||
		f.length >= 0 && f.cap != nil && f.cap.total == f.length && f.reason != endAbandoned
	if complete {
		return res
	}
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
		why = "response body closed after " + strconv.FormatInt(f.cap.total, 10) + " bytes, before its end"
	case endAbandoned:
		why = "response body never closed; finalized when the recorder closed"
	}
	res.Outcome = record.Failure(typ)
	res.Outcome.HTTPStatus = f.status
	res.Outcome.ResponseID, res.Outcome.FinishReason = keep.ResponseID, keep.FinishReason
	res.ErrorMessage = why
	return res
}

func (a *attempt) parseResponse(f *finishInfo) (res providers.Result) {
	r := a.r
	presp := providers.Response{StatusCode: f.status, Header: f.header, Stream: f.stream || a.call.Stream, EOF: f.reason == endEOF}
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

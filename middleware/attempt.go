package middleware

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/generic"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
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
	pooled  *[]byte  // reqBody's pool buffer, if any
	tee     *teeBody // the body, captured as the transport reads it (no GetBody)
	secrets []string // the credentials the request carried, redacted wherever they appear

	callID    string
	timestamp string // the start, formatted; "" until the record needs it
	trace     string
	parent    string
	depth     int
	speaker   string     // from the context; "" means from the request
	key       attemptKey // identifies the logical call across attempts; zero when it cannot
	keyLater  bool       // key is a fingerprint not computed yet: see retryKey
	claimed   *held      // earlier attempts of the same logical call: failures, or a redirect
	// What the folder compares to tell identical calls apart.
	begun       uint64    // the folder's sequence when the attempt began
	endSeq      uint64    // the folder's sequence when its end was handed back
	reqURL      *url.URL  // the caller's request's URL, as a pointer: the request's identity
	retryMarked bool      // an SDK marked the request as a retry
	alike       alikeMark // its count among the attempts alike in flight (fingerprinted attempts only)
	ranAlone    bool      // no attempt alike ran beside it (set in finish)
	hop         bool      // claimed is the redirect this attempt follows
	inner       atomic.Int32
	guided      bool // the body sent carries the history preview
	ended       atomic.Bool

	parsed bool
	prov   providers.Provider // the provider that matched the request, once matched
	call   providers.Call

	// Stores for what an attempt needs once, so that one allocation (the
	// attempt's) holds them: its response body's wrapper, its job, and
	// what the provider is shown (interface calls make arguments escape).
	respBody body
	job      job
	preq     providers.Request
	presp    providers.Response
	// argsBuf is the pool buffer lent for the call's Args
	// (providers.Request.Scratch, only when Recorder.lendArgs): the
	// record's Args point into it until the history has stored them.
	argsBuf *[]byte
	// lease holds argsBuf for the sinks once the worker has let it go
	lease lease
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
	a = &attempt{r: r, ctx: ctx, start: r.cfg.now(), method: req.Method, begun: r.fold.next(), reqURL: req.URL}
	if r.cfg.userProviders {
		a.header = redact.SafeHeader(req.Header) // only theirs may read it
	}
	if req.URL != nil {
		a.url = *req.URL
	}
	a.secrets = redact.CredentialValues(req.Header, req.URL)
	c := r.captureRequest(req)
	a.reqBody, a.reqCut, a.pooled, a.tee = c.buf, c.cut, c.pooled, c.tee

	a.callID = CallIDFrom(ctx)
	explicit := a.callID != ""
	if !explicit {
		a.callID, a.timestamp = newIdentity(a.start)
	}
	a.trace = TraceFrom(ctx)
	if a.trace == "" {
		a.trace = traceparentID(req.Header.Get("Traceparent"))
	}
	a.parent, a.depth = parentFrom(ctx)
	a.speaker = speakerFrom(ctx)

	// Which logical call is this attempt part of? A redirect's next hop
	// carries the redirect response (http.Client sets req.Response), which
	// is held under its own address until then.
	if req.Response != nil {
		if a.claimed = r.fold.claim(attemptKey{hop: req.Response}, a.claimant()); a.claimed != nil {
			a.hop = true
		}
	}
	claim := false
	switch idem := req.Header.Get("Idempotency-Key"); {
	case a.hop:
		a.key, a.keyLater = attemptKey{kind: 'f'}, true // for its own retriable failure, if any
	case explicit:
		a.key, claim = attemptKey{kind: 'c', s: a.callID}, true
	case idem != "":
		a.key, claim = attemptKey{kind: 'i', s: idem}, true
	case req.Header.Get("Amz-Sdk-Invocation-Id") != "":
		// The AWS SDKs keep one invocation id across the attempts of a
		// call, and number them: "amz-sdk-request: attempt=1; max=3". A
		// first attempt claims nothing, as X-Stainless-Retry-Count 0.
		a.key = attemptKey{kind: 'a', s: req.Header.Get("Amz-Sdk-Invocation-Id")}
		claim = !firstAWSAttempt(req.Header.Get("Amz-Sdk-Request"))
	case a.tee != nil:
		// The body is not known yet (it is read as it is sent), so nothing
		// proves that a later request is the same one: never folded.
		a.key = attemptKey{}
	default:
		// X-Stainless-Retry-Count "0" marks a first attempt: never a retry;
		// a count above it marks a retry (see claim).
		retries := req.Header.Get("X-Stainless-Retry-Count")
		claim = retries != "0"
		a.retryMarked = claim && retries != ""
		a.key, a.keyLater = attemptKey{kind: 'f'}, true
		if r.fold.on() {
			a.alike = r.fold.begin(req)
		}
		if claim && r.fold.idle() {
			claim = false // nothing is held: nothing to claim, no hash yet
		} else if claim {
			a.retryKey()
		}
	}
	if a.keyLater && r.cfg.previewLatest > 0 {
		a.retryKey() // the preview is about to replace the body it hashes
	}
	if claim {
		a.claimed = r.fold.claim(a.key, a.claimant())
		if a.claimed == nil && r.fold.pending(a.key, 0) {
			// An earlier attempt under this key has ended, and only its
			// parse will tell whether it failed in a way worth retrying (a
			// 200 whose JSON was cut): let the worker get to it.
			r.work.waitUpTo(retryWait)
			a.claimed = r.fold.claim(a.key, a.claimant())
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
	buf    []byte   // the body, or its head when cut
	cut    bool     // the body is longer than the cap
	whole  bool     // buf is the entire body, read without error
	pooled *[]byte  // buf's pool buffer, if any
	tee    *teeBody // set instead of buf when the body is captured as it is sent

	// body and getBody replace the request's when body is not nil.
	body    io.ReadCloser
	getBody func() (io.ReadCloser, error)
}

// captureRequest copies up to the cap of the request body for parsing,
// leaving what the transport sends intact. With GetBody it reads a fresh
// copy and the request keeps its body. Without, the body can be read only
// once, by the transport: it is wrapped so that a copy is kept as the
// transport reads it, and the body streams exactly as it would without
// the recorder (reading it first would deadlock an upload that waits for
// the server). Once read whole within the cap, it can be sent again.
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
	c.tee = &teeBody{rc: req.Body, limit: limit, size: req.ContentLength}
	c.body, c.getBody = c.tee, c.tee.replay
	return c
}

// teeBody is a request body without GetBody, captured as the transport
// reads it. The transport's writing goroutine reads it while the recorder
// may take its capture (after the response), so it has a lock.
type teeBody struct {
	rc    io.ReadCloser
	limit int
	size  int64 // Content-Length when known

	mu     sync.Mutex
	buf    []byte
	cut    bool // more than limit bytes
	eof    bool // read to its end without error
	frozen bool // the capture was taken: keep no more
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.mu.Lock()
	if !t.frozen && n > 0 {
		keep := min(n, t.limit-len(t.buf))
		if keep < n {
			t.cut = true
		}
		if keep > 0 {
			if len(t.buf)+keep > cap(t.buf) {
				t.buf = grow(t.buf, int(min(max(t.size, 0), int64(t.limit))), t.limit)
			}
			t.buf = append(t.buf, p[:keep]...)
		}
	}
	if err == io.EOF {
		t.eof = true
	}
	t.mu.Unlock()
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }

// capture returns what was read, and whether that is less than the body
// (cut by the cap, or not read to its end: the server answered first, or
// the send failed). Nothing more is kept afterwards.
func (t *teeBody) capture() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frozen = true
	return t.buf, t.cut || !t.eof
}

// replay is the body's GetBody: the bytes again once they were all read
// within the cap, an error before.
func (t *teeBody) replay() (io.ReadCloser, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.eof || t.cut {
		return nil, errNotReplayable
	}
	return io.NopCloser(bytes.NewReader(t.buf)), nil
}

var errNotReplayable = errors.New("llmhistory: the request body cannot be sent again: it has no GetBody and was not read whole within the capture cap")

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

// retryKey returns the attempt's key, computing the fingerprint begin
// left for later. An attempt needs it only to claim an earlier one, which
// begin does when anything is held, or to be held itself, when it fails:
// a successful call, the usual one, never hashes its body. It is called
// on the call's path (begin, finish), before the worker sees the attempt,
// and with the request body captured (the preview, which replaces it,
// keys in begin).
func (a *attempt) retryKey() attemptKey {
	if a.keyLater {
		a.key, a.keyLater = a.r.fingerprint(a), false
	}
	return a.key
}

// fingerprint identifies an attempt by what it sends, for retries that
// carry no marker (genai resends the same request).
func (r *Recorder) fingerprint(a *attempt) attemptKey {
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
	return attemptKey{kind: 'f', n: h.Sum64()}
}

// traceparentID returns the trace id of a W3C traceparent header:
// "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>".
func traceparentID(h string) string {
	if h == "" {
		return ""
	}
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
	if a.tee != nil {
		a.reqBody, a.reqCut = a.tee.capture()
	}
	a.preq = providers.Request{
		Method:        a.method,
		URL:           redact.SafeURL(&a.url, a.secrets...),
		Header:        a.header,
		Body:          a.redact(a.reqBody),
		BodyTruncated: a.reqCut,
		MaxArgs:       r.cfg.maxReq,
	}
	if r.lendArgs {
		a.argsBuf = bufPool.Get().(*[]byte)
		a.preq.Scratch = a.argsBuf
	}
	func() {
		defer func() {
			if x := recover(); x != nil {
				r.trouble("panic in a provider parsing a request", &record.PanicError{Value: x})
				a.prov = generic.Provider{}
				a.call, _ = a.prov.ParseRequest(&providers.Request{Method: a.preq.Method, URL: a.preq.URL})
			}
		}()
		var ok bool
		if a.prov != nil {
			// Matched already, by the preview: asked once.
			if a.call, ok = a.prov.ParseRequest(&a.preq); ok && a.call.Provider == "" {
				a.call.Provider = a.prov.Name()
			}
		} else {
			a.prov, a.call, ok = providers.Match(r.cfg.providers, &a.preq)
		}
		if !ok {
			a.prov = generic.Provider{}
			a.call, _ = a.prov.ParseRequest(&a.preq)
		}
	}()
	if a.pooled != nil {
		releaseBuf(a.pooled)
		a.pooled = nil
	}
	a.reqBody, a.preq.Body = nil, nil // the buffer may serve another call now
}

// redact returns b without key-shaped strings and without the literal
// credentials the request carried; b itself when it holds none.
func (a *attempt) redact(b []byte) []byte {
	return redact.LiteralBytes(redact.SecretBytes(b), a.secrets)
}

// redactString is redact for a string.
func (a *attempt) redactString(s string) string {
	return redact.Literals(redact.Secrets(s), a.secrets)
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
	reason      endReason
	err         error
	status      int
	contentType string
	location    string         // a redirect's Location
	header      http.Header    // only for providers given with WithProviders
	encoding    string         // Content-Encoding still on the captured bytes
	stream      bool           // text/event-stream
	framed      bool           // the body's end is marked apart from the connection's (see framed)
	cutWhole    bool           // set by result: JSON cut short in a body that came whole (a decode error a client may retry)
	length      int64          // Content-Length, -1 when unknown
	redirect    *http.Response // a redirect http.Client may follow: its next hop claims it
	cap         *capture
	firstChunk  time.Time // when the body's first bytes came; zero when none did
	end         time.Time
}

// finish is the one finalize point of an attempt. On the call's path it
// only decides what cannot wait: whether the attempt failed in a way worth
// retrying, so that its retry, which may start at once, finds it held.
// Everything else is left to the worker.
func (a *attempt) finish(f finishInfo) {
	if !a.ended.CompareAndSwap(false, true) {
		return
	}
	r := a.r
	defer r.inflight.Add(-1)
	defer r.recovered("finishing a record")
	f.end = r.cfg.now()
	a.endSeq = r.fold.next()
	a.ranAlone = a.alike.end()
	j := &a.job
	*j = job{a: a, f: f}
	switch {
	case f.redirect != nil && r.fold.on():
		// Its next hop, if http.Client follows it, begins as soon as this
		// body is closed: hold it now, under the response it claims by.
		res := a.result(&j.f)
		j.res = &res
		j.hold = a.holding(attemptKey{hop: f.redirect})
	case f.reason == endTransport || f.status >= 400 || f.reason == endReadError || f.reason == endContext:
		// Failures are rare and their bodies small: settle them here.
		key := a.key
		if r.fold.on() && !key.none() {
			key = a.retryKey() // before the parse, which lets the request body go
		}
		res := a.result(&j.f)
		j.res = &res
		if res.Outcome.Retriable && r.fold.on() && !key.none() {
			j.hold = a.holding(key)
		}
	}
	r.tracePending(a.trace, 1) // undone by process
	if j.res == nil && !a.key.none() && r.fold.on() && mayBeCut(&f) {
		// Settled by the worker, which may find a retriable failure (a
		// 200 whose JSON was cut): its retry, if it comes first, waits
		// for it (begin). Bodies that end as JSON ends do not.
		j.keyed = true
		r.fold.pending(a.retryKey(), 1) // undone by process
	}
	r.work.submit(j)
	if j.hold != nil {
		r.fold.hold(j.hold) // after submit: the record is built before it can expire
	}
}

// retryWait bounds how long an attempt waits for the worker to settle an
// earlier attempt under its key, which it may retry. The worker is usually
// microseconds behind; the bound matters only when a hook or a synchronous
// sink holds it, and is short beside a retry's own backoff.
const retryWait = time.Second

// holding returns what is held of this attempt for the one that follows it.
func (a *attempt) holding(key attemptKey) *held {
	return &held{key: key, start: a.firstStart(), attempts: a.attempts(), hops: a.hops(), ctx: context.WithoutCancel(a.ctx),
		ended: a.endSeq, reqURL: a.reqURL, callCtx: a.ctx, alone: a.ranAlone, innerRetry: a.inner.Load() > 0}
}

// claimant is what the attempt shows the folder when it claims an earlier
// failure.
func (a *attempt) claimant() claimant {
	return claimant{begun: a.begun, reqURL: a.reqURL, ctx: a.ctx, retryMarked: a.retryMarked, alone: a.alike.alone}
}

// firstAWSAttempt reports whether an AWS SDK's amz-sdk-request header,
// "attempt=1; max=3", marks a first attempt.
func firstAWSAttempt(h string) bool {
	for part := range strings.SplitSeq(h, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), "="); ok && k == "attempt" {
			return strings.TrimSpace(v) == "1"
		}
	}
	return false
}

// attemptKey identifies a logical call across its attempts: by the call
// ID in the context, an Idempotency-Key, an AWS SDK's invocation id, a
// fingerprint of the request, or,
// for a redirect's next hop, the redirect response, which http.Client
// hands the hop as req.Response (the key holds the pointer, so the
// response is not collected while its hop may come). A struct, not a
// string: making a key costs no allocation.
type attemptKey struct {
	kind byte           // 'c' call ID, 'i' Idempotency-Key, 'a' amz-sdk-invocation-id, 'f' fingerprint; 0 for a hop or none
	s    string         // the call ID or the Idempotency-Key
	n    uint64         // the fingerprint
	hop  *http.Response // the redirect a hop follows
}

func (k attemptKey) none() bool { return k.kind == 0 && k.hop == nil }

// mayBeCut reports whether a 2xx response read to its end may be JSON cut
// on its way, which only the worker's parse can tell, and which a retry
// would then fold into: a body that is not a stream and does not end as a
// JSON document ends ('}' or ']'). The check is on the call's path, so it
// reads one byte; a cut that lands just after a closing bracket is missed.
func mayBeCut(f *finishInfo) bool {
	if f.stream || f.reason != endEOF || f.status < 200 || f.status >= 300 || f.cap == nil {
		return false
	}
	if f.encoding != "" {
		return true // encoded: the last byte says nothing
	}
	last := f.cap.head
	if f.cap.truncated() {
		last = f.cap.tailBytes()
	}
	for i := len(last) - 1; i >= 0; i-- {
		switch last[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case '}', ']':
			return false
		}
		return true
	}
	return false // empty
}

// firstStart is when the logical call began: its first attempt's start.
func (a *attempt) firstStart() time.Time {
	if a.claimed != nil {
		return a.claimed.start
	}
	return a.start
}

// attempts counts the HTTP attempts of the logical call so far: its
// retries. A redirect's next hop is not a retry.
func (a *attempt) attempts() int {
	n := max(1, int(a.inner.Load()))
	if a.claimed != nil {
		n += a.claimed.attempts
		if a.hop {
			n--
		}
	}
	return n
}

// hops counts the redirects followed within the logical call so far.
func (a *attempt) hops() int {
	if a.claimed == nil {
		return 0
	}
	if a.hop {
		return a.claimed.hops + 1
	}
	return a.claimed.hops
}

// result parses the response and decides the outcome.
func (a *attempt) result(f *finishInfo) providers.Result {
	if f.reason == endTransport {
		return providers.Result{Outcome: record.Failure(a.failureType(f.err)), ErrorMessage: f.err.Error()}
	}
	if f.status >= 300 && f.status < 400 {
		// No value came back: a redirect that was followed is replaced by
		// its last hop's record, one that was not is what the caller got.
		res := providers.Result{Outcome: record.Failure(record.ErrorUnknown), Finished: true}
		res.Outcome.HTTPStatus = f.status
		res.ErrorMessage = "HTTP " + strconv.Itoa(f.status) + " redirect"
		if loc := f.location; loc != "" {
			res.ErrorMessage += " to " + loc
		}
		res.ErrorMessage += ", not followed"
		return res
	}
	a.parse()
	res := a.parseResponse(f)
	res.Outcome.HTTPStatus = f.status
	if f.status >= 400 {
		if f.reason == endClose && f.cap != nil && f.cap.total == 0 {
			// Closed unread (SDKs retry that way): the status says it all.
			res.ErrorMessage = "HTTP " + strconv.Itoa(f.status) + " " + http.StatusText(f.status) + " (body closed unread)"
		}
		return res
	}
	whole := f.reason == endEOF && f.framed ||
		f.length >= 0 && f.cap != nil && f.cap.total == f.length && f.reason != endAbandoned
	if whole && res.Outcome.ErrorType == record.ErrorTransport {
		// The provider found JSON that ends early (a transport failure),
		// but every byte the response declared came, and its end was
		// marked: nothing was lost on the way. The server sent what cannot
		// be decoded, and sending it again would not help.
		res.Outcome = record.Failure(record.ErrorDecode)
		res.Outcome.HTTPStatus = f.status
		res.ErrorMessage += "; the body came whole, as its framing declared"
		// Still held for a retry: the caller's SDK reads it as an
		// unexpected EOF (go-openai, openai-go), as a cut connection
		// reads, and a retry loop may well send it again.
		f.cutWhole = true
	}
	if whole || f.reason == endEOF || res.Finished {
		return res
	}
	keep := res.Outcome
	typ, why := record.ErrorIncomplete, ""
	switch f.reason {
	case endReadError, endContext:
		typ = a.failureType(f.err)
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

// failureType classifies the error that ended an attempt without an HTTP
// answer, or a body half way. The call's context decides first: one cause
// must always give one type, and when a deadline cuts a stream the
// transport's error (a canceled request, a closed connection) and the
// context's own may arrive in either order. A deadline that has passed is
// a timeout even before the context's timer says so: http.Client's
// Timeout cancels the transport on a timer of its own.
func (a *attempt) failureType(err error) string {
	if cerr := a.ctx.Err(); cerr != nil {
		return record.ErrorTypeForError(cerr)
	}
	if dl, ok := a.ctx.Deadline(); ok && !time.Now().Before(dl) {
		return record.ErrorTimeout
	}
	typ := record.ErrorTypeForError(err)
	if typ == record.ErrorUnknown || typ == record.ErrorDecode {
		typ = record.ErrorTransport
	}
	return typ
}

func (a *attempt) parseResponse(f *finishInfo) (res providers.Result) {
	r := a.r
	a.presp = providers.Response{StatusCode: f.status, ContentType: f.contentType, Header: f.header, Stream: f.stream || a.call.Stream, EOF: f.reason == endEOF}
	presp := &a.presp
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
		if (f.status >= 400 || a.r.cfg.storeOutput || a.r.cfg.programSrc) && !binaryFrames(f.contentType) {
			// An error body becomes the error message; with output kept,
			// the text does: redact the body the provider reads.
			// Otherwise nothing of a success's text is kept, and what is
			// (model, ids) is redacted when the record is built: a body
			// with no secret, nearly every body, is not scanned twice.
			presp.Body = a.redact(presp.Body)
			presp.Tail = a.redact(presp.Tail)
		}
	}
	defer func() {
		if x := recover(); x != nil {
			r.trouble("panic in a provider parsing a response", &record.PanicError{Value: x})
			res = providers.Result{Outcome: statusOutcome(f.status)}
		}
	}()
	scratch := bufPool.Get().(*[]byte)
	defer func() {
		// The capture goes back to its pool, and the scratch buffer: the
		// result's strings are its own.
		presp.Body, presp.Tail, presp.Scratch = nil, nil, nil
		releaseBuf(scratch)
	}()
	presp.Scratch = scratch
	res = a.prov.ParseResponse(&a.call, presp)
	if binaryFrames(f.contentType) && (a.r.cfg.storeOutput || a.r.cfg.programSrc) {
		// A framed body is not redacted whole: a secret replaced in it
		// would change a frame's length and break its CRC. What is read of
		// it is redacted instead (the error message is, with the record).
		for i := range res.Output.Parts {
			p := &res.Output.Parts[i]
			p.Content = a.redactString(p.Content)
			if len(p.Arguments) > 0 {
				p.Arguments = json.RawMessage(a.redactString(string(p.Arguments)))
			}
		}
	}
	return res
}

// binaryFrames reports whether a Content-Type is a binary framing whose
// frames carry their lengths and checksums (AWS's eventstream).
func binaryFrames(ct string) bool { return strings.HasPrefix(ct, eventStream) }

func statusOutcome(status int) record.Outcome {
	if t := record.ErrorTypeForStatus(status); t != "" {
		return record.Failure(t)
	}
	return record.Success("http.response")
}

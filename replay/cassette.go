package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llmhistory/llmhistory/middleware"
)

// ErrNoCassette is wrapped by the error of [New] when the cassette file
// does not exist in ModeReplay: there is nothing to replay.
var ErrNoCassette = errors.New("replay: no cassette")

// ErrClosed is returned by a call made through a closed cassette.
var ErrClosed = errors.New("replay: cassette closed")

// Cassette is an [http.RoundTripper] that records calls to a file and
// replays them. It is safe for concurrent use.
type Cassette struct {
	path string
	cfg  config
	mode Mode

	mu       sync.Mutex
	entries  []*entry   // loaded, in file order; then new ones, in the order their requests started
	index    matchIndex // the ready entries, for matching
	faults   []*faultState
	literals []literal
	open     map[*recBody]*entry
	errs     []error // interactions refused: secrets, hooks, size
	dirty    bool    // new interactions not yet saved
	discard  bool    // never save (ForTest, for a test that failed)
	closed   bool

	saveMu   sync.Mutex
	closeErr error
	once     sync.Once
}

var _ http.RoundTripper = (*Cassette)(nil)

type entryState uint8

const (
	ready   entryState = iota // answers requests; written on save
	pending                   // being recorded
	dropped                   // refused or abandoned: never written
)

type entry struct {
	it    Interaction
	norm  norm
	index int // position in entries
	line  int // line in the file; 0 for a new one
	used  int // times it answered
	state entryState
	class *class // in index, while ready
}

type faultState struct {
	Fault
	fired bool
}

// New opens the cassette at path. The mode is [WithMode]'s, else the
// [EnvMode] environment variable's, else [ModeReplay].
//
// In ModeReplay the file must exist (the error wraps [ErrNoCassette] and
// fs.ErrNotExist otherwise), and in ModeOnce it is read if it exists; a
// bad line fails with a [*LineError]. ModeRecord and ModePassthrough do
// not read it. Close the cassette when done: that is when a recording is
// written.
func New(path string, opts ...Option) (*Cassette, error) {
	c := &Cassette{path: path, cfg: newConfig(opts), open: map[*recBody]*entry{}}
	c.mode = c.cfg.mode
	if c.mode == 0 {
		c.mode = ModeReplay
		if env := os.Getenv(EnvMode); env != "" {
			m, err := ParseMode(env)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", EnvMode, err)
			}
			c.mode = m
		}
	}
	if c.mode < ModeReplay || c.mode > ModePassthrough {
		return nil, fmt.Errorf("replay: unknown mode %d", int(c.mode))
	}
	for _, f := range c.cfg.faults {
		c.faults = append(c.faults, &faultState{Fault: f})
	}
	if c.mode == ModeReplay || c.mode == ModeOnce {
		f, err := os.Open(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && c.mode == ModeOnce:
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%w: %s does not exist, so there is nothing to replay; record it by running the test once with %s=record (it calls the provider): %w",
				ErrNoCassette, path, EnvMode, err)
		case err != nil:
			return nil, fmt.Errorf("replay: %w", err)
		default:
			its, err := readLines(f, path)
			f.Close()
			if err != nil {
				return nil, err
			}
			for i, l := range its {
				e := &entry{it: l.it, norm: c.cfg.normalize(&l.it.Request), index: i, line: l.line}
				c.entries = append(c.entries, e)
				c.index.add(&c.cfg, e)
			}
		}
	}
	return c, nil
}

// Path returns the cassette's file.
func (c *Cassette) Path() string { return c.path }

// Mode returns the cassette's mode.
func (c *Cassette) Mode() Mode { return c.mode }

// Middleware returns the cassette as a middleware, to use with
// [middleware.Chain] or [middleware.NewClient]. The next transport of the
// chain is the network (ModeRecord, ModeOnce, ModePassthrough); nil next
// means the cassette's own transport ([WithTransport]). Put the recorder
// outside it, and a replayed call is recorded like a live one:
//
//	client := middleware.NewClient(nil, rec.Middleware(), cassette.Middleware())
func (c *Cassette) Middleware() middleware.Middleware {
	return func(next http.RoundTripper) http.RoundTripper {
		if next == nil {
			next = c.cfg.transport
		}
		return &chained{c: c, next: next}
	}
}

// Client returns an *http.Client whose transport is the cassette.
func (c *Cassette) Client() *http.Client { return &http.Client{Transport: c} }

type chained struct {
	c    *Cassette
	next http.RoundTripper
}

func (t *chained) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.c.roundTrip(req, t.next)
}

// RoundTrip answers req from the cassette or from the network, as the mode
// says. It never changes req. A request with no recorded answer in
// ModeReplay fails with a [*MissError]; a request or response holding a
// secret, in ModeRecord and ModeOnce, with a [*SecretError] (for a
// response, from the body's last Read or Close).
func (c *Cassette) RoundTrip(req *http.Request) (*http.Response, error) {
	return c.roundTrip(req, c.cfg.transport)
}

func (c *Cassette) roundTrip(req *http.Request, next http.RoundTripper) (*http.Response, error) {
	if c.mode == ModePassthrough {
		return next.RoundTrip(req)
	}
	if pass, err := c.passes(req); err != nil {
		closeRequest(req)
		return nil, err
	} else if pass {
		return next.RoundTrip(req)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		closeRequest(req)
		return nil, ErrClosed
	}
	body, send, err := takeBody(req)
	if err != nil {
		return nil, fmt.Errorf("replay: reading the request body: %w", err)
	}
	got := Request{Method: req.Method, URL: safeURL(req.URL), Header: safeHeader(req.Header), Body: body}
	if got.Method == "" {
		got.Method = http.MethodGet
	}
	c.cfg.redactRequest(&got) // send keeps the body as it was
	if c.mode != ModeRecord {
		a, miss, err := c.find(&got)
		switch {
		case err != nil:
			closeRequest(send)
			return nil, err
		case a != nil:
			closeRequest(send)
			return c.play(req, a)
		case c.mode == ModeReplay:
			closeRequest(send)
			return nil, miss
		}
	}
	return c.record(req, send, got, next)
}

// passes asks the functions given with WithPassthrough whether req goes
// to the network untouched.
func (c *Cassette) passes(req *http.Request) (pass bool, err error) {
	defer func() {
		if p := recover(); p != nil { // a function of the caller's
			pass, err = false, fmt.Errorf("replay: panic in a WithPassthrough function: %v", p)
		}
	}()
	for _, f := range c.cfg.passthrough {
		if f(req) {
			return true, nil
		}
	}
	return false, nil
}

// takeBody returns the request's body and the request to send: req itself
// when the body could be read through GetBody, else a shallow copy whose
// body replays what was read from req's (which is closed).
func takeBody(req *http.Request) ([]byte, *http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, req, nil
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			b, err := io.ReadAll(rc)
			rc.Close()
			if err == nil {
				return b, req, nil
			}
		}
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	send := req.WithContext(req.Context()) // a shallow copy: req stays as it was
	send.Body = io.NopCloser(bytes.NewReader(b))
	send.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, send, nil
}

// closeRequest closes a request body that will not be sent, as the
// RoundTripper contract asks.
func closeRequest(req *http.Request) {
	if req != nil && req.Body != nil {
		req.Body.Close()
	}
}

// answer is what a replayed call gets: a recorded interaction, a fault,
// or both.
type answer struct {
	e *entry
	f *Fault
	// shortWait says the recorded Retry-After headers are replayed
	// shortened (WithRetryAfter).
	shortWait bool
}

// find looks for the answer to got (see pick) and a fault that applies.
func (c *Cassette) find(got *Request) (a *answer, miss *MissError, err error) {
	gn := c.cfg.normalize(got)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		if p := recover(); p != nil { // a matcher or fault target of the caller's
			a, miss, err = nil, nil, fmt.Errorf("replay: panic in a matcher or fault target: %v", p)
		}
	}()
	chosen := c.pick(got, &gn)
	for _, f := range c.faults {
		if f.fired {
			continue
		}
		var applies bool
		if f.Request != nil {
			applies = (chosen != nil || f.standalone()) && f.Request(cloneRequest(got))
		} else {
			applies = chosen != nil && chosen.index == f.Interaction
		}
		if !applies {
			continue
		}
		f.fired = true
		if f.replaces() {
			return &answer{e: chosen, f: &f.Fault}, nil, nil
		}
		chosen.used++
		return &answer{e: chosen, f: &f.Fault, shortWait: c.shortensWait(got, &gn, chosen)}, nil, nil
	}
	if chosen == nil {
		if c.mode != ModeReplay {
			return nil, nil, nil // ModeOnce records it: nobody reads the miss
		}
		return nil, c.miss(got, &gn), nil
	}
	chosen.used++
	return &answer{e: chosen, shortWait: c.shortensWait(got, &gn, chosen)}, nil, nil
}

// shortensWait says the answer e, just given to got, is replayed with its
// Retry-After headers shortened: WithRetryAfter is on, they ask for
// longer, and the cassette holds another answer for the retry (see
// WithRetryAfter). Called with c.mu held.
func (c *Cassette) shortensWait(got *Request, gn *norm, e *entry) bool {
	r := e.it.Response
	if c.cfg.retryAfter < 0 || r == nil || !waitsLonger(r.Header, c.cfg.retryAfter) {
		return false
	}
	next := c.pick(got, gn)
	return next != nil && next != e
}

// pick returns the recorded interaction that answers got: the first that
// matches and has not answered yet; else, WithReplayableInteractions, the
// first of those that match and answered the fewest times, or,
// WithRepeatLast, the last that matches. Called with c.mu held.
func (c *Cassette) pick(got *Request, gn *norm) *entry {
	var first, last, least *entry
	if c.cfg.matcher == nil {
		first, last = c.index.lookup(&c.cfg, gn)
		if first == nil && c.cfg.replayable {
			least = c.index.leastUsed(&c.cfg, gn)
		}
	} else {
		for _, e := range c.entries {
			if e.state != ready || !c.matches(got, gn, e) {
				continue
			}
			if first == nil && e.used == 0 {
				first = e
			}
			if least == nil || e.used < least.used {
				least = e
			}
			last = e
		}
	}
	switch {
	case first != nil:
		return first
	case c.cfg.replayable:
		return least
	case c.cfg.repeatLast:
		return last
	}
	return nil
}

func cloneRequest(r *Request) *Request {
	c := r.clone()
	return &c
}

// matches asks the matcher given with WithMatcher whether e answers got.
func (c *Cassette) matches(got *Request, gn *norm, e *entry) bool {
	next := func(g, r *Request) bool {
		a, b := c.cfg.normalize(g), c.cfg.normalize(r)
		return c.cfg.same(&a, &b)
	}
	return c.cfg.matcher(cloneRequest(got), cloneRequest(&e.it.Request), next)
}

// miss explains why got has no answer. Called with c.mu held.
//
// The closest recorded request is the first of those with the least key
// (method differs, path differs, number of differences, already used).
// The requests of a class share the first three, so each class is
// compared once, counting its differences, and only the closest
// request's are listed.
func (c *Cassette) miss(got *Request, gn *norm) *MissError {
	m := &MissError{Cassette: c.path, Mode: c.mode, Request: *cloneRequest(got), Index: -1}
	var best *entry
	var bestKey [4]int
	for _, cl := range c.index.classes {
		if len(cl.members) == 0 {
			continue
		}
		n := c.cfg.count(gn, &cl.rep, maxDiffs, false)
		key := [4]int{0, 0, n, 0}
		if gn.method != cl.rep.method {
			key[0] = 1
		}
		if gn.path != cl.rep.path {
			key[1] = 1
		}
		if n == 0 {
			m.Answers += len(cl.members)
		}
		e := cl.firstUnused()
		if e == nil {
			e, key[3] = cl.members[0], 1
		}
		if d := slices.Compare(key[:], bestKey[:]); best == nil || d < 0 || d == 0 && e.index < best.index {
			best, bestKey = e, key
		}
	}
	if best == nil {
		return m
	}
	m.Closest = cloneRequest(&best.it.Request)
	m.Index, m.Line = best.index, best.line
	switch {
	case bestKey[2] > 0:
		m.Differences = c.cfg.differences(gn, &best.norm)
	case best.used > 0:
		m.UsedUp = true
	default:
		m.Rejected = true
	}
	return m
}

// play gives a recorded answer, with its fault if any.
func (c *Cassette) play(req *http.Request, a *answer) (*http.Response, error) {
	ctx := req.Context()
	var wait time.Duration
	if a.f != nil {
		wait += a.f.Delay
	}
	if c.cfg.recordedSpeed && a.e != nil {
		wait += a.e.it.Latency
	}
	if wait > 0 {
		if err := c.cfg.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f := a.f; f != nil && f.Err != nil {
		return nil, f.Err
	}
	if f := a.f; f != nil && f.Status != 0 {
		h := f.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		if h.Get("Content-Type") == "" {
			if _, ok := decodeJSON([]byte(f.Body)); ok {
				h.Set("Content-Type", "application/json")
			} else {
				h.Set("Content-Type", "text/plain; charset=utf-8")
			}
		}
		return c.response(req, f.Status, h, int64(len(f.Body)), [][]byte{[]byte(f.Body)}, nil, io.EOF), nil
	}
	it := &a.e.it
	r := it.Response
	if r == nil {
		return nil, &RecordedError{Message: it.Err}
	}
	var frames [][]byte
	var gaps []time.Duration
	if r.Stream {
		frames = make([][]byte, len(r.Frames))
		for i, f := range r.Frames {
			frames[i] = f.Data
		}
		if c.cfg.recordedSpeed {
			gaps = make([]time.Duration, len(r.Frames))
			var prev time.Duration
			for i, f := range r.Frames {
				gaps[i] = max(0, f.At-prev)
				prev = max(prev, f.At)
			}
		}
	} else if len(r.Body) > 0 {
		frames = [][]byte{r.Body}
	}
	var end error = io.EOF
	switch r.End {
	case EndClosed:
		end = &RecordedError{Message: fmt.Sprintf("the recorded body ends here: the caller closed it after %d bytes when it was recorded", len(r.body())), cut: true}
	case EndError:
		end = &RecordedError{Message: r.EndErr}
	}
	if f := a.f; f != nil {
		if f.FrameDelay > 0 && len(frames) > 1 {
			if gaps == nil {
				gaps = make([]time.Duration, len(frames))
			}
			for i := 1; i < len(gaps); i++ {
				gaps[i] += f.FrameDelay
			}
		}
		if f.Cut {
			frames = frames[:min(max(f.CutAfter, 0), len(frames))]
			end = io.ErrUnexpectedEOF
		}
	}
	h := r.Header.Clone()
	if a.shortWait {
		shortenWait(h, c.cfg.retryAfter)
	}
	resp := c.response(req, r.Status, h, r.ContentLength, frames, gaps, end)
	resp.TransferEncoding = slices.Clone(r.TransferEncoding)
	resp.Uncompressed = r.Uncompressed
	return resp, nil
}

func (c *Cassette) response(req *http.Request, status int, h http.Header, length int64, frames [][]byte, gaps []time.Duration, end error) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	resp := &http.Response{
		Status:        strings.TrimSpace(fmt.Sprintf("%d %s", status, http.StatusText(status))),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		ContentLength: length,
		Request:       req,
	}
	if length == 0 && len(frames) == 0 && end == io.EOF {
		resp.Body = http.NoBody
	} else {
		resp.Body = &playBody{ctx: req.Context(), frames: frames, gaps: gaps, end: end, sleep: c.cfg.sleep}
	}
	return resp
}

// RecordedError is an error that was recorded and is given back in
// replay: a transport error that ended a call, or a read error that ended
// a response body.
type RecordedError struct {
	Message string
	cut     bool // a body the caller closed early: Is(io.ErrUnexpectedEOF)
}

func (e *RecordedError) Error() string { return "replay: recorded error: " + e.Message }

func (e *RecordedError) Is(target error) bool { return e.cut && target == io.ErrUnexpectedEOF }

// record sends req to the provider and records the interaction.
func (c *Cassette) record(req, send *http.Request, got Request, next http.RoundTripper) (*http.Response, error) {
	lits := credentialLiterals(req)
	stored := Request{Method: got.Method, URL: got.URL, Header: http.Header{}, Body: got.Body}
	for k, v := range got.Header {
		if c.cfg.keptHeaders[http.CanonicalHeaderKey(k)] {
			stored.Header[k] = v
		}
	}
	c.mu.Lock()
	for _, l := range lits { // the same key on every request: keep it once
		if !slices.ContainsFunc(c.literals, func(k literal) bool { return k.value == l.value }) {
			c.literals = append(c.literals, l)
		}
	}
	all := slices.Clone(c.literals)
	c.mu.Unlock()
	if serr := checkSecrets(&Interaction{Request: stored}, all); serr != nil {
		closeRequest(send)
		return nil, c.refuse(nil, serr)
	}
	e := &entry{state: pending}
	c.mu.Lock()
	e.index = len(c.entries)
	c.entries = append(c.entries, e)
	c.mu.Unlock()

	start := time.Now()
	resp, err := next.RoundTrip(send)
	latency := time.Since(start)
	if err != nil {
		if req.Context().Err() != nil { // the caller's doing, not the provider's
			c.drop(e)
		} else {
			c.complete(e, Interaction{Request: stored, Err: err.Error(), Latency: latency})
		}
		return resp, err
	}
	if resp == nil {
		c.drop(e)
		return nil, errors.New("replay: the transport returned neither a response nor an error")
	}
	r := &Response{
		Status:           resp.StatusCode,
		Header:           safeHeader(resp.Header),
		ContentLength:    resp.ContentLength,
		TransferEncoding: slices.Clone(resp.TransferEncoding),
		Uncompressed:     resp.Uncompressed,
	}
	it := Interaction{Request: stored, Response: r, Latency: latency}
	if serr := checkSecrets(&it, all); serr != nil {
		if resp.Body != nil {
			resp.Body.Close()
		}
		return nil, c.refuse(e, serr)
	}
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		if err := c.complete(e, it); err != nil {
			if resp.Body != nil {
				resp.Body.Close()
			}
			return nil, err
		}
		return resp, nil
	}
	r.Stream, r.Body = isStream(resp), nil
	b := &recBody{
		rc:      resp.Body,
		ctx:     req.Context(),
		start:   time.Now(),
		stream:  r.Stream,
		sse:     isSSE(resp),
		maxBody: c.cfg.maxBody,
	}
	b.finish = func(b *recBody, end End, rerr error) error {
		c.mu.Lock()
		delete(c.open, b)
		c.mu.Unlock()
		b.mu.Lock()
		over := b.over
		r.Body, r.Frames = b.body, b.frames
		b.mu.Unlock()
		if over {
			return c.refuse(e, fmt.Errorf("replay: %s: the response body is larger than %d bytes (WithMaxBody); it was not recorded", describe(&stored), c.cfg.maxBody))
		}
		r.End = end
		if rerr != nil {
			r.EndErr = rerr.Error()
		}
		return c.complete(e, it)
	}
	c.mu.Lock()
	c.open[b] = e
	c.mu.Unlock()
	resp.Body = b
	return resp, nil
}

// isStream says a response body is kept as frames: a server-sent event
// stream, newline-delimited JSON, or any other body of unknown length that
// is not a JSON document (a JSON document's chunking means nothing to its
// reader, and kept whole it stays readable in the cassette).
func isStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream", "application/x-ndjson", "application/jsonl", "application/json-seq":
		return true
	}
	return resp.ContentLength < 0 && mt != "application/json" && !strings.HasSuffix(mt, "+json")
}

func isSSE(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}

// complete runs the hooks and the secret check on a recorded interaction
// and makes it ready to answer and to be saved; or refuses it.
func (c *Cassette) complete(e *entry, it Interaction) error {
	c.cfg.redactInteraction(&it)
	for _, hook := range c.cfg.beforeSave {
		if err := callHook(hook, &it); err != nil {
			return c.refuse(e, fmt.Errorf("replay: %s: WithBeforeSave hook: %w", describe(&it.Request), err))
		}
	}
	c.mu.Lock()
	all := slices.Clone(c.literals)
	c.mu.Unlock()
	if serr := checkSecrets(&it, all); serr != nil {
		return c.refuse(e, serr)
	}
	n := c.cfg.normalize(&it.Request)
	c.mu.Lock()
	c.index.remove(e)
	e.it, e.norm, e.state = it, n, ready
	c.index.add(&c.cfg, e)
	c.dirty = !c.discard
	c.mu.Unlock()
	return nil
}

func callHook(hook func(*Interaction) error, it *Interaction) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return hook(it)
}

// refuse drops an interaction (e may be nil: refused before it had a
// place) and keeps err for Close.
func (c *Cassette) refuse(e *entry, err error) error {
	var serr *SecretError
	if errors.As(err, &serr) {
		serr.Cassette = c.path
		if e != nil {
			serr.Interaction = e.index
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e != nil {
		c.index.remove(e)
		e.state = dropped
	}
	c.errs = append(c.errs, err)
	return err
}

func (c *Cassette) drop(e *entry) {
	c.mu.Lock()
	c.index.remove(e)
	e.state = dropped
	c.mu.Unlock()
}

// Interactions returns copies of the interactions the cassette holds:
// those loaded, then those recorded in this run, in request order.
func (c *Cassette) Interactions() []Interaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Interaction
	for _, e := range c.entries {
		if e.state == ready {
			out = append(out, e.it.clone())
		}
	}
	return out
}

// Unused returns the indexes of the interactions that have not answered a
// request yet. A test can assert it is empty: every recorded call was made.
func (c *Cassette) Unused() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for _, e := range c.entries {
		if e.state == ready && e.used == 0 && e.line > 0 {
			out = append(out, e.index)
		}
	}
	return out
}

// Save writes the cassette now, in ModeRecord and ModeOnce, if anything
// was recorded since it was last written; Close saves too. The file is
// replaced atomically (a temporary file renamed over it), so a crash
// leaves the old cassette or the new one, never a part. Interactions found
// to hold a secret are left out and returned as [*SecretError]s.
func (c *Cassette) Save() error {
	refused, err := c.save()
	return errors.Join(append(refused, err)...)
}

func (c *Cassette) save() (refused []error, err error) {
	if c.mode != ModeRecord && c.mode != ModeOnce {
		return nil, nil
	}
	c.saveMu.Lock()
	defer c.saveMu.Unlock()
	c.mu.Lock()
	if !c.dirty || c.discard {
		c.mu.Unlock()
		return nil, nil
	}
	c.dirty = false
	var list []*entry
	for _, e := range c.entries {
		if e.state == ready {
			list = append(list, e)
		}
	}
	lits := slices.Clone(c.literals)
	c.mu.Unlock()
	// Check again: a key seen in a later request may be in an earlier
	// interaction.
	var buf bytes.Buffer
	for _, e := range list {
		if serr := checkSecrets(&e.it, lits); serr != nil {
			refused = append(refused, c.refuse(e, serr))
			continue
		}
		if err := encodeLine(&buf, &e.it); err != nil {
			refused = append(refused, c.refuse(e, fmt.Errorf("replay: %s: %w", describe(&e.it.Request), err)))
			continue
		}
	}
	if err := writeAtomic(c.path, buf.Bytes()); err != nil {
		c.mu.Lock()
		c.dirty = true
		c.mu.Unlock()
		return refused, err
	}
	return refused, nil
}

// writeAtomic replaces path with data: written to a temporary file in the
// same directory, synced, then renamed over path.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("replay: writing %s: %w", path, err)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Close ends the cassette: response bodies still open are recorded as
// far as they were read (marked closed), and in ModeRecord and ModeOnce
// the cassette is saved. It returns every interaction refused during the
// run ([*SecretError] and the like) and any failure to write. Calls made
// afterwards fail with [ErrClosed]. Close is safe to call more than once.
func (c *Cassette) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		bodies := make([]*recBody, 0, len(c.open))
		for b := range c.open {
			bodies = append(bodies, b)
		}
		c.mu.Unlock()
		for _, b := range bodies {
			b.end(EndClosed, nil)
		}
		_, werr := c.save()
		c.mu.Lock()
		errs := slices.Clone(c.errs)
		c.mu.Unlock()
		c.closeErr = errors.Join(append(errs, werr)...)
	})
	return c.closeErr
}

// lined is an interaction with the line it was read from.
type lined struct {
	it   Interaction
	line int
}

// readLines is Read, keeping line numbers for error messages.
func readLines(r io.Reader, path string) ([]lined, error) {
	var out []lined
	err := scan(r, path, func(it Interaction, line int) { out = append(out, lined{it, line}) })
	return out, err
}

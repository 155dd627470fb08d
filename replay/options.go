package replay

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/llmhistory/llmhistory/redact"
)

// Mode says what a cassette does with a request.
type Mode int

const (
	// ModeReplay answers every request from the cassette and never
	// touches the network; a request with no recorded answer fails with a
	// [*MissError]. The default when the cassette file exists.
	ModeReplay Mode = iota + 1
	// ModeRecord sends every request to the provider and writes a new
	// cassette (replacing the file) at Close.
	ModeRecord
	// ModeOnce answers what the cassette holds and sends what it does not
	// to the provider, adding those interactions to the file at Close.
	ModeOnce
	// ModePassthrough sends every request to the provider and neither
	// reads nor writes the cassette.
	ModePassthrough
)

// EnvMode is the environment variable that picks the mode when
// [WithMode] is not given: "replay", "record", "once" or "passthrough".
const EnvMode = "LLMHISTORY_REPLAY"

func (m Mode) String() string {
	switch m {
	case ModeReplay:
		return "replay"
	case ModeRecord:
		return "record"
	case ModeOnce:
		return "once"
	case ModePassthrough:
		return "passthrough"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads a mode's name, as [EnvMode] holds it.
func ParseMode(s string) (Mode, error) {
	for m := ModeReplay; m <= ModePassthrough; m++ {
		if strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("replay: unknown mode %q (want replay, record, once or passthrough)", s)
}

// DefaultMaxBody is the largest response body recorded by default.
const DefaultMaxBody = 64 << 20

// Option configures a [Cassette].
type Option func(*config)

type config struct {
	mode           Mode
	transport      http.RoundTripper
	ignoredFields  [][]string
	ign            ignorer // ignoredFields, for the walkers
	ignoredQuery   map[string]bool
	matchedHeaders []string
	keptHeaders    map[string]bool
	matcher        func(got, recorded *Request, next MatchFunc) bool
	repeatLast     bool
	replayable     bool
	passthrough    []func(*http.Request) bool
	recordedSpeed  bool
	// retryAfter caps the waits replayed answers ask for (WithRetryAfter);
	// negative keeps them as recorded. retryAfterByDefault says it is
	// ForTest's default, which WithRecordedSpeed turns off.
	retryAfter          time.Duration
	retryAfterByDefault bool
	sleep               func(context.Context, time.Duration) error
	faults              []Fault
	beforeSave          []func(*Interaction) error
	redactor            *redact.Redactor
	maxBody             int64
}

// defaultKept are the request headers a cassette keeps: they say what was
// asked, and do not change from one machine or run to the next (unlike
// User-Agent, X-Stainless-Os or an Idempotency-Key).
var defaultKept = []string{"Content-Type", "Accept", "Openai-Beta", "Anthropic-Version", "Anthropic-Beta", "X-Stainless-Retry-Count"}

func newConfig(opts []Option) config {
	c := config{ignoredQuery: map[string]bool{}, keptHeaders: map[string]bool{}, sleep: sleep, maxBody: DefaultMaxBody, retryAfter: -1}
	for _, h := range defaultKept {
		c.keptHeaders[h] = true
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.transport == nil {
		c.transport = http.DefaultTransport
	}
	if c.retryAfterByDefault && c.recordedSpeed {
		c.retryAfter = -1
	}
	c.ign = newIgnorer(c.ignoredFields)
	return c
}

// WithMode sets the mode, overriding [EnvMode]. Without it the mode comes
// from EnvMode, else it is [ModeReplay]: a cassette is never recorded, and
// the network never called, unless asked for.
func WithMode(m Mode) Option { return func(c *config) { c.mode = m } }

// WithTransport sets the transport that reaches the provider in
// ModeRecord, ModeOnce and ModePassthrough; nil means
// [http.DefaultTransport]. ([Cassette.Middleware] uses the next transport
// of the chain instead.)
func WithTransport(rt http.RoundTripper) Option { return func(c *config) { c.transport = rt } }

// WithIgnoredFields leaves fields of JSON request bodies out of matching:
// fields that change from run to run (a user id, a seed, a request id, a
// timestamp). Paths are gjson-style, relative to the body: "user",
// "metadata.request_id", "messages.0.name"; a "*" or "#" segment matches
// any key or index ("messages.#.name"), and a path ignores everything
// under it.
func WithIgnoredFields(paths ...string) Option {
	return func(c *config) {
		for _, p := range paths {
			c.ignoredFields = append(c.ignoredFields, splitPath(p))
		}
	}
}

// WithIgnoredQuery leaves query parameters out of matching. Secret ones
// (key, api_key, token, ...) are always left out.
func WithIgnoredQuery(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			c.ignoredQuery[n] = true
		}
	}
}

// WithMatchedHeaders makes request headers part of matching (none are by
// default), for headers that change the answer (an API version, a beta
// flag). They are kept in the cassette; credential headers never are, so
// naming one has no effect.
func WithMatchedHeaders(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			n = http.CanonicalHeaderKey(n)
			if !redact.IsCredentialHeader(n) {
				c.matchedHeaders = append(c.matchedHeaders, n)
				c.keptHeaders[n] = true
			}
		}
	}
}

// WithRequestHeaders keeps more request headers in the cassette, for
// people reading it; they are not matched. Credential headers are never
// kept.
func WithRequestHeaders(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			c.keptHeaders[http.CanonicalHeaderKey(n)] = true
		}
	}
}

// WithMatcher replaces the comparison of a request with a recorded one.
// m gets the request made (every header but the credentials), the
// recorded one (its kept headers), and next, the default comparison (which
// honours the other matching options), so it can tighten it
// (next(got, rec) && ...) or loosen it (next(normalize(got),
// normalize(rec))). Both requests are copies m may change. It is called
// with the cassette locked: it must not use the cassette.
func WithMatcher(m func(got, recorded *Request, next MatchFunc) bool) Option {
	return func(c *config) { c.matcher = m }
}

// WithRepeatLast answers a request whose recorded answers were all given
// with the last of them again, instead of failing with a [*MissError].
// For polling, and for tests that make a call a varying number of times;
// by default an extra call is an error, because it is a change in what the
// code does. [WithReplayableInteractions] gives them all again instead.
func WithRepeatLast() Option { return func(c *config) { c.repeatLast = true } }

// WithReplayableInteractions lets a recorded answer be used again: a
// request whose recorded answers were all given gets them again, in
// order (the one given the fewest times, the first of those), instead of
// failing with a [*MissError]. For tests that make the same call any
// number of times (subtests sharing a cassette, a health check, a call in
// a loop whose length varies).
//
// It is go-vcr's option of the same name, with one difference: go-vcr
// then always answers with the first matching interaction, so a recorded
// 429 and the 200 that followed it give the 429 forever; here they are
// given in turn, and each call retries into its 200 as it did live. It
// takes precedence over [WithRepeatLast].
func WithReplayableInteractions() Option { return func(c *config) { c.replayable = true } }

// WithPassthrough sends the requests pass returns true for to the network
// (the next transport of the chain, or [WithTransport]'s) in every mode,
// untouched: they are neither matched nor recorded. For calls a test
// makes for real next to the replayed ones: a local service of its own, a
// tool's API, a token endpoint. It is go-vcr's option of the same name;
// it may be given several times, and a request passes through when any
// says so. pass gets the caller's request, credentials included, and must
// not read its body (req.GetBody gives a copy, when set).
func WithPassthrough(pass func(req *http.Request) bool) Option {
	return func(c *config) {
		if pass != nil {
			c.passthrough = append(c.passthrough, pass)
		}
	}
}

// WithRecordedSpeed replays at the recorded pace: each response after its
// recorded latency, each frame of a stream at its recorded offset. By
// default everything is given at once.
func WithRecordedSpeed() Option { return func(c *config) { c.recordedSpeed = true } }

// WithRetryAfter shortens the waits replayed rate limits and overloads
// ask for: a Retry-After or retry-after-ms header of a replayed answer
// asking for longer than limit is replayed as limit (Retry-After in whole
// seconds, rounded down). An SDK that honours them (openai-go, the
// Anthropic SDK, [middleware.Retry]) then retries at once, and a test of
// the retry path does not sleep as long as the provider made it sleep
// when it was recorded. A negative limit keeps them as recorded, the
// default of [New]; [ForTest] replays them as 0 unless given this option
// or [WithRecordedSpeed].
//
// A wait is shortened only when the cassette holds an answer for the
// retry: another recorded interaction that matches the same request and
// would answer it next (one not used yet; with
// [WithReplayableInteractions], any other). Otherwise the client did not retry
// when it was recorded (the wait was longer than it would wait: openai-go
// gives up past 2 minutes, middleware.Retry past its MaxRetryAfter), and
// the recorded wait makes it give up again, rather than retry into a
// [*MissError]. Headers of a [Fault] are given as they are.
func WithRetryAfter(limit time.Duration) Option {
	return func(c *config) { c.retryAfter, c.retryAfterByDefault = limit, false }
}

// WithSleep replaces how the cassette waits (recorded speed, Delay and
// FrameDelay faults), for tests of those waits. sleep must return early,
// with an error, when ctx ends.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithFault adds a fault: a change to how one replayed call goes. See
// [Fault]. Faults apply to replayed answers only (ModeReplay, and the
// answers ModeOnce replays).
func WithFault(f Fault) Option { return func(c *config) { c.faults = append(c.faults, f) } }

// WithBeforeSave adds a hook run on each interaction recorded, before it
// is checked for secrets and kept: it may scrub or rewrite it (a fake key
// a test puts in a prompt, a customer's name). An error leaves the
// interaction out of the cassette, and is returned like a secret's.
func WithBeforeSave(hook func(*Interaction) error) Option {
	return func(c *config) {
		if hook != nil {
			c.beforeSave = append(c.beforeSave, hook)
		}
	}
}

// WithRedactor keeps personal data out of the cassette: r (see
// [redact.New]; the same options as the recorder's [redact.PII] give the
// same marks) redacts each interaction before it is kept (the request's
// body, URL path and query values, the response's body or each of its
// frames, values split across a stream's events included, and the text of
// an error), and each request made before it is matched, so that a live
// request finds the recording made of it, and a miss shows no more than
// the cassette holds. The provider and the caller get the bytes as they
// were. Bodies that are not UTF-8 text (audio, an eventstream's binary
// frames) are kept as they are; headers are not read (credential headers
// are never kept).
func WithRedactor(r *redact.Redactor) Option { return func(c *config) { c.redactor = r } }

// WithMaxBody sets the largest response body recorded; a larger one is
// passed through to the caller but not recorded, and its interaction
// fails as a secret does. Default [DefaultMaxBody].
func WithMaxBody(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// Fault changes how one replayed call goes, to test how an application
// copes. It applies once: to the interaction at index Interaction (the
// first time that interaction would answer), or, when Request is set, to
// the first request Request returns true for.
//
// A fault that makes the call fail (Err, Status, Cut) answers in place of
// the recorded answer without using it up: the application's retry gets
// the recorded answer. Err and Status with a Request target need no
// recorded answer at all. Delay and FrameDelay slow the recorded answer
// down, which is used up as usual.
type Fault struct {
	Interaction int
	Request     func(*Request) bool

	// Delay waits this long before the response (or Err) is given.
	Delay time.Duration
	// FrameDelay waits this long before each frame of the body after the
	// first.
	FrameDelay time.Duration
	// Cut ends the body after CutAfter frames (a non-stream body is one
	// frame) with io.ErrUnexpectedEOF, as a dropped connection does.
	Cut      bool
	CutAfter int
	// Status, when set, answers with this status, Header and Body
	// instead (Content-Type defaults to application/json for a JSON
	// body).
	Status int
	Header http.Header
	Body   string
	// Err, when set, fails the call with this error instead, as a
	// transport error.
	Err error
}

// replaces says the fault answers instead of the recorded answer.
func (f *Fault) replaces() bool { return f.Err != nil || f.Status != 0 || f.Cut }

// standalone says the fault needs no recorded answer.
func (f *Fault) standalone() bool { return f.Err != nil || f.Status != 0 }

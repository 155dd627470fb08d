package middleware

import (
	"log/slog"
	"time"

	"github.com/llmhistory/llmhistory/cost"
	"github.com/llmhistory/llmhistory/detect"
	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
)

// Defaults of a Recorder made with no options.
const (
	DefaultMaxRequestBody  = 1 << 20          // bytes of a request body captured
	DefaultMaxResponseBody = 1 << 20          // bytes of a response body captured
	DefaultDedupWindow     = 10 * time.Second // how long a retriable failure waits for its retry
	DefaultSinkQueue       = 4096             // records waiting for each sink
	DefaultCloseTimeout    = 5 * time.Second  // how long Close waits for the sinks
)

// Option configures a [Recorder].
type Option func(*config)

type config struct {
	sinks       []record.Sink
	syncSinks   bool
	sinkQueue   int
	logger      *slog.Logger
	history     *record.Memory
	maxReq      int
	maxResp     int
	dedupWindow time.Duration
	redactors   []func(*record.Record)
	now         func() time.Time
	providers   []providers.Provider
	detector    *detect.Detector
	programSrc  bool
	storeOutput bool
	// previewLatest is how many records the history preview summarizes;
	// zero means no preview (WithHistoryPreview).
	previewLatest int
	closeTimeout  time.Duration
	prices        *cost.Table // nil: records are not priced
	userProviders bool        // WithProviders was given: providers that may read headers
	pricesSet     bool
	conversations int // conversations remembered for inference; 0: none
}

// WithSink adds a sink that receives every record. It may be given
// several times. Sinks are fed from a goroutine of the recorder through a
// bounded queue, so a slow sink never delays a call; see [WithSyncSinks].
func WithSink(s record.Sink) Option {
	return func(c *config) {
		if s != nil {
			c.sinks = append(c.sinks, s)
		}
	}
}

// WithConversations sets how many conversations the recorder remembers to
// find the one a call without a trace continues; 0 turns the inference
// off, and such calls have no trace. Default [DefaultConversations]. For
// each, it keeps the hashes of its last few states and response ids,
// never its messages: memory stays a few hundred bytes per conversation.
func WithConversations(n int) Option { return func(c *config) { c.conversations = max(n, 0) } }

// WithSyncSinks makes the recorder append to its sinks on the goroutine
// that finishes each call, instead of through its queue: no record is ever
// dropped, at the price of the call waiting for the sinks. Meant for tests
// and tools, not for serving paths.
func WithSyncSinks() Option { return func(c *config) { c.syncSinks = true } }

// WithSinkQueue sets how many records may wait for each sink; past it,
// records are dropped and counted in [Stats]. Default [DefaultSinkQueue].
func WithSinkQueue(n int) Option { return func(c *config) { c.sinkQueue = n } }

// WithLogger sets where the recorder reports its own trouble (a failing
// sink, a parser panic), once per kind of trouble. Default: slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithHistory sets the in-memory history every record is appended to
// first. Default: record.NewMemory(record.DefaultMemoryCapacity).
func WithHistory(m *record.Memory) Option { return func(c *config) { c.history = m } }

// WithMaxBody sets how many bytes of request and response bodies are
// captured for parsing. A longer request body passes through untouched and
// its record is marked truncated; a longer response keeps its head and its
// last 64 KiB. Zero or less keeps the default of 1 MiB.
//
// The request cap is also the most a record keeps of a call's args: past
// it, the earliest turns are cut. A conversation's records share what they
// repeat (see record.ArgsPrefix), so raising it for long agent loops costs
// memory per call in flight, not the square of the conversation.
func WithMaxBody(request, response int) Option {
	return func(c *config) {
		if request > 0 {
			c.maxReq = request
		}
		if response > 0 {
			c.maxResp = response
		}
	}
}

// WithDedupWindow sets how long a retriable failure is held waiting for
// the retry that would make it one record with the retry's outcome.
// Default [DefaultDedupWindow]. Zero or less emits failures at once, with
// no collapsing of unmarked retries.
func WithDedupWindow(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			d = -1
		}
		c.dedupWindow = d
	}
}

// WithRedactor adds a hook that may change a record before anything sees
// it: the history, the sinks. Built-in redaction (credential headers, key=
// parameters, key-shaped strings) has already run. redact.PII is one that
// takes personal data out (emails, phone numbers, card numbers, IBANs, IP
// addresses, secrets). Hooks run on the recorder's goroutine once the
// call has returned to its caller, in the order given: they cost the call
// nothing, and a slow one delays only the records.
func WithRedactor(fn func(*record.Record)) Option {
	return func(c *config) {
		if fn != nil {
			c.redactors = append(c.redactors, fn)
		}
	}
}

// WithHistoryNames adds names the conversation history goes by in your
// runtime, besides conversation_history, for the scan of generated code
// that fills history_access_detected and history_query_patterns.
func WithHistoryNames(names ...string) Option {
	return func(c *config) { c.detector = detect.New(names...) }
}

// WithProgramSource keeps, in program_source, the generated text (output
// or tool-call arguments, at most 16 KiB) in which the recorder found the
// history read, so that a report can show where and how. Off by default.
func WithProgramSource() Option { return func(c *config) { c.programSrc = true } }

// WithoutOutput keeps the answer out of records: no output_message. By
// default each record keeps the message the model generated (its text,
// its tool calls with their arguments, its reasoning; at most 64 KiB of
// text and arguments and 128 parts, redacted as everything recorded is,
// and named in truncated when cut), so that the last answer of a
// conversation is there to read: a request's args hold every earlier
// answer already, so keeping the last one out hides only the one a
// reader looks for. The answer is the message the next call of its
// conversation carries in its args, so a store keeps it once. A
// response's own facts are kept either way: finish reason, response id,
// model, usage, and OpenAI's service_tier and system_fingerprint.
func WithoutOutput() Option { return func(c *config) { c.storeOutput = false } }

// WithOutput keeps the answer in each record, as a recorder does by
// default; it undoes a [WithoutOutput] given before it.
func WithOutput() Option { return func(c *config) { c.storeOutput = true } }

// WithCloseTimeout sets how long [Recorder.Close] waits for pending
// records to reach the sinks before it gives up on those that are stuck.
// Zero or less keeps [DefaultCloseTimeout]. [Recorder.Shutdown] takes its
// bound from its context instead.
func WithCloseTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.closeTimeout = d
		}
	}
}

// WithPrices sets the price table that prices every record from its model
// and usage (record.Cost: USD and the table's name). Default:
// cost.Default(), the LiteLLM file the LLMHISTORY_PRICES environment
// variable names when it is set, else the dated table built into the
// module (offline either way). A call the table
// cannot price (an unknown model, no usage) has no cost, never a cost of
// zero. WithPrices(nil) turns pricing off. Add or override prices with
// (*cost.Table).With or LoadJSON.
func WithPrices(t *cost.Table) Option {
	return func(c *config) { c.prices, c.pricesSet = t, true }
}

// WithClock sets the clock used for timestamps and durations, for tests.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithProviders puts providers before the built-in ones, so they are asked
// first whether they recognize a request.
func WithProviders(ps ...providers.Provider) Option {
	return func(c *config) { c.providers = append(c.providers, ps...) }
}

func newConfig(opts []Option) config {
	c := config{storeOutput: true, sinkQueue: DefaultSinkQueue, maxReq: DefaultMaxRequestBody, maxResp: DefaultMaxResponseBody, dedupWindow: DefaultDedupWindow, closeTimeout: DefaultCloseTimeout,
		conversations: DefaultConversations}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.history == nil {
		c.history = record.NewMemory(record.DefaultMemoryCapacity)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.detector == nil {
		c.detector = detect.New()
	}
	if c.dedupWindow < 0 {
		c.dedupWindow = 0
	}
	if !c.pricesSet {
		c.prices = cost.Default()
	}
	c.userProviders = len(c.providers) > 0
	c.providers = append(c.providers, builtinProviders...)
	return c
}

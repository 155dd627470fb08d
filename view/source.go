package view

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Source is where the viewer reads history: a JSONL index ([OpenJSONL])
// today, a store tomorrow. Every method is safe for concurrent use and
// honours ctx; none changes the history.
//
// A conversation is a trace: the records that share a trace_id, whether
// the caller gave it or the recorder inferred it. A record without a
// trace_id is a conversation of its own, whose ID is its call_id.
type Source interface {
	// Conversations returns the conversations q selects, newest last
	// activity first, at most q.Limit of them, and a cursor to the next
	// page when there are more.
	Conversations(ctx context.Context, q Query) (Page, error)

	// Trace returns a conversation's summary and its calls in the order
	// they started, from q.Offset, at most q.Limit of them (0: all), each
	// with its Args whole (unless q.SkipArgs). A conversation not found
	// is [ErrNotFound].
	Trace(ctx context.Context, q TraceQuery) (TracePage, error)

	// Call returns the record of one call by call_id, Args whole, or
	// [ErrNotFound].
	Call(ctx context.Context, callID string) (Call, error)

	// Stats aggregates the calls q selects (its Text, Cursor and Limit
	// are ignored): totals, a series over time, and groups by model,
	// user, tag and provider.
	Stats(ctx context.Context, q Query) (Stats, error)

	// Facets returns the values the filters can take: users, tags,
	// models and providers, each sorted, at most limit of each (0: all).
	Facets(ctx context.Context, limit int) (Facets, error)

	// Subscribe returns a channel that receives a Change whenever records
	// arrive, until ctx ends; then the channel is closed. A slow reader
	// misses nothing that matters: changes are merged while it is busy.
	Subscribe(ctx context.Context) (<-chan Change, error)
}

// ErrNotFound is returned for a conversation or a call a source does not
// hold.
var ErrNotFound = errors.New("view: not found")

// Outcomes a [Query] can select conversations or calls by.
const (
	OutcomeOK      = "ok"      // no call failed
	OutcomeError   = "error"   // a call failed (status error or canceled)
	OutcomeRetried = "retried" // a call took more than one attempt
)

// Query selects conversations (or, for [Source.Stats], calls). The zero
// Query selects everything. A conversation is selected when one of its
// calls matches each field given: a call by that user, a call with that
// tag, and so on.
type Query struct {
	From, To time.Time // calls that started in [From, To); zero: unbounded
	User     string    // user_id, exactly
	Tag      string    // one of tags, exactly
	Model    string    // model as recorded (the response's, else the request's)
	Provider string    // the method's first word: openai, gemini, anthropic, ...
	Outcome  string    // "", OutcomeOK, OutcomeError or OutcomeRetried
	// Text selects conversations with a call whose record holds it
	// (case-insensitive for ASCII letters): what was asked, kwargs, error
	// messages, output.
	Text string

	Cursor string // from the Page before; "" for the first page
	Limit  int    // conversations per page; 0 means 50
}

// Page is one page of conversations.
type Page struct {
	Conversations []Conversation
	// Next is the cursor of the page after this one; "" when this is the
	// last page.
	Next string
	// Total is how many conversations the query selects in all, or -1
	// when the source does not know without reading everything (a text
	// search).
	Total int
}

// Conversation summarizes a trace.
type Conversation struct {
	ID       string // the trace_id, or the call_id of a record without one
	NoTrace  bool   // a single record that carries no trace_id
	Inferred bool   // the recorder found this conversation itself (trace_inferred)

	Users     []string // user_ids of its calls, as first seen
	Tags      []string
	Models    []string
	Providers []string
	More      bool // more users, tags or models than listed

	// FirstUserMessage is the text of the first user message of its
	// earliest call that has one, cut to a few hundred bytes.
	FirstUserMessage string
	Calls            int // records
	Turns            int // messages in its longest call
	Errors           int // calls that failed (status error or canceled)
	Retried          int // calls that took more than one attempt
	Tokens           int64
	CostUSD          float64 // the sum of the costs its records carry
	Unpriced         int     // calls that used tokens and carry no cost

	First, Last time.Time // start of its first call, end of its last
}

// TraceQuery asks for a conversation's calls.
type TraceQuery struct {
	ID       string // a trace_id, or the call_id of a record without one
	Offset   int    // calls to skip, in start order
	Limit    int    // calls to return; 0: all
	SkipArgs bool   // leave Args nil: for views that need only timings
}

// TracePage is a conversation and some of its calls.
type TracePage struct {
	Conversation Conversation
	Calls        []Call // in the order they started
	Offset       int    // index of Calls[0] among the conversation's calls
}

// Call is one record, as a source holds it.
type Call struct {
	Record record.Record
	// Raw is the record's JSON with its Args whole, including fields this
	// version of the record package does not know (a newer writer's).
	Raw json.RawMessage
	// Line locates the record for people: "history.jsonl:42"; "" when
	// the source has no such thing.
	Line string
}

// Stats are aggregates over calls.
type Stats struct {
	Calls, Errors, Retried int
	InputTokens            int64
	OutputTokens           int64
	CostUSD                float64
	// Unpriced counts calls that used tokens and carry no cost (an
	// unknown model), and UnpricedTokens their tokens: what the spend
	// leaves out.
	Unpriced       int
	UnpricedTokens int64

	// Series is the calls over time, in buckets of Bucket from the first
	// call's to the last's, oldest first.
	Bucket time.Duration
	Series []Bucket

	Models, Users, Tags, Providers []Group // most spend first, then most calls
}

// Bucket is the calls that started in [Start, Start+Stats.Bucket).
type Bucket struct {
	Start   time.Time
	Calls   int
	Errors  int
	Tokens  int64
	CostUSD float64
}

// Group is the calls of one model, user, tag or provider.
type Group struct {
	Name     string
	Calls    int
	Errors   int
	Tokens   int64
	CostUSD  float64
	Unpriced int
	// P50MS and P95MS are the median and 95th percentile of the calls'
	// durations in milliseconds, FirstChunkP50MS that of the time to
	// first chunk of the streamed ones (0 when none); within 2%.
	P50MS, P95MS    float64
	FirstChunkP50MS float64
}

// Facets are the values the filters can take.
type Facets struct {
	Users, Tags, Models, Providers []string
}

// Change says that records arrived (or that the source started over: a
// file truncated).
type Change struct {
	Records int      // records that arrived since the last Change
	Traces  []string // conversations they belong to, at most 100 listed
	More    bool     // more conversations than Traces lists
	Reset   bool     // the source was read again from the start
}

// Status is what a source says of itself for the page footer: what it
// reads, whether it is still indexing, and what it had to skip. A
// [Source] that implements StatusReporter has it shown.
type Status struct {
	Description string  // e.g. "history.jsonl (3.2 MB)"
	Records     int     // records indexed
	Indexing    bool    // still reading what was there at the start
	Progress    float64 // of that, 0 to 1
	BadLines    int     // lines that are not records, skipped
	Problems    []string
}

// StatusReporter is a [Source] that describes itself.
type StatusReporter interface {
	Status() Status
}

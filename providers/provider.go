package providers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"

	"github.com/llmhistory/llmhistory/record"
)

// Provider parses the wire format of one API family. The recording
// middleware asks each configured provider in turn whether it recognizes a
// request; the first that does parses the request and, later, the response.
//
// A Provider is shared by every call of a recorder, so it must be safe for
// concurrent use; the built-in ones hold no state. Its methods run on the
// caller's goroutine while a call is recorded: they must be quick, must
// not keep the byte slices they are given (the capture buffers are
// reused), and must not panic on any input. A panic is recovered and
// counted by the recorder, but costs the record its parsed detail.
type Provider interface {
	// Name identifies the provider in records and logs: "openai", "gemini".
	Name() string
	// ParseRequest reports whether the provider recognizes the request and,
	// if so, what it asks.
	ParseRequest(req *Request) (Call, bool)
	// ParseResponse reads the response to a call the provider recognized.
	ParseResponse(call *Call, resp *Response) Result
}

// Request is what a provider sees of an outgoing request. Secrets are
// already gone: no credential headers, no key= query parameter, and
// key-shaped strings in the body replaced by [REDACTED].
type Request struct {
	Method string
	URL    *url.URL
	// Header is the request's headers, without the credential ones. The
	// recorder fills it only for providers given with
	// middleware.WithProviders (a copy of the headers costs allocations on
	// every call, and the built-in providers read none): a built-in
	// provider gets nil.
	Header        http.Header
	Body          []byte // the captured body, at most the recorder's cap
	BodyTruncated bool   // the body was longer than Body
	// MaxArgs bounds the bytes of Args a call keeps; zero means
	// [MaxArgsBytes]. The recorder sets it to its cap on a captured
	// request (middleware.WithMaxBody), so that capturing more keeps more.
	MaxArgs int
	// Scratch, when not nil, is a buffer the recorder lends for the
	// Call's Args, as Response.Scratch is for a Result's Output: a provider
	// may build Args in (*Scratch)[:0] (the built-in providers do) and leave the
	// grown buffer in *Scratch. The recorder lends it only when nothing
	// keeps the record's Args once it is stored (its history copies what it
	// holds of them). Nil means the provider builds Args in a buffer of its
	// own.
	Scratch *[]byte
}

// ArgsLimit returns MaxArgs, or [MaxArgsBytes] when it is not set.
func (r *Request) ArgsLimit() int {
	if r.MaxArgs > 0 {
		return r.MaxArgs
	}
	return MaxArgsBytes
}

// Call is what a provider understood of a request.
type Call struct {
	Provider   string // the provider's Name
	MethodName string // e.g. "openai.chat.completions.create"
	Model      string // the model asked for, when the request names one
	// Args are the request's messages (messages, contents, input, a
	// prompt) as a JSON array of record.Message, each written by
	// record.Message.AppendJSON: a system prompt given apart first, as a
	// message of role system.
	Args      json.RawMessage
	Kwargs    json.RawMessage // a JSON object: model and the parameters set
	Speaker   string          // from the last message's role; "" when unknown
	Stream    bool            // the request asks for a streamed response
	Truncated []string        // fields cut to fit ("args", "kwargs")
}

// Response is what a provider sees of a response.
type Response struct {
	StatusCode int
	// ContentType is the response's Content-Type.
	ContentType string
	// Header is the response's headers, without cookies. As with
	// Request.Header, the recorder fills it only for providers given with
	// middleware.WithProviders, and for every provider when StatusCode is
	// 400 or more (errors are rare, and some APIs name the error in a
	// header: Bedrock's X-Amzn-ErrorType); a built-in provider reading a
	// success gets nil.
	Header http.Header
	// Body is the captured body, decompressed. When Truncated, it is the
	// head of the body and Tail holds its last bytes, so that what comes at
	// the end of a long stream (usage, a finish reason) is not lost.
	Body      []byte
	Tail      []byte
	Truncated bool
	Stream    bool // a text/event-stream, or the call asked for a stream
	EOF       bool // the body was read to its end
	// Scratch, when not nil, is a buffer the recorder lends for assembling
	// the Result's Output: a provider may build the text of a stream's
	// fragments in (*Scratch)[:0] and leave the grown buffer in *Scratch,
	// so that a buffer grown fragment by fragment is not garbage on every
	// call. The Result copies out what it keeps (its strings are its own):
	// the recorder takes the buffer back when ParseResponse returns. Nil
	// means the provider assembles in a buffer of its own.
	Scratch *[]byte
}

// Result is what a provider understood of a response.
type Result struct {
	Outcome      record.Outcome
	ErrorMessage string
	Model        string        // the model that answered, when the response says
	Usage        *record.Usage // token counts, when the response has them
	// Output is the answer: the message the response gives, read into
	// the message model (record.Message) as the next request of the
	// conversation will carry it, parts in the order the provider sends
	// them. A stream's parts are assembled from its fragments. Its
	// strings are the Result's own, pointing neither into the body nor
	// into [Response.Scratch]: the recorder keeps them as they are.
	Output record.Message `json:",omitempty"`
	// ServiceTier and SystemFingerprint are what an OpenAI response says
	// of itself: the tier that served it, and the backend configuration
	// that answered.
	ServiceTier       string `json:",omitempty"`
	SystemFingerprint string `json:",omitempty"`
	// Finished reports that the response reached its natural end (a finish
	// reason, a [DONE] sentinel), so that a body closed before EOF is
	// still known to be complete.
	Finished bool
	// Truncated names the record's fields that the response's values did
	// not fit ("usage" when a token count was out of range); the recorder
	// adds them to the record's truncated list.
	Truncated []string `json:",omitempty"`
}

// Cut names field in r.Truncated, once.
func (r *Result) Cut(field string) {
	if !slices.Contains(r.Truncated, field) {
		r.Truncated = append(r.Truncated, field)
	}
}

// ToolCall is a tool or function call the model asked for, as a provider
// assembles it from a response or a stream's fragments; [ToolCall.Part]
// is its part of the answer.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // as the model wrote them, usually JSON
}

// Part returns c as a part of a message: its arguments read as JSON when
// they are, else as the text the model wrote.
func (c ToolCall) Part() record.Part {
	return record.Part{Type: record.PartToolCall, ID: c.ID, Name: c.Name, Arguments: record.ArgumentsJSON(c.Arguments)}
}

// Match returns the first provider that recognizes req, and what it
// understood. When none does, it returns ok false.
func Match(ps []Provider, req *Request) (p Provider, call Call, ok bool) {
	for _, p := range ps {
		if call, ok := p.ParseRequest(req); ok {
			if call.Provider == "" {
				call.Provider = p.Name()
			}
			return p, call, true
		}
	}
	return nil, Call{}, false
}

// GuidanceEditor is an optional capability of a [Provider]: putting a
// system guidance into the body of a request it recognizes, where its API
// takes system instructions. The recorder's history preview
// (middleware.WithHistoryPreview) asks the provider that matched a request
// for it, so a provider given with middleware.WithProviders can take the
// preview too.
//
// AddGuidance returns req.Body with text added, and true; or false when
// this request does not take guidance (an embedding, a listing, a body of
// an unexpected shape). The edit must be one insertion: every byte of the
// body kept, in order, so that what the caller's SDK wrote is what is sent
// with the guidance added. req.Body must not be modified; on any doubt,
// return false.
type GuidanceEditor interface {
	AddGuidance(req *Request, text string) ([]byte, bool)
}

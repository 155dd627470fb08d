package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Version is the format version this package writes in every record's
// "version" field. Optional fields may be added within a version; a new
// version means a required field changed meaning, and a reader of this
// version refuses it with [ErrUnsupportedVersion] rather than guess.
const Version = 1

// Speakers: who produced the turn a call answers.
const (
	SpeakerUser  = "user"  // a person's message
	SpeakerAgent = "agent" // the model continuing its own work
	SpeakerTool  = "tool"  // a tool result handed back to the model
)

// Outcome statuses.
const (
	StatusOK       = "ok"
	StatusError    = "error"
	StatusCanceled = "canceled"
)

// ErrUnsupportedVersion is returned when decoding a record written by a
// newer, incompatible version of the format.
var ErrUnsupportedVersion = errors.New("record: unsupported format version")

// Record is one logical call to a provider: the v1 history record.
//
// The first seven fields are required and always present in the JSON, with
// Args encoded as an array ("[]" when empty) and Kwargs as an object ("{}"
// when empty). The rest are optional and omitted when zero, except Depth,
// where nil means unknown and a pointer to 0 means a top-level call, and the
// four history telemetry fields, which every record carries.
//
// Args and Kwargs hold JSON. Build them with [ArgsJSON], [KwargsJSON] or
// [SafeJSON]; whatever they hold, encoding repairs it at that field only
// (see [Record.AppendJSON]), so a bad field never costs the whole record.
type Record struct {
	CallID     string          `json:"call_id"`         // unique, sortable by time
	Timestamp  string          `json:"timestamp"`       // RFC 3339 UTC, start of the call; see FormatTime
	Speaker    string          `json:"speaker"`         // SpeakerUser, SpeakerAgent or SpeakerTool
	MethodName string          `json:"method_name"`     // e.g. "openai.chat.completions.create"
	Args       json.RawMessage `json:"args"`            // always a JSON array
	Kwargs     json.RawMessage `json:"kwargs"`          // always a JSON object
	Outcome    Outcome         `json:"outcome_summary"` // compact on purpose

	// ArgsPrefix is set only on a record read from a file whose Args begin
	// with those of an earlier record that could not be found: its Args
	// then hold only the rest (see [ArgsPrefix]).
	ArgsPrefix *ArgsPrefix `json:"args_prefix,omitempty"`

	TraceID string `json:"trace_id,omitempty"`
	// TraceInferred says the recorder chose TraceID: the call was given no
	// trace, and the recorder found the conversation it continues, or
	// started one. A trace the caller gave is never marked.
	TraceInferred bool   `json:"trace_inferred,omitempty"`
	ParentCallID  string `json:"parent_call_id,omitempty"`
	Depth         *int   `json:"depth,omitempty"` // nil: unknown; 0: top level

	// UserID, Tags and Metadata attribute the call: whose it was, and
	// which feature, tenant or experiment made it. At most [MaxTags] tags
	// and [MaxMetadata] metadata keys, each key and value at most
	// [MaxAttributionBytes]; what is over is dropped and named in
	// Truncated ("tags", "metadata", "user_id").
	UserID   string            `json:"user_id,omitempty"`
	Tags     []string          `json:"tags,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`

	DurationMS float64 `json:"duration_ms,omitempty"` // over all attempts
	// TimeToFirstChunkMS is, for a streamed response, the time from the
	// call's start to the first bytes of its body.
	TimeToFirstChunkMS float64 `json:"time_to_first_chunk_ms,omitempty"`
	ErrorType          string  `json:"error_type,omitempty"` // one of the Error* constants
	ErrorMessage       string  `json:"error_message,omitempty"`
	ProgramSource      string  `json:"program_source,omitempty"` // code the model generated, when stored
	// Output is the answer: the message the response gave, as the next
	// call of its conversation sends it back (see [Message]). It is kept
	// unless the recorder is told not to (middleware.WithoutOutput), and
	// bounded; a cut is named in Truncated ("output_message").
	Output      *Message `json:"output_message,omitempty"`
	ArtifactHit bool     `json:"artifact_hit,omitempty"`
	Attempts    int      `json:"attempts,omitempty"` // HTTP attempts folded into this record
	Hops        int      `json:"hops,omitempty"`     // redirects followed within the call
	// ServerAddress and ServerPort are the server the call was sent to:
	// the request URL's host, without its port, and its port (the
	// scheme's, 443 or 80, when the URL names none). Never a path, a
	// query or credentials.
	ServerAddress string `json:"server_address,omitempty"`
	ServerPort    int    `json:"server_port,omitempty"`
	Model         string `json:"model,omitempty"`
	// ServiceTier and SystemFingerprint are what the response said of
	// itself (OpenAI's service_tier and system_fingerprint): the tier that
	// served the call, and the backend configuration that answered it.
	ServiceTier       string `json:"service_tier,omitempty"`
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
	Usage             *Usage `json:"usage,omitempty"`
	Cost              *Cost  `json:"cost,omitempty"` // nil: not priced (an unknown model, no usage)
	// Truncated names the fields that were cut to fit a limit ("args",
	// "kwargs", "error_message", ...), or left out because the response's
	// values did not fit ("usage", when a token count was negative,
	// fractional or above 2^40): a cut is marked, never silent.
	Truncated []string `json:"truncated,omitempty"`

	// HistoryGuidance says the recorder added the history guidance and
	// preview to this call's request (middleware.WithHistoryPreview).
	HistoryGuidance bool `json:"history_guidance,omitempty"`

	HistoryRecordAppended   bool     `json:"history_record_appended"`
	ConversationHistorySize int      `json:"conversation_history_size"`
	HistoryAccessDetected   bool     `json:"history_access_detected"`
	HistoryQueryPatterns    []string `json:"history_query_patterns"` // "[]" when none

	// Version is the format version. Encoding always writes [Version];
	// decoding sets it from the input (1 when absent).
	Version int `json:"version"`

	// link is what the history found its Args share with the previous
	// record of its trace, for the sinks that write only what is new.
	link *argsLink
}

// Outcome is the compact summary of how a call ended. The full response is
// deliberately not part of it.
type Outcome struct {
	Status     string `json:"status"` // StatusOK, StatusError or StatusCanceled
	OK         bool   `json:"ok"`
	ErrorType  string `json:"error_type,omitempty"`
	Retriable  bool   `json:"retriable"`
	ValueClass string `json:"value_class,omitempty"` // set when OK, e.g. "chat.completion"

	HTTPStatus   int    `json:"http_status,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	ResponseID   string `json:"response_id,omitempty"`
}

// Usage counts a call's tokens with one meaning whatever the provider, so
// that sums and prices over records of several providers are right. Each
// provider's counts are mapped onto it (docs/providers.md has the table):
//
//   - InputTokens is every token of the prompt, including those read from
//     the prompt cache (CachedTokens) and those written to it
//     (CacheWriteTokens).
//   - OutputTokens is every generated token, including reasoning
//     (ReasoningTokens).
//   - TotalTokens is InputTokens + OutputTokens.
//
// The detail fields are parts of those two, never extra to them.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
	// CachedTokens is the part of InputTokens read from the prompt cache.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CacheWriteTokens is the part of InputTokens written to the prompt
	// cache (Anthropic's cache_creation_input_tokens).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// CacheWrite1hTokens is the part of CacheWriteTokens written with a
	// one-hour lifetime, which is priced apart from the default five
	// minutes.
	CacheWrite1hTokens int `json:"cache_write_1h_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning
	// (thinking), when the provider reports it apart.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

// Cost is what a call cost, priced from its [Usage] by a price table.
type Cost struct {
	USD   float64 `json:"usd"`   // the price in US dollars
	Table string  `json:"table"` // which table priced it, e.g. "litellm-2026-11-20"
}

// Success returns the outcome of a call that worked and produced a value of
// the given class.
func Success(valueClass string) Outcome {
	return Outcome{Status: StatusOK, OK: true, ValueClass: valueClass}
}

// Failure returns the outcome of a call that failed with the given error
// type. Retriable follows [Retriable]; the status is StatusCanceled for
// [ErrorCanceled] and StatusError otherwise.
func Failure(errorType string) Outcome {
	status := StatusError
	if errorType == ErrorCanceled {
		status = StatusCanceled
	}
	return Outcome{Status: status, ErrorType: errorType, Retriable: Retriable(errorType)}
}

// Int returns a pointer to v, for optional fields such as [Record.Depth].
func Int(v int) *int { return &v }

// timeLayout has a fixed number of fractional digits so that timestamps
// sort as strings in time order.
const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// FormatTime formats t as a record timestamp: RFC 3339 in UTC with
// microseconds, so that timestamps sort as strings.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// AppendTime appends t as [FormatTime] formats it.
func AppendTime(dst []byte, t time.Time) []byte { return t.UTC().AppendFormat(dst, timeLayout) }

// ParseTime parses a record timestamp (any RFC 3339 form).
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Validate reports whether r has the required fields with acceptable
// values. Encoding never fails on an invalid record; Validate is for
// callers who build records by hand and want to know.
func (r *Record) Validate() error {
	var errs []error
	need := func(name, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is empty", name))
		}
	}
	need("call_id", r.CallID)
	need("method_name", r.MethodName)
	need("outcome_summary.status", r.Outcome.Status)
	if p := r.ArgsPrefix; p != nil {
		need("args_prefix.call_id", p.CallID)
		if p.Count < 1 {
			errs = append(errs, fmt.Errorf("args_prefix.count %d is not at least 1", p.Count))
		}
	}
	if _, err := ParseTime(r.Timestamp); err != nil {
		errs = append(errs, fmt.Errorf("timestamp %q is not RFC 3339", r.Timestamp))
	}
	switch r.Speaker {
	case SpeakerUser, SpeakerAgent, SpeakerTool:
	default:
		errs = append(errs, fmt.Errorf("speaker %q is not user, agent or tool", r.Speaker))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("record: invalid: %w", err)
	}
	return nil
}

// Clone returns a deep copy of r: no slice or pointer is shared.
func (r Record) Clone() Record {
	c := r
	c.Args = cloneBytes(r.Args)
	c.Kwargs = cloneBytes(r.Kwargs)
	if r.Depth != nil {
		c.Depth = Int(*r.Depth)
	}
	if r.Usage != nil {
		u := *r.Usage
		c.Usage = &u
	}
	if r.Cost != nil {
		cost := *r.Cost
		c.Cost = &cost
	}
	if r.ArgsPrefix != nil {
		p := *r.ArgsPrefix
		c.ArgsPrefix = &p
	}
	if r.Truncated != nil {
		c.Truncated = append([]string(nil), r.Truncated...)
	}
	if r.Output != nil {
		out := r.Output.Clone()
		c.Output = &out
	}
	if r.Tags != nil {
		c.Tags = append([]string(nil), r.Tags...)
	}
	if r.Metadata != nil {
		c.Metadata = maps.Clone(r.Metadata)
	}
	if r.HistoryQueryPatterns != nil {
		c.HistoryQueryPatterns = append([]string(nil), r.HistoryQueryPatterns...)
	}
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// Normalize puts r in the form decoding its JSON would give: Args and
// Kwargs as [Record.AppendJSON] writes them, empty lists as nil, and
// Version set. Two records that encode alike are equal once normalized.
func (r *Record) Normalize() {
	r.link = nil
	r.Args = normalizeRaw(r.Args, '[')
	r.Kwargs = normalizeRaw(r.Kwargs, '{')
	if len(r.HistoryQueryPatterns) == 0 {
		r.HistoryQueryPatterns = nil
	}
	if len(r.Truncated) == 0 {
		r.Truncated = nil
	}
	if len(r.Tags) == 0 {
		r.Tags = nil
	}
	if len(r.Metadata) == 0 {
		r.Metadata = nil
	}
	r.Version = Version
}

// MarshalJSON encodes r as one line of JSON; see [Record.AppendJSON].
func (r Record) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, 512)), nil
}

// AppendJSON appends r's JSON encoding to dst and returns the extended
// buffer. It never fails and never writes a newline, so its output is
// always one JSONL line:
//
//   - Args that are missing or null become "[]"; a JSON value that is not an
//     array is wrapped in one; bytes that are not JSON become a one-element
//     array holding them as a string.
//   - Kwargs likewise become "{}", {"value": v}, or {"inspect": "..."}.
//   - Raw JSON is compacted and invalid UTF-8 replaced, so lines stay lines.
//   - Strings are escaped with invalid UTF-8 replaced by U+FFFD; a
//     non-finite duration is omitted.
func (r Record) AppendJSON(dst []byte) []byte {
	dst, _ = r.appendJSON(dst, nil)
	return dst
}

// appendJSON is AppendJSON that, given shared (found in r.Args and still
// valid for them), writes only the elements of Args after the shared
// ones, and an args_prefix naming the record they follow. It returns the
// length of the Args a reader will have once it puts them together.
func (r *Record) appendJSON(dst []byte, shared *argsLink) (_ []byte, argsLen int) {
	dst = append(dst, `{"call_id":`...)
	dst = appendString(dst, r.CallID)
	dst = append(dst, `,"timestamp":`...)
	dst = appendString(dst, r.Timestamp)
	dst = append(dst, `,"speaker":`...)
	dst = appendString(dst, r.Speaker)
	dst = append(dst, `,"method_name":`...)
	dst = appendString(dst, r.MethodName)
	dst = append(dst, `,"args":`...)
	prefix := r.ArgsPrefix
	if shared != nil {
		// Args were shaped (valid, written as they are): the rest needs no
		// second look.
		if rest := r.Args[shared.size+1:]; rest[0] == ']' {
			dst = append(dst, "[]"...)
		} else {
			dst = append(dst, '[')
			dst = append(dst, rest[1:]...)
		}
		prefix = &ArgsPrefix{CallID: shared.prev, Count: shared.count, CRC32C: crc32.Checksum(r.Args[1:shared.size+1], castagnoli)}
		argsLen = len(r.Args)
	} else {
		n := len(dst)
		dst = appendRawContainer(dst, r.Args, '[')
		argsLen = len(dst) - n
	}
	if prefix != nil {
		dst = append(dst, `,"args_prefix":{"call_id":`...)
		dst = appendString(dst, prefix.CallID)
		dst = append(dst, `,"count":`...)
		dst = strconv.AppendInt(dst, int64(prefix.Count), 10)
		dst = append(dst, `,"crc32c":`...)
		dst = strconv.AppendUint(dst, uint64(prefix.CRC32C), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"kwargs":`...)
	dst = appendRawContainer(dst, r.Kwargs, '{')
	dst = append(dst, `,"outcome_summary":`...)
	dst = r.Outcome.appendJSON(dst)

	dst = appendOptString(dst, `,"trace_id":`, r.TraceID)
	if r.TraceInferred {
		dst = append(dst, `,"trace_inferred":true`...)
	}
	dst = appendOptString(dst, `,"parent_call_id":`, r.ParentCallID)
	if r.Depth != nil {
		dst = append(dst, `,"depth":`...)
		dst = strconv.AppendInt(dst, int64(*r.Depth), 10)
	}
	dst = appendOptString(dst, `,"user_id":`, r.UserID)
	if len(r.Tags) > 0 {
		dst = append(dst, `,"tags":`...)
		dst = appendStrings(dst, r.Tags)
	}
	if len(r.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = appendStringMap(dst, r.Metadata)
	}
	if r.DurationMS != 0 && isFinite(r.DurationMS) {
		dst = append(dst, `,"duration_ms":`...)
		dst = appendFloat(dst, r.DurationMS, 64)
	}
	if r.TimeToFirstChunkMS != 0 && isFinite(r.TimeToFirstChunkMS) {
		dst = append(dst, `,"time_to_first_chunk_ms":`...)
		dst = appendFloat(dst, r.TimeToFirstChunkMS, 64)
	}
	dst = appendOptString(dst, `,"error_type":`, r.ErrorType)
	dst = appendOptString(dst, `,"error_message":`, r.ErrorMessage)
	dst = appendOptString(dst, `,"program_source":`, r.ProgramSource)
	if r.Output != nil {
		dst = append(dst, `,"output_message":`...)
		dst = r.Output.AppendJSON(dst)
	}
	if r.ArtifactHit {
		dst = append(dst, `,"artifact_hit":true`...)
	}
	if r.Attempts != 0 {
		dst = append(dst, `,"attempts":`...)
		dst = strconv.AppendInt(dst, int64(r.Attempts), 10)
	}
	if r.Hops != 0 {
		dst = append(dst, `,"hops":`...)
		dst = strconv.AppendInt(dst, int64(r.Hops), 10)
	}
	dst = appendOptString(dst, `,"server_address":`, r.ServerAddress)
	if r.ServerPort != 0 {
		dst = append(dst, `,"server_port":`...)
		dst = strconv.AppendInt(dst, int64(r.ServerPort), 10)
	}
	dst = appendOptString(dst, `,"model":`, r.Model)
	dst = appendOptString(dst, `,"service_tier":`, r.ServiceTier)
	dst = appendOptString(dst, `,"system_fingerprint":`, r.SystemFingerprint)
	if r.Usage != nil {
		dst = append(dst, `,"usage":`...)
		dst = r.Usage.appendJSON(dst)
	}
	if r.Cost != nil {
		dst = append(dst, `,"cost":{"usd":`...)
		dst = appendFloat(dst, r.Cost.USD, 64)
		dst = append(dst, `,"table":`...)
		dst = appendString(dst, r.Cost.Table)
		dst = append(dst, '}')
	}
	if len(r.Truncated) > 0 {
		dst = append(dst, `,"truncated":`...)
		dst = appendStrings(dst, r.Truncated)
	}

	if r.HistoryGuidance {
		dst = append(dst, `,"history_guidance":true`...)
	}
	dst = append(dst, `,"history_record_appended":`...)
	dst = strconv.AppendBool(dst, r.HistoryRecordAppended)
	dst = append(dst, `,"conversation_history_size":`...)
	dst = strconv.AppendInt(dst, int64(r.ConversationHistorySize), 10)
	dst = append(dst, `,"history_access_detected":`...)
	dst = strconv.AppendBool(dst, r.HistoryAccessDetected)
	dst = append(dst, `,"history_query_patterns":`...)
	dst = appendStrings(dst, r.HistoryQueryPatterns)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, Version, 10)
	return append(dst, '}'), argsLen
}

func (o Outcome) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"status":`...)
	dst = appendString(dst, o.Status)
	dst = append(dst, `,"ok":`...)
	dst = strconv.AppendBool(dst, o.OK)
	dst = appendOptString(dst, `,"error_type":`, o.ErrorType)
	dst = append(dst, `,"retriable":`...)
	dst = strconv.AppendBool(dst, o.Retriable)
	dst = appendOptString(dst, `,"value_class":`, o.ValueClass)
	if o.HTTPStatus != 0 {
		dst = append(dst, `,"http_status":`...)
		dst = strconv.AppendInt(dst, int64(o.HTTPStatus), 10)
	}
	dst = appendOptString(dst, `,"finish_reason":`, o.FinishReason)
	dst = appendOptString(dst, `,"response_id":`, o.ResponseID)
	return append(dst, '}')
}

func (u Usage) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	if u.CachedTokens != 0 {
		dst = append(dst, `,"cached_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CachedTokens), 10)
	}
	if u.CacheWriteTokens != 0 {
		dst = append(dst, `,"cache_write_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CacheWriteTokens), 10)
	}
	if u.CacheWrite1hTokens != 0 {
		dst = append(dst, `,"cache_write_1h_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CacheWrite1hTokens), 10)
	}
	if u.ReasoningTokens != 0 {
		dst = append(dst, `,"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.ReasoningTokens), 10)
	}
	return append(dst, '}')
}

func appendOptString(dst []byte, key, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendString(dst, v)
}

// appendStringMap writes m as a JSON object with its keys sorted, so that
// a record always encodes the same way.
func appendStringMap(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// UnmarshalJSON decodes a record, ignoring fields it does not know. Keys
// match exactly (encoding/json would also accept "Call_ID"); null leaves a
// field unset. Args and Kwargs are normalized as [Record.AppendJSON] would
// write them, empty lists decode as nil, and a missing version reads as 1.
// A record of a newer format version fails with [ErrUnsupportedVersion].
//
// As encoding/json expects of an Unmarshaler, JSON null leaves r unchanged.
func (r *Record) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	return r.decode(data)
}

// decode is UnmarshalJSON for a reader, to which null is not a record.
func (r *Record) decode(data []byte) error {
	var p Record
	if err := decodeRecord(data, &p); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if p.Version > Version {
		return fmt.Errorf("%w: %d (this reader knows %d)", ErrUnsupportedVersion, p.Version, Version)
	}
	*r = p
	r.Normalize()
	return nil
}

// normalizeRaw returns raw as AppendJSON would encode it, reusing raw when
// it is already in that form.
func normalizeRaw(raw json.RawMessage, open byte) json.RawMessage {
	if len(raw) > 0 && raw[0] == open && isCompactValid(raw) {
		return raw
	}
	return appendRawContainer(nil, raw, open)
}

// String sums up a usage for people: "12 tokens (9 in, 3 out)", with the
// cached, cache-written and reasoning parts when there are any.
func (u Usage) String() string {
	b := strconv.AppendInt(nil, int64(u.TotalTokens), 10)
	b = append(b, " tokens ("...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, " in"...)
	if u.CachedTokens != 0 {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(u.CachedTokens), 10)
		b = append(b, " cached"...)
	}
	if u.CacheWriteTokens != 0 {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(u.CacheWriteTokens), 10)
		b = append(b, " written to the cache"...)
	}
	b = append(b, "; "...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	b = append(b, " out"...)
	if u.ReasoningTokens != 0 {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(u.ReasoningTokens), 10)
		b = append(b, " reasoning"...)
	}
	return string(append(b, ')'))
}

// String is a cost for people: "$0.000123 (litellm-2026-07-24)".
func (c Cost) String() string {
	return "$" + strconv.FormatFloat(c.USD, 'f', -1, 64) + " (" + c.Table + ")"
}

// String sums up an outcome for people: "ok chat.completion",
// "error rate_limit (retriable)", "canceled".
func (o Outcome) String() string {
	s := o.Status
	if s == "" {
		s = "unknown"
	}
	switch {
	case o.OK && o.ValueClass != "":
		s += " " + o.ValueClass
	case !o.OK && o.ErrorType != "":
		s += " " + o.ErrorType
	}
	if o.HTTPStatus != 0 {
		s += " (HTTP " + strconv.Itoa(o.HTTPStatus) + ")"
	}
	if o.Retriable {
		s += " (retriable)"
	}
	return s
}

// Package record defines the v1 history record that llmhistory writes for
// every call to an LLM provider, the sinks that receive records, and the
// helpers that keep records JSON-safe. It imports only the standard
// library; every other package of the module stands on it.
//
// # The record
//
// A [Record] is one logical call: retries of the same call are folded into
// one record whose Attempts counts them. Seven fields are required and
// always encoded: call_id, timestamp, speaker, method_name, args (a JSON
// array, "[]" when empty), kwargs (a JSON object, "{}" when empty) and
// outcome_summary. The optional fields (trace_id, parent_call_id, depth,
// duration_ms, error_type, error_message, program_source, output_message,
// artifact_hit, attempts, server_address, server_port, model,
// service_tier, system_fingerprint, usage, truncated, and the others
// [Fields] lists) are omitted when unset; depth is a pointer so that 0, a
// top-level call, survives encoding. args are the request's messages and
// output_message the answer, messages of one model whatever the provider
// (see Messages below); server_address and server_port name the server a
// call went to, from its URL, on every record. The four history
// telemetry fields (history_record_appended, conversation_history_size,
// history_access_detected, history_query_patterns) are on every record.
// A record's provider and the error type of a failed call are derived by
// one rule each, [Record.Provider] and [Record.FailureType], which every
// reader uses.
//
// The outcome summary is compact on purpose: status, ok, error_type,
// retriable, value_class, and a few wire facts (HTTP status, finish
// reason, response id). The full response is not stored.
//
// One line of a history file, shown on several lines here:
//
//	{"call_id":"01JD2Q8Z3XKQ4M9R7T5V6W8Y0A","timestamp":"2026-11-21T09:30:00.123456Z","speaker":"user",
//	 "method_name":"openai.chat.completions.create","args":[...],"kwargs":{"model":"gpt-4o-mini"},
//	 "outcome_summary":{"status":"ok","ok":true,"retriable":false,"value_class":"chat.completion","http_status":200,"finish_reason":"stop"},
//	 "trace_id":"trace-7","depth":0,"duration_ms":812.25,"attempts":2,"model":"gpt-4o-mini-2024-07-18",
//	 "usage":{"input_tokens":120,"output_tokens":48,"total_tokens":168,"cached_tokens":64},
//	 "history_record_appended":true,"conversation_history_size":3,"history_access_detected":true,
//	 "history_query_patterns":["slice","map"],"version":1}
//
// [Fields] lists every field of the format with its JSON and Go names; it
// is the single source that the encoder, the decoder, the slog sink and
// the OpenTelemetry mapping are tested against. docs/record-format.md in
// the repository is the specification, a table of every field with its
// meaning, and docs/record.schema.json its JSON Schema, generated from
// Fields (go generate ./record) and checked against the golden records.
//
// # Messages
//
// A provider's request carries messages and its response an answer, each
// provider in its own shape. A record holds them in one: a [Message] is a
// role (RoleSystem, RoleUser, RoleAssistant, RoleTool) and parts (text,
// reasoning, a refusal, a tool call with its id, name and arguments, a
// tool result with the id of its call, media as a reference, and parts of
// other kinds as the provider wrote them; the Part* constants). The
// provider packages read their wire formats into it when a call is
// recorded; every reader of history reads the model and no provider's
// shape. A record's Args are a JSON list of messages ([Messages] reads
// them, [AppendMessages] writes them) and its Output is the answer.
//
// A message has one encoding ([Message.AppendJSON]): a message read from
// a response and the same turn read from the next request that sends it
// back are the same bytes, whatever SDK sent it. So the answer a record
// keeps is the element of the next record's Args that carries it, and a
// store that keeps messages by their content keeps the two as one.
// docs/messages.md in the repository says how each provider's shapes
// map onto the model. A record written before the model held the
// provider's own shapes in Args, and its answer in three fields (output,
// tool_calls, reasoning), which the decoder reads into Output.
//
// # The format
//
// Records are stored as JSON Lines. Every record carries "version": 1
// ([Version]). Optional fields may be added without a new version, so
// readers ignore fields they do not know; a record of a higher version is
// refused with [ErrUnsupportedVersion] rather than misread. Encoding is
// done by [Record.AppendJSON], which cannot fail and never writes a
// newline: a broken Args or Kwargs (invalid JSON, the wrong kind of
// value, pretty-printed, invalid UTF-8) is repaired at that field only,
// and the rest of the record survives. A field cut to fit a limit is
// named in Truncated: a cut is marked, never silent.
//
// # Writing and reading JSON Lines
//
// [OpenJSONL] appends to a file (created 0600), after repairing a torn
// last line that a crash in mid-write left; [NewJSONL] writes to any
// io.Writer. Lines are buffered and every Write carries whole lines, so
// concurrent writers, and processes appending to the same file, never
// interleave within a line. Close flushes: read a file after closing (or
// flushing) its sink, or the recorder that owns it, not before.
//
// [ReadJSONL] reads a whole input, and a [Reader] one line at a time, for
// files too big for memory. Reading is strict: a line is a record only
// with every required field of the format (Fields marks them) and a
// version this package reads. Any other line, {} included, is reported
// with its line number and the reason (invalid JSON and where, not an
// object, the fields it lacks, a field of the wrong type, a newer
// version) as a [*LineError], and reading goes on; when no line of an
// input is a record, the error says that too ([ErrNoRecords]). A torn
// last line is skipped ([Reader.Torn]). [DecodeLine] applies the same
// rule to one line. Record.UnmarshalJSON stays lenient, as encoding/json
// callers expect.
//
// # Long conversations: args_prefix
//
// A chat API is stateless: every call sends the whole conversation again,
// so call n's Args repeat call n-1's and add a turn. Kept whole, a
// conversation costs the square of its length: 100 turns of about 500
// bytes a question and 500 an answer put 5.5 MB in a file for the 107 KB
// that were said. This package keeps each turn about once.
//
// The history does it by itself. [Memory] (the recorder adds every record
// to it first) keeps only what a record adds to the previous record of its
// trace. It compares the elements of the new Args with the previous
// record's by keyed hashes of their bytes, without decoding anything, and
// holds Args as a chain of immutable pieces, so dropping the oldest record
// copies nothing. Whatever reads it (Records, Trace, TraceTail, the
// recorder's history preview) gets every record's Args whole.
//
// A file does it when asked: [JSONLOptions].ArgsPrefix makes the JSONL
// sink write a record whose Args begin with the previous record's as only
// the new elements and an "args_prefix" right after "args":
//
//	{"call_id":"trace-7-0001",...,"args":[{"role":"assistant","content":"..."},{"role":"user","content":"And for streams cut in the middle?"}],
//	 "args_prefix":{"call_id":"trace-7-0000","count":2,"crc32c":3666847455},"kwargs":{"model":"gpt-4o-mini"},...}
//
// It says: this record's Args are the first count elements of record
// call_id's Args, then the ones written here; crc32c checks them (see
// [ArgsPrefix]). A record is written whole instead when the record it
// would name is not the latest line of its trace in this file (the file
// is shared, or its trace is not among the 4096 traces written to it
// last), when fewer than 128 bytes are shared, or when the history did
// not see the record (a sink given records by hand, not through
// [Memory.Add]).
//
// Readers put Args back together: [ReadJSONL] and [Reader] return every
// record with Args whole and ArgsPrefix nil. Code that decodes one line
// at a time with [DecodeLine], which keeps args_prefix as written,
// completes records with an [ArgsJoiner]. Tools that read lines raw (jq, a
// log shipper) see only the new elements, which is why the option is off
// by default. A program that does not look at Args sets
// [Reader].SkipArgs: each args_prefix is still checked, and records come
// out with Args nil (llmhistory report reads this way). A program that
// takes Args apart anyway sets [Reader].SplitArgs: each record comes out
// with Args nil and their elements by [Reader.Elements], those it shares
// with the record it continues that record's own (the store's import
// reads this way): whole Args would cost the square of a conversation.
//
// A damaged file loses nothing more than the damage. When the record
// named is missing (a line lost, the file cut at the front, lines
// reordered) or its crc32c does not match (a line edited), the record
// comes back marked: ArgsPrefix set, Args holding only what it adds, and
// "args" named in Truncated. [ReadJSONL] returns every record with an
// error that wraps [ErrUnresolvedPrefix] and names the first such line;
// [Reader.Unresolved] counts them. Every other record reads whole.
//
// Bounds: the history holds at most [MemoryOptions].Capacity records
// (1,000) and MaxBytes bytes (256 MiB), counting what each record adds
// ([Memory.Bytes]); past either the oldest record is dropped and counted.
// A reader keeps the latest record of the last 4096 traces, at most 64 MiB
// of Args. With args_prefix, a conversation of 100 turns takes 187 KB of
// file instead of 5.47 MB, 1.75 times what was said (the measurements and
// the commands that reproduce them are in docs/performance.md).
//
// # Errors
//
// One taxonomy serves every provider (the Error* constants), and one rule
// says which errors are worth retrying ([Retriable]):
//
//	error type        retriable  typical cause
//	rate_limit        yes        429, RESOURCE_EXHAUSTED
//	quota             no         insufficient_quota, 402: waiting will not help
//	auth              no         401, invalid key, UNAUTHENTICATED
//	permission        no         403, PERMISSION_DENIED
//	not_found         no         404, unknown model or deployment
//	invalid_request   no         400, 422, INVALID_ARGUMENT
//	context_length    no         context_length_exceeded
//	content_filter    no         content filter, SAFETY, PROHIBITED_CONTENT
//	conflict          yes        409
//	server            yes        500 and other 5xx
//	overloaded        yes        503, 529, UNAVAILABLE
//	timeout           yes        408, 504, deadlines, network timeouts
//	canceled          no         the caller canceled (status "canceled")
//	transport         yes        refused, reset, a stream cut mid-way
//	incomplete        no         the caller stopped reading early
//	decode            no         a response that could not be understood
//	unknown           no         anything else
//
// quota (billing exhausted) is not retriable even though providers send
// it as a 429 like rate_limit. [ErrorTypeForStatus] and
// [ErrorTypeForError] give the first guess from an HTTP status or a Go
// error; provider parsers refine it from the body.
//
// # JSON safety
//
// [Safe], [SafeJSON], [ArgsJSON] and [KwargsJSON] turn any Go value into
// JSON that encodes without error: non-string map keys, NaN and ±Inf (as
// "NaN", "Infinity"), invalid UTF-8 (U+FFFD), []byte (base64), time.Time,
// errors, funcs and channels ("<func()>"), cycles ("<cycle: *main.Node>"),
// deep nesting, and huge strings and collections (cut, with a marker). A
// method that panics or fails (MarshalJSON, Error) becomes an
// inspect-style string at that place only. They never panic. See
// [SafeOptions.Convert] for the rules and [SafeOptions] for the limits.
//
// # History
//
// [NormalizeHistory] loads a history from untyped data (a value decoded
// from JSON, a user's map, []Record) and always returns a slice: absent
// gives empty; a value that is not a list gives empty and one debug log
// line; invalid elements are dropped and counted while valid ones are
// kept. [HistoryFrom] reads m["conversation_history"] ([HistoryKey]).
//
// # Sinks
//
// A [Sink] receives finished records. Every sink here is safe for
// concurrent use:
//
//   - [Memory] ([NewMemory], [NewMemoryWith]): the latest records in a
//     ring, at most Capacity of them and MaxBytes bytes, the oldest
//     dropped and counted; a view per trace ([Memory.Trace],
//     [Memory.TraceTail], and [Memory.TraceSummaries] without the
//     payloads); copies in and out; a conversation stored as what each
//     record adds.
//   - [JSONL] ([NewJSONL], [OpenJSONL], and their With forms taking
//     [JSONLOptions]): JSON Lines, buffered, in whole lines; a failing
//     disk keeps a bounded backlog and counts what it drops
//     ([ErrBacklog]); read back with [ReadJSONL] or a [Reader].
//   - [Slog] ([NewSlog]): one log record per history record, its fields as
//     attributes, Warn for failed calls; transcripts (args, kwargs,
//     program_source, output_message) are never logged.
//   - [Fanout] ([NewFanout]): several sinks; one failing, even by
//     panicking, does not stop the others.
//   - [Async] ([NewAsync]): a bounded queue and a goroutine in front of a
//     slow sink; a full queue drops and counts ([ErrQueueFull]), never
//     waits; Close drains.
//
// Package otelsink adds a sink of OpenTelemetry spans and GenAI metrics.
//
// A sink of your own implements Append (and [Flusher] or io.Closer if it
// buffers or holds resources) and may keep the records it is given. The
// JSONL, Slog and Memory sinks keep nothing of a record once Append
// returns; a recorder whose sinks are only those (or none) builds each
// record's Args in a buffer it reuses once the last sink has written the
// record, and gives a sink of yours, Async or otelsink Args of their own.
//
// # Telemetry in logs
//
// Every line the Slog sink writes (message "llm call", [LogMessage])
// carries the call's identity (call_id, timestamp, trace_id,
// parent_call_id, depth, speaker, method_name, model), its
// outcome_summary as a group, duration_ms, attempts, error type and
// (redacted) message, usage, and the four history telemetry fields every
// record carries: history_record_appended, conversation_history_size,
// history_access_detected and history_query_patterns ([] when none), plus
// history_guidance when the preview was added; Fields marks each field
// the sink logs. Full transcripts and secrets are never logged. Record
// implements [slog.LogValuer], so logger.Info("done", "call", r) logs the
// same group. For pipelines, JSON:
//
//	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
//	rec := middleware.NewRecorder(middleware.WithSink(record.NewSlog(logger)))
//
// For people, tint.NewTextHandler(os.Stderr, nil)
// (github.com/lmittmann/tint) gives coloured lines with the same keys.
// The sink is tested through a handler that testing/slogtest checks,
// under an application's own With and WithGroup.
package record

// The JSON Schema of the format, docs/record.schema.json, is generated
// from Fields and the field table of docs/record-format.md.
//go:generate go run ./internal/schemagen

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
// duration_ms, error_type, error_message, program_source, output,
// artifact_hit, attempts, model, usage, truncated) are omitted when unset; depth is a
// pointer so that 0, a top-level call, survives encoding. The four history
// telemetry fields (history_record_appended, conversation_history_size,
// history_access_detected, history_query_patterns) are on every record.
//
// The outcome summary is compact on purpose: status, ok, error_type,
// retriable, value_class, and a few wire facts (HTTP status, finish
// reason, response id). The full response is not stored.
//
// # The format
//
// Records are stored as JSON Lines. Every record carries "version": 1
// ([Version]). Optional fields may be added without a new version, so
// readers ignore fields they do not know; a record of a higher version is
// refused with [ErrUnsupportedVersion] rather than misread. Encoding is
// done by [Record.AppendJSON], which cannot fail and never writes a
// newline: a broken Args or Kwargs is repaired at that field only.
//
// A conversation resends itself on every call, so a trace's records
// repeat each other's Args. [Memory] keeps only what each record adds to
// the previous record of its trace, and a [JSONL] sink told to
// ([JSONLOptions].ArgsPrefix) writes only the new elements and an
// "args_prefix" naming the record they follow (see [ArgsPrefix]): a
// conversation takes space in proportion to its length, not its square.
// [ReadJSONL], [Reader] and [ArgsJoiner] put Args back together; a record
// whose earlier record is missing or damaged comes back marked, and
// [ErrUnresolvedPrefix] says so.
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
// [ErrorTypeForStatus] and [ErrorTypeForError] give the first guess from
// an HTTP status or a Go error; provider parsers refine it from the body.
//
// # JSON safety
//
// [Safe], [SafeJSON], [ArgsJSON] and [KwargsJSON] turn any Go value into
// one that encodes as JSON without error: non-string map keys, NaN and
// ±Inf, invalid UTF-8, []byte, time.Time, errors, funcs and channels,
// cycles, deep nesting and huge strings are all handled, and what cannot
// be made safe becomes an inspect-style string at that place only. See
// [SafeOptions.Convert] for the rules and [SafeOptions] for the limits.
//
// # History
//
// [NormalizeHistory] and [HistoryFrom] load a history from untyped data
// (decoded JSON, a user's map) and always yield a slice: absent gives
// empty, a non-list gives empty with a debug log line, and invalid
// elements are dropped and counted while valid ones are kept.
//
// # Sinks
//
// A [Sink] receives finished records. The package provides:
//
//   - [Memory]: a bounded in-memory history, with a view per trace;
//   - [JSONL]: JSON Lines to any writer, or to a file with [OpenJSONL],
//     read back with [ReadJSONL] or, for big files, a [Reader];
//   - [Slog]: one log record per history record, for any slog handler;
//   - [Fanout]: several sinks at once;
//   - [Async]: a bounded queue in front of a slow sink.
//
// Sinks are safe for concurrent use.
package record

// The JSON Schema of the format, docs/record.schema.json, is generated
// from Fields and the field table of docs/record-format.md.
//go:generate go run ./internal/schemagen

package record

// Field describes one field of the v1 record format, as every encoder and
// decoder of it must know it.
type Field struct {
	Name     string  // the JSON name
	GoName   string  // the field of the Go struct
	Required bool    // always written, even when zero
	Logged   bool    // written by the slog sink and Record.LogValue (transcripts are not)
	Fields   []Field // the fields of a nested object (args_prefix, outcome_summary, usage, cost, output_message), or of each object of an array (parts)
}

// Fields lists the fields of the record, in the order [Record.AppendJSON]
// writes them. It is the single source of the format: the struct tags,
// the hand-written encoder and decoder and the slog attributes are each
// tested against it, so a new field cannot be forgotten in one of them.
// Packages that carry records elsewhere (the OpenTelemetry export) test
// their mapping against it too. The result is a fresh copy.
func Fields() []Field {
	return clone(fields)
}

func clone(fs []Field) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = f
		if f.Fields != nil {
			out[i].Fields = clone(f.Fields)
		}
	}
	return out
}

var fields = []Field{
	{Name: "call_id", GoName: "CallID", Required: true, Logged: true},
	{Name: "timestamp", GoName: "Timestamp", Required: true, Logged: true},
	{Name: "speaker", GoName: "Speaker", Required: true, Logged: true},
	{Name: "method_name", GoName: "MethodName", Required: true, Logged: true},
	{Name: "args", GoName: "Args", Required: true},
	{Name: "args_prefix", GoName: "ArgsPrefix", Fields: []Field{
		{Name: "call_id", GoName: "CallID", Required: true},
		{Name: "count", GoName: "Count", Required: true},
		{Name: "crc32c", GoName: "CRC32C", Required: true},
	}},
	{Name: "kwargs", GoName: "Kwargs", Required: true},
	{Name: "outcome_summary", GoName: "Outcome", Required: true, Logged: true, Fields: []Field{
		{Name: "status", GoName: "Status", Required: true, Logged: true},
		{Name: "ok", GoName: "OK", Required: true, Logged: true},
		{Name: "error_type", GoName: "ErrorType", Logged: true},
		{Name: "retriable", GoName: "Retriable", Required: true, Logged: true},
		{Name: "value_class", GoName: "ValueClass", Logged: true},
		{Name: "http_status", GoName: "HTTPStatus", Logged: true},
		{Name: "finish_reason", GoName: "FinishReason", Logged: true},
		{Name: "response_id", GoName: "ResponseID", Logged: true},
	}},
	{Name: "trace_id", GoName: "TraceID", Logged: true},
	{Name: "trace_inferred", GoName: "TraceInferred", Logged: true},
	{Name: "parent_call_id", GoName: "ParentCallID", Logged: true},
	{Name: "depth", GoName: "Depth", Logged: true},
	{Name: "user_id", GoName: "UserID", Logged: true},
	{Name: "tags", GoName: "Tags", Logged: true},
	{Name: "metadata", GoName: "Metadata", Logged: true},
	{Name: "duration_ms", GoName: "DurationMS", Logged: true},
	{Name: "time_to_first_chunk_ms", GoName: "TimeToFirstChunkMS", Logged: true},
	{Name: "error_type", GoName: "ErrorType", Logged: true},
	{Name: "error_message", GoName: "ErrorMessage", Logged: true},
	{Name: "program_source", GoName: "ProgramSource"},
	{Name: "output_message", GoName: "Output", Fields: messageFields},
	{Name: "artifact_hit", GoName: "ArtifactHit", Logged: true},
	{Name: "attempts", GoName: "Attempts", Logged: true},
	{Name: "hops", GoName: "Hops", Logged: true},
	{Name: "server_address", GoName: "ServerAddress", Logged: true},
	{Name: "server_port", GoName: "ServerPort", Logged: true},
	{Name: "model", GoName: "Model", Logged: true},
	{Name: "service_tier", GoName: "ServiceTier", Logged: true},
	{Name: "system_fingerprint", GoName: "SystemFingerprint", Logged: true},
	{Name: "usage", GoName: "Usage", Logged: true, Fields: []Field{
		{Name: "input_tokens", GoName: "InputTokens", Required: true, Logged: true},
		{Name: "output_tokens", GoName: "OutputTokens", Required: true, Logged: true},
		{Name: "total_tokens", GoName: "TotalTokens", Required: true, Logged: true},
		{Name: "cached_tokens", GoName: "CachedTokens", Logged: true},
		{Name: "cache_write_tokens", GoName: "CacheWriteTokens", Logged: true},
		{Name: "cache_write_1h_tokens", GoName: "CacheWrite1hTokens", Logged: true},
		{Name: "reasoning_tokens", GoName: "ReasoningTokens", Logged: true},
	}},
	{Name: "cost", GoName: "Cost", Logged: true, Fields: []Field{
		{Name: "usd", GoName: "USD", Required: true, Logged: true},
		{Name: "table", GoName: "Table", Required: true, Logged: true},
	}},
	{Name: "truncated", GoName: "Truncated", Logged: true},
	{Name: "history_guidance", GoName: "HistoryGuidance", Logged: true},
	{Name: "history_record_appended", GoName: "HistoryRecordAppended", Required: true, Logged: true},
	{Name: "conversation_history_size", GoName: "ConversationHistorySize", Required: true, Logged: true},
	{Name: "history_access_detected", GoName: "HistoryAccessDetected", Required: true, Logged: true},
	{Name: "history_query_patterns", GoName: "HistoryQueryPatterns", Required: true, Logged: true},
	{Name: "version", GoName: "Version", Required: true},
}

// messageFields are the fields of a [Message]: of the output_message, and
// of each element of args.
var messageFields = []Field{
	{Name: "role", GoName: "Role", Required: true},
	{Name: "parts", GoName: "Parts", Required: true, Fields: []Field{
		{Name: "type", GoName: "Type", Required: true},
		{Name: "id", GoName: "ID"},
		{Name: "name", GoName: "Name"},
		{Name: "content", GoName: "Content"},
		{Name: "arguments", GoName: "Arguments"},
		{Name: "mime_type", GoName: "MIMEType"},
		{Name: "uri", GoName: "URI"},
		{Name: "size", GoName: "Size"},
		{Name: "is_error", GoName: "IsError"},
		{Name: "data", GoName: "Data"},
	}},
}

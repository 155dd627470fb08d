package providers

// FinishReason maps a provider's finish reason (a record's
// Outcome.FinishReason) onto the values of the OpenTelemetry GenAI
// conventions' output messages schema: stop, length, content_filter,
// tool_call and error. A value with no counterpart ("pause_turn", a
// Responses API "in_progress", Gemini's "OTHER") is kept as the provider
// gave it, which the schema allows.
func FinishReason(raw string) string {
	switch raw {
	case "stop", "end_turn", "stop_sequence", "STOP", "completed":
		return "stop"
	case "length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "model_context_window_exceeded":
		return "length"
	case "content_filter", "refusal", "guardrail_intervened", "content_filtered", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return "content_filter"
	case "tool_calls", "function_call", "tool_use":
		return "tool_call"
	case "failed", "cancelled", "error", "malformed_model_output", "malformed_tool_use", "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS",
		"LANGUAGE", "MISSING_THOUGHT_SIGNATURE":
		return "error"
	}
	return raw
}

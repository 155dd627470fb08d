package providers

import "testing"

func TestFinishReason(t *testing.T) {
	for raw, want := range map[string]string{
		"stop": "stop", "end_turn": "stop", "STOP": "stop", "completed": "stop",
		"length": "length", "max_tokens": "length", "MAX_TOKENS": "length",
		"content_filter": "content_filter", "refusal": "content_filter", "SAFETY": "content_filter", "guardrail_intervened": "content_filter",
		"tool_calls": "tool_call", "tool_use": "tool_call", "function_call": "tool_call",
		"MALFORMED_FUNCTION_CALL": "error", "failed": "error",
		"pause_turn": "pause_turn", "": "",
	} {
		if got := FinishReason(raw); got != want {
			t.Errorf("FinishReason(%q) = %q, want %q", raw, got, want)
		}
	}
}

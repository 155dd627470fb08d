package anthropic

import (
	"bytes"
	"strings"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/providers/internal/wire"
	"github.com/llmhistory/llmhistory/record"
)

// classify reads an error body, {"type": "error", "error": {"type",
// "message"}, "request_id"}, and returns its place in the taxonomy of
// package record and its message. [providers.ClassifyError] reads the
// envelope and the types every provider shares (rate_limit_error,
// overloaded_error, authentication_error, permission_error,
// not_found_error, api_error), the HTTP status when the body says nothing
// better (529 is overloaded), and the other shapes a compatible server or
// a gateway in front of one may send (an HTML page, Vertex AI's
// {"error": {"status": ...}}). The types only Anthropic sends are refined
// here.
func classify(status int, body []byte) (errorType, message string) {
	errorType, message = providers.ClassifyError(status, body)
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return errorType, message
	}
	switch typ := wire.Parse(b).Get("error.type").String(); typ {
	case "billing_error":
		errorType = record.ErrorQuota
	case "timeout_error":
		errorType = record.ErrorTimeout
	case "request_too_large":
		// 413: the request's bytes exceed the API's size limit (32 MB),
		// which says nothing about the model's context window.
		errorType = record.ErrorInvalidRequest
	case "invalid_request_error":
		switch {
		case contextLength(message):
			errorType = record.ErrorContextLength
		case strings.Contains(message, "credit balance is too low"):
			// Anthropic's answer to an account out of credit is a 400.
			errorType = record.ErrorQuota
		default:
			// Also when it comes mid-stream, where the status says 200.
			errorType = record.ErrorInvalidRequest
		}
	}
	return errorType, message
}

// contextLength reports whether an invalid_request_error says the prompt
// does not fit the model's context window: "prompt is too long: 201234
// tokens > 200000 maximum", or "input length and `max_tokens` exceed
// context limit: 197451 + 8192 > 200000, decrease input length or
// `max_tokens` and try again".
func contextLength(msg string) bool {
	return strings.Contains(msg, "prompt is too long") || strings.Contains(msg, "exceed context limit")
}

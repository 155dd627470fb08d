package providers

import (
	"bytes"
	"encoding/json"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/llmhistory/llmhistory/record"
)

// maxErrorMessage caps the error message kept from a body.
const maxErrorMessage = 1024

// ClassifyError reads an error response the way most LLM APIs write it,
// {"error": {"message", "type", "code", "status"}}, and returns its place
// in the taxonomy of package record and its message. Codes and statuses it
// knows refine what the HTTP status says (a 429 whose code is
// insufficient_quota is a quota error, not a rate limit; a 400 with
// API_KEY_INVALID is an auth error). A body that is not JSON, such as an
// HTML error page, gives the HTTP status's type and the page's title or
// first line as the message.
func ClassifyError(status int, body []byte) (errorType, message string) {
	errorType = record.ErrorTypeForStatus(status)
	if errorType == "" {
		errorType = record.ErrorUnknown
	}
	body = bytes.TrimSpace(body)
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if len(body) == 0 {
		return errorType, ""
	}
	if body[0] == '[' {
		// streamGenerateContent without alt=sse wraps its error in an array.
		var list []json.RawMessage
		if json.Unmarshal(body, &list) == nil && len(list) > 0 {
			body = bytes.TrimSpace(list[0])
		}
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &env) != nil {
		return errorType, textMessage(body)
	}
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	}
	if len(env.Error) > 0 && env.Error[0] == '"' {
		_ = json.Unmarshal(env.Error, &e.Message) // {"error": "text"}
	} else if len(env.Error) > 0 {
		_ = json.Unmarshal(env.Error, &e)
	}
	if e.Message == "" {
		e.Message = env.Message
	}
	var code string
	if len(e.Code) > 0 && e.Code[0] == '"' {
		_ = json.Unmarshal(e.Code, &code)
	}
	reasons := make([]string, 0, len(e.Details))
	for _, d := range e.Details {
		reasons = append(reasons, d.Reason)
	}
	if t := typeFromFields(code, e.Type, e.Status, reasons, e.Message); t != "" && !vaguer(t, errorType) {
		errorType = t
	}
	return errorType, clip(e.Message)
}

// vaguer reports whether the body's type says less than the status did:
// OpenAI answers an overload (503) and a gateway timeout (504) with the
// catch-all "server_error", which must not hide them.
func vaguer(fromBody, fromStatus string) bool {
	return fromBody == record.ErrorServer && (fromStatus == record.ErrorOverloaded || fromStatus == record.ErrorTimeout)
}

func typeFromFields(code, typ, status string, reasons []string, message string) string {
	for _, r := range reasons {
		switch r {
		case "API_KEY_INVALID", "API_KEY_EXPIRED":
			return record.ErrorAuth
		}
	}
	switch code {
	case "insufficient_quota", "billing_hard_limit_reached":
		return record.ErrorQuota
	case "rate_limit_exceeded":
		return record.ErrorRateLimit
	case "context_length_exceeded", "string_above_max_length":
		return record.ErrorContextLength
	case "invalid_api_key", "invalid_authentication":
		return record.ErrorAuth
	case "content_filter", "content_policy_violation":
		return record.ErrorContentFilter
	case "model_not_found", "deployment_not_found", "DeploymentNotFound":
		return record.ErrorNotFound
	}
	switch typ {
	case "insufficient_quota":
		return record.ErrorQuota
	case "rate_limit_error", "requests", "tokens":
		return record.ErrorRateLimit
	case "authentication_error":
		return record.ErrorAuth
	case "permission_error":
		return record.ErrorPermission
	case "not_found_error":
		return record.ErrorNotFound
	case "overloaded_error":
		return record.ErrorOverloaded
	case "server_error", "api_error":
		return record.ErrorServer
	}
	// A prompt longer than the model's context, in OpenAI's words and in
	// Gemini's ("The input token count (1200293) exceeds the maximum number
	// of tokens allowed (1048576)."), where the status says only
	// INVALID_ARGUMENT.
	if strings.Contains(message, "maximum context length") || strings.Contains(message, "exceeds the maximum number of tokens") {
		return record.ErrorContextLength
	}
	switch status {
	case "RESOURCE_EXHAUSTED":
		return record.ErrorRateLimit
	case "UNAVAILABLE":
		return record.ErrorOverloaded
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return record.ErrorInvalidRequest
	case "PERMISSION_DENIED":
		return record.ErrorPermission
	case "UNAUTHENTICATED":
		return record.ErrorAuth
	case "DEADLINE_EXCEEDED":
		return record.ErrorTimeout
	case "CANCELLED":
		return record.ErrorCanceled
	case "NOT_FOUND":
		return record.ErrorNotFound
	case "INTERNAL", "UNKNOWN", "DATA_LOSS":
		return record.ErrorServer
	case "ABORTED":
		return record.ErrorConflict
	}
	return ""
}

// textMessage finds something readable in a body that is not JSON: the
// title of an HTML page, or the first non-empty line.
func textMessage(body []byte) string {
	if i := indexFoldASCII(body, "<title>"); i >= 0 {
		rest := body[i+len("<title>"):]
		if j := indexFoldASCII(rest, "</title>"); j >= 0 {
			return clip(html.UnescapeString(strings.TrimSpace(string(rest[:j]))))
		}
	}
	for line := range bytes.Lines(body) {
		if l := bytes.TrimSpace(line); len(l) > 0 {
			return clip(string(l))
		}
	}
	return ""
}

// indexFoldASCII is bytes.Index ignoring ASCII case. It searches body
// itself rather than bytes.ToLower(body): lowering can change a body's
// length (invalid UTF-8 becomes U+FFFD, 'İ' grows a byte), so an index
// into the lowered copy is not an index into body.
func indexFoldASCII(body []byte, lowerNeedle string) int {
	for i := 0; i+len(lowerNeedle) <= len(body); i++ {
		j := 0
		for j < len(lowerNeedle) {
			c := body[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerNeedle[j] {
				break
			}
			j++
		}
		if j == len(lowerNeedle) {
			return i
		}
	}
	return -1
}

func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// MaxArgsBytes and MaxKwargsBytes bound what a call keeps of a request.
// MaxArgsBytes is the default of [Request.MaxArgs]: as much as the
// recorder captures of a request by default. A conversation's records
// share what they repeat (see record.ArgsPrefix), so keeping a long one
// whole no longer costs its square.
const (
	MaxArgsBytes   = 1 << 20
	MaxKwargsBytes = 64 << 10
)

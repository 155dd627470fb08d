package record

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// The error taxonomy: one vocabulary for every provider. A record's
// ErrorType and Outcome.ErrorType hold one of these. Whether a type is
// worth retrying is fixed by [Retriable], not by each provider.
const (
	ErrorRateLimit      = "rate_limit"      // too many requests now; retriable
	ErrorQuota          = "quota"           // billing or quota exhausted; waiting will not help
	ErrorAuth           = "auth"            // missing or invalid credentials
	ErrorPermission     = "permission"      // credentials valid, access denied
	ErrorNotFound       = "not_found"       // unknown model, deployment or path
	ErrorInvalidRequest = "invalid_request" // the request itself is wrong
	ErrorContextLength  = "context_length"  // the prompt exceeds the model's context window
	ErrorContentFilter  = "content_filter"  // blocked by a safety or content filter
	ErrorConflict       = "conflict"        // 409: a concurrent change; retriable
	ErrorServer         = "server"          // 5xx from the provider; retriable
	ErrorOverloaded     = "overloaded"      // 503, 529, UNAVAILABLE; retriable
	ErrorTimeout        = "timeout"         // a deadline passed; retriable
	ErrorCanceled       = "canceled"        // the caller canceled; not an error of the provider
	ErrorTransport      = "transport"       // no usable response: refused, reset, cut mid-stream; retriable
	ErrorIncomplete     = "incomplete"      // the caller stopped reading before the response ended
	ErrorDecode         = "decode"          // a response arrived but could not be understood
	ErrorUnknown        = "unknown"         // none of the above
)

var errorTypes = []string{
	ErrorRateLimit, ErrorQuota, ErrorAuth, ErrorPermission, ErrorNotFound,
	ErrorInvalidRequest, ErrorContextLength, ErrorContentFilter, ErrorConflict,
	ErrorServer, ErrorOverloaded, ErrorTimeout, ErrorCanceled, ErrorTransport,
	ErrorIncomplete, ErrorDecode, ErrorUnknown,
}

// ErrorTypes returns every error type of the taxonomy, in a stable order.
func ErrorTypes() []string { return append([]string(nil), errorTypes...) }

// Retriable reports whether a call that failed with errorType may succeed
// if sent again unchanged. The rule: transient conditions on the provider's
// side or on the way to it are retriable (rate_limit, conflict, server,
// overloaded, timeout, transport); everything the caller must change first
// is not (quota, auth, permission, not_found, invalid_request,
// context_length, content_filter), nor is what the caller chose (canceled,
// incomplete), nor what nobody understood (decode, unknown).
func Retriable(errorType string) bool {
	switch errorType {
	case ErrorRateLimit, ErrorConflict, ErrorServer, ErrorOverloaded, ErrorTimeout, ErrorTransport:
		return true
	}
	return false
}

// ErrorTypeForStatus maps an HTTP status to the taxonomy when nothing
// better is known; provider parsers refine it from the error body (a 429
// whose code is insufficient_quota is ErrorQuota, not ErrorRateLimit). It
// returns "" for statuses below 400.
func ErrorTypeForStatus(status int) string {
	switch {
	case status < 400:
		return ""
	case status == 400, status == 413, status == 422:
		return ErrorInvalidRequest
	case status == 401:
		return ErrorAuth
	case status == 402:
		return ErrorQuota
	case status == 403:
		return ErrorPermission
	case status == 404:
		return ErrorNotFound
	case status == 408:
		return ErrorTimeout
	case status == 409:
		return ErrorConflict
	case status == 429:
		return ErrorRateLimit
	case status == 499:
		return ErrorCanceled
	case status == 503, status == 529:
		return ErrorOverloaded
	case status == 504:
		return ErrorTimeout
	case status < 500:
		return ErrorInvalidRequest
	case status < 600:
		return ErrorServer
	}
	return ErrorUnknown
}

// ErrorTypeForError classifies a Go error from a client, a transport or a
// body read: cancellation, deadlines and network timeouts, failures on the
// connection, and decoding errors. Anything else is ErrorUnknown; nil
// gives "".
func ErrorTypeForError(err error) string {
	if err == nil {
		return ""
	}
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, context.Canceled):
		return ErrorCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ErrorTimeout
	case errors.As(err, &netErr) && netErr.Timeout():
		return ErrorTimeout
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return ErrorDecode
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, net.ErrClosed):
		return ErrorTransport
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return ErrorTransport
	}
	return ErrorUnknown
}

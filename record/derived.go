package record

import "strings"

// The facts a record says without a field of their own, each derived by
// one rule that every reader (the store, the viewer, the report, the
// OpenTelemetry export) shares, so that one record never means two things.

// Provider returns the provider that recorded the call: the part of its
// method name before the first dot ("openai" of
// "openai.chat.completions.create", "http" of the generic provider's
// "http.POST /v1/rerank"); "" when the method names none. A reader that
// shows it may label "" as it labels other missing values.
func (r *Record) Provider() string { return ProviderOf(r.MethodName) }

// ProviderOf is [Record.Provider] for a method name, for a reader that
// keeps only the method.
func ProviderOf(method string) string {
	name, _, found := strings.Cut(method, ".")
	if !found {
		return ""
	}
	return name
}

// FailureType returns the error type of a call that failed: its outcome's
// (outcome_summary.error_type), else the record's own error_type, which
// records written by hand may set alone; "" for a call that succeeded.
func (r *Record) FailureType() string {
	if r.Outcome.OK {
		return ""
	}
	if r.Outcome.ErrorType != "" {
		return r.Outcome.ErrorType
	}
	return r.ErrorType
}

// Package redact says what is taken out of a record before anything
// keeps it, and takes it out: credentials always, personal data when
// asked.
//
// # Credentials
//
// The recorder (package middleware) never records a credential, and
// nothing built on it (cassettes, exports) does: [IsCredentialHeader]
// names the headers that carry one, [IsSecretParam] the query parameters,
// [SafeURL] and [SafeHeader] leave them out, [Secrets] replaces key-shaped
// strings (sk-..., AIza..., ya29...., bearer tokens, key= parameters) with
// [Redacted], and [CredentialValues] with [Literals] replace the literal
// values a request carried wherever they are echoed, whatever their shape.
package redact

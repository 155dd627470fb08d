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
//
// # Personal data
//
// [PII] returns a redactor of records for middleware.WithRedactor:
//
//	rec := middleware.NewRecorder(
//		middleware.WithRedactor(redact.PII(redact.WithKey(key))),
//		middleware.WithSink(sink))
//
// It replaces, in a record's args, kwargs, output, reasoning, tool calls,
// error message, program source, tags and metadata values, each value of
// a [Kind] it finds with a mark of that kind: [Email] addresses, [Phone]
// numbers (international, and the common national forms), payment [Card]
// numbers that pass the Luhn check, [IBAN]s whose check digits hold, [IP]
// addresses (v4 and v6), and [Secret]s (by a known prefix, a field's
// name, a shape, or their entropy). The recorder runs it on its own
// goroutine, after the call returned, before the history and any sink
// see the record: the JSONL file, a store, the OTLP export. Cassettes
// take a [Redactor] of their own (replay.WithRedactor), which also finds
// values a stream splits across its events ([Redactor.Frames]).
//
// A mark keeps the value's kind, "[EMAIL]"; with [WithKey], also six hex
// digits of a keyed hash of the value, "[EMAIL:3f9a1c]", so that a reader
// can tell that two mentions were the same value, and nobody without the
// key can tell which.
//
// # JSON stays JSON
//
// A [Redactor] reads bytes that may be JSON without parsing them: inside
// a JSON string it reads the escapes (an address written
// "jane\u0040example.com" is found) and replaces whole escapes; a card
// number written as a JSON number becomes a JSON string. Valid JSON in
// gives valid JSON out, whatever it holds (FuzzBytes); redacting twice
// changes nothing. What a field is named counts: the value of "password"
// is a secret whole, the random value of an "id" or a "signature" is no
// secret, bare digits under "phone" are a phone number.
//
// # How well it finds
//
// Each detector's precision and recall on a corpus of real-looking text
// with planted values and look-alikes (testdata/pii) are measured by
// TestCorpus, and shown in docs/privacy.md, with what it misses.
package redact

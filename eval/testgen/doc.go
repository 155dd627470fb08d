// Package testgen turns a recorded conversation into a regression test:
// a replay cassette and a Go test file that drives the recorded calls
// through the SDKs that made them (go-openai or openai-go, the Anthropic
// SDK, genai), offline, and checks that each SDK returns what was
// recorded. llmhistory testgen is its command.
//
// # What a test is made of
//
// A record keeps a call's messages and parameters, and its answer as a
// message with usage and a finish reason, not the wire bodies. [Generate]
// writes them back in the provider's wire format with the provider
// package's renderer ([providers.Renderer]): the request's JSON, the
// response as JSON or as the server-sent events of a stream, and, for a
// call that took several attempts, a rate limit (429, Retry-After: 0)
// for each attempt that failed, then the answer. A call that failed
// fails again with the status it had (a transport error as a transport
// error).
//
// The test decodes each recorded request into the SDK's own request type
// (go-openai's ChatCompletionRequest, openai-go's ChatCompletionNewParams,
// anthropic's MessageNewParams, genai's contents and
// GenerateContentConfig), sends it through an *http.Client whose
// transport is the cassette behind llmhistory's retry, reads a stream
// with the SDK's own reader, and compares the answer's text, tool calls,
// finish reason and usage with the record.
//
// # What a record does not say
//
// A record keeps the names of the tools a call offered, not their
// schemas: the rendered request declares each by name. It does not say
// whether go-openai or openai-go sent a chat completion: [Options].OpenAI
// chooses (go-openai by default). The failed attempts of a retried call
// are replayed as rate limits, whatever they were.
//
// # Secrets
//
// The cassette is checked as every cassette is ([replay.Write]): no
// credential header, no key in a URL, no key-shaped string in a body. The
// bodies are redacted before ([redact.Secrets]); the test's clients
// use a placeholder key.
package testgen

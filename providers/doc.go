// Package providers defines how the recording middleware asks an API
// family to read its own wire format: the [Provider] interface and the
// provider-neutral shapes it speaks in ([Request], [Call], [Response],
// [Result]).
//
// Each wire format is one package: providers/openai, providers/gemini,
// providers/anthropic, providers/bedrock (Amazon Bedrock, its binary
// eventstream framing included) and providers/ollama; providers/generic
// records any other HTTP endpoint.
// This package holds what the recorder and a provider of yours speak in:
// the interface, its shapes, the optional [GuidanceEditor], [Match], and
// a generic reading of JSON error bodies ([ClassifyError], which
// middleware.Retry uses too). What only the built-in providers share, so
// that each fact is written once (a scanner for server-sent events, the
// speaker rule, the one reading of token usage in every provider's shape,
// what a body that is not whole means, the edit helpers of request
// bodies), is in providers/internal/wire. It imports record, gjson and
// sjson, and never an SDK: the recording path stays small.
//
// # Writing a provider
//
// A provider recognizes a request by its method, URL and headers (the
// recorder may ask before it has the body, to match a request once), names
// the call (MethodName), and, given the body, puts what was asked into Args
// (a JSON array) and Kwargs (a JSON object). Given the response, it fills a
// [record.Outcome] using the error taxonomy of package record, so that
// every provider's failures mean the same thing, and the usage as
// [record.Usage] means it (every prompt token in InputTokens, cache reads
// and writes included; every generated token in OutputTokens, reasoning
// included), so that every provider's tokens mean the same thing.
// Providers never decode a large body into structs: they read the fields
// they need from the captured bytes.
//
// A stream has an end that says it is whole (a [DONE], a finish reason, a
// message_stop); one read to EOF without it is [record.ErrorIncomplete],
// not a success. A 2xx that should be JSON and is not is
// [record.ErrorDecode], or [record.ErrorTransport] when it is the
// beginning of a document cut on its way. A body longer than the capture
// keeps its head and its tail ([Response.Tail]): read the tail from its
// first whole event (streams) or its last whole value (documents).
//
// A Result outlives the body it was read from (the recorder reuses its
// capture buffers): copy what points into it, once (the built-in
// providers copy every string of a Result into one allocation). A
// stream's text may be assembled in the buffer the recorder lends as
// [Response.Scratch], which saves a growing buffer on every call; copy it
// out as well.
//
// Everything a provider knows about its wire format lives in its package,
// including where its API takes system guidance: implement
// [GuidanceEditor], and the recorder's history preview
// (middleware.WithHistoryPreview) works for your provider too, whether
// built in or given with middleware.WithProviders. Nothing in middleware
// names a provider but the list of built-in ones.
package providers

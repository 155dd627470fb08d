// Package providers defines how the recording middleware asks an API
// family to read its own wire format: the [Provider] interface and the
// provider-neutral shapes it speaks in ([Request], [Call], [Response],
// [Result]).
//
// The OpenAI and Gemini parsers live in the subpackages providers/openai and
// providers/gemini; providers/generic records any other HTTP endpoint. This
// package also holds what they share: a scanner for server-sent events
// ([ScanSSE]), the speaker rule ([SpeakerForRole]) and a generic reading of
// JSON error bodies ([ClassifyError]).
//
// # Writing a provider
//
// A provider recognizes a request by its URL and body, names the call
// (MethodName), and puts what was asked into Args (a JSON array) and Kwargs
// (a JSON object). Given the response, it fills a [record.Outcome] using the
// error taxonomy of package record, so that every provider's failures mean
// the same thing. Providers never decode a large body into structs: they
// read the fields they need from the captured bytes.
package providers

// Package openai reads the wire format of the OpenAI API for the
// recording middleware: chat completions, the Responses API, legacy
// completions and embeddings, streamed or not, from api.openai.com, Azure
// OpenAI (/openai/deployments/{d}/...?api-version=, the key in an api-key
// header that never reaches the parser) and OpenAI-compatible servers under
// any base URL, recognized by the path's last segments.
//
// # What a call records
//
// method_name is one of [MethodChat], [MethodResponses],
// [MethodCompletions] and [MethodEmbeddings]. args holds the messages (or
// the Responses API input, the prompt, the embedding input) as sent, with
// large base64 data elided and marked, and the Responses API instructions
// first, marked as such. kwargs holds the model and every parameter that
// was set, with tools reduced to their names and response_format to its
// type; the caller's metadata, logit_bias and predicted outputs are left
// out.
//
// # How a call ended
//
// value_class is chat.completion, response, text_completion or list;
// finish reason, response id, model and usage (prompt, completion, cached
// and reasoning tokens) come from the response. A finish reason of
// content_filter is a content_filter failure. Output text, refusals and
// tool calls are assembled, from streams too: text deltas, tool-call
// fragments by index (only a call's first fragment has its id and name),
// usage from the last chunk (every other has "usage": null), [DONE] as the
// end; Responses API events by type, ending with response.completed.
// The reasoning is assembled too: the Responses API's reasoning summaries
// (and reasoning text), parts a blank line apart, and the
// reasoning_content (or reasoning) that OpenAI-compatible servers such as
// DeepSeek, Moonshot, vLLM and OpenRouter send beside a chat message or
// delta. The response's service_tier and system_fingerprint are kept as
// it gives them (a Responses stream's last word on the tier is
// response.completed's).
// Error bodies, {"error": {message, type, param, code}} with a string or
// integer code, map onto the taxonomy of package record through
// [providers.ClassifyError]: rate_limit_exceeded is a retriable rate
// limit, insufficient_quota a quota error that is not, an HTML 502 page a
// server error with the page's title as its message.
package openai

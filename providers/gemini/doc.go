// Package gemini reads the wire format of Google's Gemini models for the
// recording middleware: the Gemini API (generativelanguage.googleapis.com)
// and Vertex AI, streamed or not, as the google.golang.org/genai SDK and
// plain REST clients send it.
//
// # What is recognized
//
// POST requests whose path ends like one of these, under any host and any
// prefix before the version (v1, v1beta, v1alpha, v1beta1...):
//
//	/{version}/models/{m}:{action}                 the Gemini API
//	/{version}/tunedModels/{m}:{action}            a tuned Gemini API model
//	/{version}/projects/{p}/locations/{l}/publishers/google/models/{m}:{action}
//	/{version}/publishers/google/models/{m}:{action}   Vertex AI express mode
//
// where the action is generateContent, streamGenerateContent (usually with
// ?alt=sse), countTokens, embedContent or batchEmbedContents. The
// method_name is [MethodGenerateContent], [MethodStreamGenerateContent],
// [MethodCountTokens], [MethodEmbedContent] or [MethodBatchEmbedContents];
// the model is the {m} segment of the path. Anything else, such as Vertex
// AI's :predict for embeddings or a tuned model's endpoints/{e} path, is
// left to the next provider.
//
// # What a call records
//
// args holds the contents as sent (for embedContent the content, for
// batchEmbedContents the requests), preceded, when the request has one,
// by the system instruction marked as such:
// {"systemInstruction":true,"role":"system","parts":[...]}. Inline base64
// data (images, audio, files, thought signatures) is replaced by a marker
// that keeps its size; when the whole does not fit in the limit of
// [providers.Request.ArgsLimit] (the recorder's request cap, 1 MiB unless
// set), the earliest turns are cut and "args" is marked truncated.
//
// kwargs holds the model and the parameters that were set: every field of
// generationConfig as sent (temperature, topP, maxOutputTokens,
// thinkingConfig...), tools reduced to their names (functions by name,
// built-in tools such as googleSearch by their key), the function calling
// mode of toolConfig as {"mode": ...}, safetySettings and cachedContent as
// sent, and short top-level parameters such as an embedding's taskType.
// The snake_case spellings the REST API also accepts (generation_config,
// system_instruction, ...) are read too.
//
// The speaker comes from the last content: a functionResponse part is the
// tool speaking, the role "model" the agent, and "user" (or no role, which
// the API reads as the user's) the user.
//
// # How a call ended
//
// An error status maps its body, {"error": {code, message, status,
// details}}, alone or wrapped in an array as streamGenerateContent sends
// it, onto the taxonomy of package record through
// [providers.ClassifyError]: RESOURCE_EXHAUSTED is a retriable rate limit,
// UNAVAILABLE a retriable overload, an API_KEY_INVALID detail an auth
// error, CANCELLED a cancellation. An INVALID_ARGUMENT saying that "the
// input token count exceeds the maximum number of tokens allowed" is a
// context_length error.
//
// A success has the value_class generate_content_response,
// count_tokens_response, embed_content_response or
// batch_embed_contents_response. The model comes from modelVersion, the
// response id from responseId, the finish reason from the first
// candidate's finishReason, and the usage from usageMetadata: prompt,
// candidates, thoughts (reasoning) and cached-content tokens, and the
// total, which already counts the thoughts. The output is the text of the
// first candidate's parts, thought parts left out (they are the
// reasoning, put together in order); each functionCall part
// is a tool call, with its args as written.
//
// A finish reason of SAFETY, RECITATION, PROHIBITED_CONTENT, BLOCKLIST,
// SPII, IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT or IMAGE_RECITATION, or a
// prompt blocked by promptFeedback.blockReason, is a content_filter
// failure that keeps the finish reason, response id, model and usage. A
// response is finished when it carries a finish reason or a block; a
// countTokens or embedding answer when it is whole JSON. A 2xx body that
// cannot be read is a success without detail.
//
// # Streams
//
// A streamGenerateContent?alt=sse stream carries one response per "data:"
// event, with frames ending in "\r\n\r\n", and no [DONE] sentinel: it ends
// at EOF. The output and tool calls are assembled across events; the
// usage is cumulative, so the last one counts. An error in the middle of a
// 200 stream arrives as a bare JSON object outside any SSE field; it makes
// the outcome an error classified by its code and status (499 CANCELLED is
// a cancellation). Without alt=sse the stream is a JSON array of
// responses, read the same way.
//
// A stream longer than the recorder captures is read from its head and
// from its tail, starting at the tail's first whole event, so the final
// usage and finish reason are kept. A long unstreamed answer (an inline
// image) still gives its usage, model, response id and finish reason,
// which follow the content, from the tail.
package gemini

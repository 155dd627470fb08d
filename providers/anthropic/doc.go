// Package anthropic reads the wire format of Anthropic's Messages API for
// the recording middleware: messages, streamed or not, and their token
// counter, at api.anthropic.com, on any server that speaks the API under
// another base URL, and Claude on Vertex AI, as the
// github.com/anthropics/anthropic-sdk-go SDK and plain REST clients send
// it. The key, in an x-api-key header, never reaches the parser.
//
// # What is recognized
//
// POST requests whose path ends like one of these, under any host and
// prefix:
//
//	/messages                     [MethodCreate], streamed or not (/v1/messages)
//	/messages/count_tokens        [MethodCountTokens]
//	.../publishers/anthropic/models/{m}:rawPredict         Vertex AI, [MethodCreate]
//	.../publishers/anthropic/models/{m}:streamRawPredict   Vertex AI, [MethodCreate], streamed
//	.../publishers/anthropic/models/count-tokens:rawPredict   Vertex AI, [MethodCountTokens]
//
// An OpenAI Assistants thread's /threads/{t}/messages is not the Messages
// API and is left to the next provider, as are the Message Batches, the
// legacy /v1/complete and Amazon Bedrock's /model/{m}/invoke.
//
// # What a call records
//
// method_name is [MethodCreate] or [MethodCountTokens]; a stream is a
// create call with "stream": true among its kwargs, as the SDKs name it.
// args holds the system prompt first, marked as such and as sent (a
// string or an array of text blocks):
// {"system":true,"role":"system","content":...}, then the messages as
// sent. Base64 images, documents and other long base64 strings are
// replaced by a marker that keeps their size; when the whole does not fit
// in the limit of [providers.Request.ArgsLimit] (the recorder's request
// cap, 1 MiB unless set), the earliest turns are cut and "args" is marked
// truncated.
//
// kwargs holds every other parameter, in request order: the model,
// max_tokens, temperature, top_p, top_k, stop_sequences, stream,
// tool_choice, thinking, service_tier and anything else short. tools are
// listed by name (custom and server tools have one; an MCP toolset its
// type), mcp_servers by name (their declarations may hold an
// authorization_token), output_config keeps its effort and its format's
// type but not the JSON schema. metadata is left out: it is the caller's
// own data (a user id). A value longer than 256 bytes (a string) or 1 KiB
// is replaced by "…[N bytes cut]" and "kwargs" marked truncated. On Vertex
// AI the body names no model: the model from the URL leads the kwargs,
// and anthropic_version is kept.
//
// The speaker is the last message's role: user, or assistant (a prefill:
// the agent). The Messages API has no tool role; a user message whose
// content is only tool_result blocks is the tool speaking.
//
// # How a call ended
//
// A Message is a success of value_class [ClassMessage]; a token count one
// of [ClassCountTokens], without usage: the count is the answer, not
// tokens spent (counting is free), and usage is summed and priced. The
// response id is the message's id, the finish reason its stop_reason
// (end_turn, max_tokens, stop_sequence, tool_use, pause_turn,
// model_context_window_exceeded); a message is finished when it has one.
// A stop_reason of refusal is a content_filter failure that keeps the
// finish reason, response id and usage, with stop_details' category and
// explanation in its message. The output is the text blocks, concatenated;
// thinking blocks are the reasoning, not the output (several a blank line
// apart; a stream's thinking_delta fragments put together), and
// redacted_thinking blocks, whose text is encrypted, are left out. tool_use blocks
// (and the server_tool_use and mcp_tool_use calls Anthropic runs itself)
// are tool calls, with their input as the arguments.
//
// Usage has the one meaning of [record.Usage]. Anthropic's input_tokens
// leaves out the tokens read from and written to the prompt cache, so
//
//	InputTokens        = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
//	CachedTokens       = cache_read_input_tokens
//	CacheWriteTokens   = cache_creation_input_tokens
//	CacheWrite1hTokens = cache_creation.ephemeral_1h_input_tokens
//	OutputTokens       = output_tokens (thinking included)
//	ReasoningTokens    = output_tokens_details.thinking_tokens, when the API reports it
//	TotalTokens        = InputTokens + OutputTokens
//
// # Errors
//
// An error body, {"type": "error", "error": {"type", "message"},
// "request_id"}, maps onto the taxonomy of package record:
// rate_limit_error is a retriable rate_limit, overloaded_error (and any
// 529) a retriable overloaded, api_error a retriable server error,
// timeout_error a retriable timeout; authentication_error is auth,
// permission_error permission, not_found_error not_found, billing_error
// and the 400 that says "credit balance is too low" quota;
// invalid_request_error is invalid_request, or context_length when it
// says the prompt is too long ("prompt is too long: 201234 tokens >
// 200000 maximum") or exceeds the context limit. request_too_large (413)
// is invalid_request: it is about the request's bytes, not the model's
// context window. The message is the error's message. Other shapes (an
// HTML page from a proxy, Vertex AI's {"error": {"status": ...}}) are
// read by [providers.ClassifyError]. A 2xx that is not JSON is a decode
// failure, or a transport one when it is the beginning of a message cut on
// its way (a transport failure).
//
// # Streams
//
// A stream is a series of named events, each with a JSON "data:" whose
// "type" repeats the name, in frames ended by "\n\n" or "\r\n\r\n".
// message_start carries the message's id, model and first usage;
// content_block_start, content_block_delta (text_delta, input_json_delta,
// thinking_delta, signature_delta) and content_block_stop build the
// content blocks by index: text deltas are the output, input_json_delta
// fragments a tool call's arguments (a call without any keeps the input of
// its content_block_start, "{}"). message_delta carries the stop reason
// and the usage so far, cumulatively: each field it carries replaces the
// earlier value, never adds to it (a delta may repeat the input and cache
// counts, or carry only output_tokens). ping is a keep-alive.
//
// There is no [DONE]: message_stop ends the stream, and only it makes the
// call finished. A stream read to its end (EOF) without message_stop is a
// record.ErrorIncomplete failure that keeps the response id and stop
// reason it had: nothing told the caller it had the whole answer. One
// closed before its end is left unfinished, for the recorder to say why.
// An error event in the middle of a 200 stream,
// {"type": "error", "error": {"type": "overloaded_error", ...}}, makes
// the outcome that error, classified as above.
//
// A stream longer than the recorder captures is read from its head and
// from its tail, starting at the tail's first whole frame, so the final
// usage, stop reason and message_stop are kept. A long unstreamed message
// still gives its stop reason and usage, which follow its content, from
// the tail.
//
// # History guidance
//
// [Provider.AddGuidance] implements [providers.GuidanceEditor] for
// messages (not count_tokens): the guidance goes into the system prompt,
// as one insertion that keeps every other byte of the body.
package anthropic

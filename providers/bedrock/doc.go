// Package bedrock reads the wire format of the Amazon Bedrock Runtime API
// for the recording middleware: Converse and ConverseStream, and
// InvokeModel and InvokeModelWithResponseStream, as
// github.com/aws/aws-sdk-go-v2/service/bedrockruntime and plain signed
// requests send them. It imports no AWS SDK: the recording path stays
// small. Wrap the SDK's client with the recorder's:
//
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.HTTPClient = rec.Client(nil)
//	})
//
// # What is recognized
//
// POST requests to /model/{modelId}/{operation} under any host and prefix:
//
//	converse                        [MethodConverse]
//	converse-stream                 [MethodConverseStream]
//	invoke                          [MethodInvokeModel]
//	invoke-with-response-stream     [MethodInvokeModelStream]
//
// The model ID is the path segment, unescaped: a model ID
// ("anthropic.claude-sonnet-4-5-20250929-v1:0"), an inference profile
// ("us.anthropic.claude-sonnet-4-6", "global...."), or an ARN, whose ':'
// and '/' the SDK sends as %3A and %2F. It is the record's model (an
// InvokeModel answer's own model name, "claude-sonnet-4-5-20250929", is
// not: Bedrock bills by the ID, and an inference profile is priced apart
// from its model). The cost package prices model IDs, profiles and ARNs
// from the same LiteLLM-derived table as every other provider.
//
// # What a call records
//
// Converse: args hold the system prompt first, marked as such,
// {"system":true,"role":"system","content":[...]}, then the messages as
// sent, their base64 images and documents elided. kwargs hold the model
// first, then inferenceConfig, toolConfig (its tools by name),
// guardrailConfig, additionalModelRequestFields and the rest, each value
// longer than 256 bytes (a string) or 1 KiB replaced by a marker;
// requestMetadata is left out (the caller's own data). The speaker is the
// last message's role; a user message of only toolResult blocks is the
// tool speaking.
//
// InvokeModel with Claude's Messages body (it has an anthropic_version) is
// read by the Anthropic provider (anthropic.ReadRequest): args and kwargs
// as for api.anthropic.com, with the model from the URL leading the
// kwargs. Any other body (Amazon Nova and Titan, Meta Llama, Mistral,
// Cohere, OpenAI's gpt-oss) is recorded generically: messages (after a
// system prompt), or a prompt, inputText, message, texts or input, are the
// args; the rest are the kwargs, after the model.
//
// # How a call ended
//
// A Converse answer is a success of value_class [ClassMessage], its
// finish reason the stopReason (end_turn, tool_use, max_tokens,
// stop_sequence, ...); guardrail_intervened and content_filtered are a
// content_filter failure that keeps the usage. The output is the text
// blocks; reasoningContent is not output; toolUse blocks are tool calls,
// their input the arguments. Claude's InvokeModel answer is read as the
// Anthropic provider reads a Message. Another model's is
// [ClassModelOutput], its text, finish reason and counts read from the
// fields each family uses (generation, outputText, outputs, output.message,
// choices; stop_reason, completionReason, stopReason, finish_reason).
//
// Usage has the one meaning of record.Usage. Converse's inputTokens leaves
// out the prompt cache's tokens, as Anthropic's input_tokens does:
//
//	InputTokens        = inputTokens + cacheReadInputTokens + cacheWriteInputTokens
//	CachedTokens       = cacheReadInputTokens
//	CacheWriteTokens   = cacheWriteInputTokens
//	CacheWrite1hTokens = cacheDetails' inputTokens with a ttl of "1h"
//	OutputTokens       = outputTokens
//	TotalTokens        = InputTokens + OutputTokens (Bedrock's own totalTokens)
//
// # Errors
//
// Bedrock names an error in the X-Amzn-ErrorType header
// ("ThrottlingException:http://internal.amazon.com/coral/...") and puts
// {"message": ...} in the body; a body's "__type" or "code" names it when
// the header is not there. ThrottlingException is a retriable rate_limit;
// ServiceUnavailableException and ModelNotReadyException a retriable
// overloaded; ModelTimeoutException a retriable timeout;
// ModelErrorException, InternalServerException and
// ModelStreamErrorException a retriable server error; ValidationException
// is invalid_request, or context_length when it says the input is too long
// ("Input is too long for requested model.", "prompt is too long: ...");
// AccessDeniedException is permission; ResourceNotFoundException
// not_found; ServiceQuotaExceededException quota (the SDKs do not retry
// it); UnrecognizedClientException, InvalidSignatureException,
// ExpiredTokenException and the other signing failures auth. The message
// is the body's message. AWS quotes the canonical request back when a
// signature does not match, session token and all: the recorder redacts
// the request's AWS credentials (X-Amz-Security-Token, the SigV4
// Authorization's access key ID and signature, a presigned URL's
// X-Amz-Credential, X-Amz-Signature and X-Amz-Security-Token) wherever
// they are echoed.
//
// # Streams
//
// ConverseStream and InvokeModelWithResponseStream answer in AWS's binary
// application/vnd.amazon.eventstream framing, not SSE: each message has a
// prelude (its length, its headers' length, and their CRC-32), headers
// (:message-type, :event-type, :exception-type, :content-type), a payload
// and a CRC-32 of the whole. Both CRCs are checked. ConverseStream's
// events are messageStart, contentBlockStart (a toolUse's id and name),
// contentBlockDelta (text, toolUse.input fragments, reasoningContent),
// contentBlockStop, messageStop (the stopReason) and metadata (the usage);
// messageStop or metadata ends the stream. InvokeModelWithResponseStream
// sends chunks whose payload is {"bytes": base64 of the model's own
// event}: Claude's are the events of Anthropic's Messages stream
// (anthropic.Events reads them), another model's carry its family's
// fields, and the last chunk of every family carries
// amazon-bedrock-invocationMetrics, Bedrock's counts, which end it.
//
// An exception in the middle of a 200 stream (a frame whose :message-type
// is "exception") is the call's outcome, classified as above. A damaged
// frame (a CRC that does not match, a length out of bounds, headers that
// do not parse) makes the call a decode failure: the SDK fails on it too.
// A stream read to its end without its last event, or in the middle of a
// frame, is record.ErrorIncomplete; one whose connection drops is a
// retriable transport failure (the SDK, bedrockruntime v1.63.13, ends its
// events without an error then: the record is what says the answer was
// cut). A stream longer than the capture is read from its head and, from
// its first whole frame on (found by its CRCs), its tail.
//
// # Retries
//
// The SDK retries a throttled or failed call itself (three attempts by
// default), with a request body that has no GetBody, and keeps one
// amz-sdk-invocation-id across the attempts of a call, numbering them in
// amz-sdk-request ("attempt=2; max=3"). The recorder keys the call by the
// invocation id, as it keys one by an Idempotency-Key: a call and its
// retries are one record with attempts counted.
//
// # Signed bodies
//
// The SDK signs each request (SigV4) over the SHA-256 of its body before
// the recorder sees it. The recorder sends the body byte for byte as
// signed, and this provider does not implement
// providers.GuidanceEditor: the history preview cannot add guidance to a
// Bedrock call without breaking its signature.
package bedrock

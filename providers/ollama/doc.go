// Package ollama reads the wire format of Ollama's native API for the
// recording middleware: chat, generate and embed, streamed or not, as
// github.com/ollama/ollama/api and plain REST clients send them, on the
// default localhost:11434 or any other host. (Ollama's OpenAI-compatible
// /v1/chat/completions is read by providers/openai, and its legacy
// /api/embeddings by the OpenAI provider too, whose embeddings it
// resembles in name only: it is recorded as an OpenAI embedding.)
//
// # What is recognized
//
// POST requests whose path ends like one of these, under any host and
// prefix:
//
//	/api/chat       [MethodChat]
//	/api/generate   [MethodGenerate]
//	/api/embed      [MethodEmbed]
//
// # What a call records
//
// chat: args are the messages as sent, their base64 images elided; the
// speaker is the last message's role (tool for a tool's answer). generate:
// args are the system prompt, marked as such
// ({"system":true,"role":"system","content":...}) when it is not empty,
// then the prompt as the user's turn with its images elided. embed: args
// are the input, a string or each of a list. kwargs hold every other
// parameter in request order: the model, options, format, think,
// keep_alive, stream, tools by name, and a generate's context (token ids)
// as their count, "…[85 token ids]". A value longer than 256 bytes (a
// string) or 1 KiB is replaced by a marker and "kwargs" marked truncated.
// Chat and generate stream unless the body says "stream": false.
//
// # How a call ended
//
// A chat is a success of value_class [ClassMessage], a generate of
// [ClassCompletion], an embed of [ClassEmbeddings]. The finish reason is
// done_reason (stop, length, load, unload); the model the answer's model.
// The output is message.content (chat) or response (generate);
// message.thinking is reasoning, not output. message.tool_calls are tool
// calls, each with its id (when Ollama gives one), its function's name, and
// its arguments, a JSON object.
//
// Usage has the one meaning of record.Usage:
//
//	InputTokens  = prompt_eval_count
//	OutputTokens = eval_count
//	TotalTokens  = InputTokens + OutputTokens
//
// prompt_eval_count counts the prompt tokens Ollama evaluated: a prompt
// whose beginning its cache kept from the last call counts only the rest.
// The durations the last object carries (total_duration, load_duration,
// prompt_eval_duration, eval_duration) are nanoseconds of the server's
// time and are not recorded: the record's duration is measured by the
// recorder. A local model costs nothing per token, so an Ollama call is
// never priced (cost.Local), whatever its model's name, and the evidence
// report counts it as local, not as unpriced.
//
// # Errors
//
// An error body is {"error": "message"}; the HTTP status gives its type
// (404 a model that is not pulled, 400 a bad request, 503 a server whose
// queue is full, 500 a model that failed), refined by the message: one
// about the context length is context_length, a model "not found" is
// not_found. A 2xx that is not JSON is a decode failure, or a transport
// one when it is JSON cut on its way.
//
// # Streams
//
// A stream is newline-delimited JSON (application/x-ndjson), not SSE: one
// object a line, each with a piece of message.content (chat) or response
// (generate), and tool calls whole; the last has "done": true, done_reason,
// prompt_eval_count, eval_count and the durations. Only "done": true
// makes the call finished: a stream read to its end without it is
// record.ErrorIncomplete; one whose connection drops half way is a
// retriable transport failure. A line {"error": "..."} in the middle of a
// 200 stream makes the outcome that error (a server error unless its
// message says otherwise). A stream longer than the capture is read from
// its head and, from its first whole line on, its tail; an embed answer
// longer than the capture keeps its counts, which come last.
//
// # History guidance
//
// [Provider.AddGuidance] implements providers.GuidanceEditor: a chat's
// guidance is a system message put first in messages, a generate's is
// appended to its system prompt; each is one insertion that keeps every
// other byte of the body.
package ollama

// Package middleware records every call an HTTP client makes to an LLM
// provider as one history record, without changing a byte of the call.
//
// Wrap the transport of the client you already use:
//
//	rec := middleware.NewRecorder()
//	defer rec.Close()
//	cfg := openai.DefaultConfig(key)          // github.com/sashabaranov/go-openai
//	cfg.HTTPClient = rec.Client(nil)
//
// The same client goes into genai (ClientConfig.HTTPClient), the official
// OpenAI SDK (option.WithHTTPClient) or any code that takes an
// *http.Client. Compose with other RoundTripper middleware through
// [Chain]; the first listed is outermost.
//
// # The call is sacred
//
// The recorder never modifies the caller's request: it sends a clone. It
// copies up to 1 MiB of the request body for parsing, through GetBody when
// there is one, so the body itself is untouched; a body without GetBody is
// copied as the transport reads it, never ahead of it, and can be sent
// again once read whole. The response comes back with the same status,
// headers, error and bytes, delivered chunk for chunk as they arrive; a
// copy of at most 1 MiB plus the last 64 KiB goes into a capture for
// parsing, and closing the body never reads it. A failure inside
// recording (a parser, hook, logger or sink that panics, a full disk, a
// broken transport below) is recovered, counted in [Recorder.Stats] and
// logged once; it never fails the call.
//
// # Sinks and shutting down
//
// Every sink has its own bounded queue and goroutine, so a slow, stuck or
// panicking sink neither delays a call nor costs another sink its records
// ([WithSyncSinks] feeds them on the recorder's goroutine instead).
// [Recorder.Shutdown] drains and closes them within a context, and gives
// up on those still stuck with a [*ShutdownError]; [Recorder.Close] does so
// within [WithCloseTimeout].
//
// A sink of your own may keep the records it is given. The JSONL, Slog
// and Memory sinks of package record keep nothing of a record once their
// Append returns, so when every sink is one of them (or there is none)
// and no redactor is set, a record's args are built in a buffer the
// recorder reuses once the last sink has written the record: no
// allocation for them per call beyond what the history keeps.
//
// # One record per logical call
//
// A record is finalized exactly once, at the first of: the body read to
// EOF, a read error, Close, the call's context ending, or a transport error
// with no response. A body closed before its end is recorded as
// incomplete, not as success; one never closed is finalized when the
// recorder closes. The hops of a redirect http.Client follows are one
// record (hops counted); an error that ends a call is classified by the
// call's context first, so one cause always gives one error type. A 2xx
// whose JSON ends early is a transport failure only when its body really
// ended early (an unexpected EOF, a reset, fewer bytes than its
// Content-Length); when every byte its framing declared came, it is a
// decode error, not retriable, though still held for a retry, since SDKs
// read it as they read a cut connection.
//
// Attempts of one logical call are folded into one record (with the first
// attempt's call_id and timestamp, the last one's outcome, attempts, and
// duration_ms over them all). A retriable failure is held until its retry
// comes, the dedup window ends, or the recorder closes; success and other
// failures are emitted at once. The recorder recognizes a retry, in
// order, by a call ID in the context ([WithCallID]), an Idempotency-Key
// header, an AWS SDK's amz-sdk-invocation-id (kept across the attempts of
// one call; "amz-sdk-request: attempt=1" marks a first attempt, which
// claims nothing), or else an identical request (method, URL, body, trace) that
// begins after the failure was handed back to its caller, and that is
// the same request value sent again (genai's own retries resend the
// *http.Request they were given), made under the same context (a retry
// loop keeps its call's), marked a retry by its SDK
// (X-Stainless-Retry-Count above 0: openai-go, the Anthropic SDK; 0 marks
// a first attempt, which claims nothing), or, failing all these, made
// after the failure with no identical call beside either (a loop that
// retries by hand through an SDK that builds a new request, and may
// derive a context of its own, for each call). Identical calls made at
// once (a batch job, a health probe) are therefore never folded into
// each other, unless they share one context: nothing then tells them
// from a retry loop; nor is a failure that a [Retry] inside the recorder
// gave up on folded into the identical call after it. [Stats] counts the
// folds made on a shared context (FoldedByContext) or on order alone
// (FoldedBySequence), and the SDK-marked retries that had several
// identical failures to choose from (RetriesGuessed). [Retry] is a retry
// middleware that cooperates with all this: inside the recorder its
// attempts are one call by construction. The folding is the folder's
// (fold.go), whose doc is its contract.
//
// # Identity
//
// call_id is a ULID ([NewCallID]); timestamp is the start of the call;
// trace_id comes from [WithTrace], else from a W3C traceparent header,
// else from the conversation the call continues (below); parent_call_id
// and depth from [WithParent]; speaker from [WithSpeaker], else from the
// role of the request's last message. server_address and server_port
// name the server the call went to, from the request's URL (its host
// without the port, and the port or the scheme's, 443 or 80), on every
// record.
//
// # Who and which feature
//
// [WithUser], [WithTags] and [WithMetadata] attribute the calls made under
// a context, in the style of WithTrace:
//
//	ctx = middleware.WithUser(ctx, "user-42")
//	ctx = middleware.WithTags(ctx, "checkout", "beta")   // adds to the tags ctx has
//	ctx = middleware.WithMetadata(ctx, "tenant", "acme") // a later value for a key wins
//
// Their records carry user_id, tags and metadata: at most 64 tags (the
// first given, duplicates dropped, order kept) and 64 metadata keys, each
// value at most 256 bytes; what is over is dropped and named in
// truncated. They are redacted like everything else: a key-shaped value
// never reaches a record. The slog sink logs them, otelsink sets user.id,
// llmhistory.tags and llmhistory.metadata.<key>, and the report groups
// calls, errors, tokens, spend and latency by user and by tag.
//
// # Conversations found without being told
//
// A call made with no trace (no WithTrace, no valid traceparent) is given
// the trace of the conversation it continues, and its record says so with
// trace_inferred: true. A call continues a conversation when its messages
// begin with an earlier call's messages followed by that call's answer:
// what a program does that keeps a message slice and appends each answer
// and the next question, tool results included. Messages are compared by
// role and content, not bytes, since SDKs send an answer back in their
// own form: text run together (a string and a single text part are the
// same; an absent content and null are the same), tool calls by id, name
// and arguments compared as JSON, tool results; thinking and the preview
// below are left out. OpenAI Responses' previous_response_id joins that
// response's conversation outright. When two earlier calls fit equally
// (the same answer twice), the most recent wins; two users' calls
// ([WithUser]) are never joined. A call that failed, sent again with the
// same messages as a record of its own (its failure was not retriable, or
// was recorded before the retry came), joins the failed call's
// conversation: a first turn has no answer to continue from. A call that
// continues nothing starts a
// conversation with a fresh W3C trace id, marked trace_inferred too; a
// trace the caller gave never is. Calls that carry no messages
// (embeddings, token counts, unknown endpoints) get no trace.
//
// The work is done on the recorder's goroutine from the parse it makes
// anyway, never on the call's path; it keeps, for the
// [DefaultConversations] most recent conversations ([WithConversations];
// 0 turns it off), the hashes of their last few states and response ids,
// never their messages. A conversation whose requests are longer than the
// capture cap ([WithMaxBody]) cannot be followed: each call starts one.
//
// # What the model said
//
// Each record keeps the answer (output_message): the message the model
// generated, read by its provider into the message model
// (record.Message) as the next call of its conversation sends it back,
// streams put together: its text, its tool calls (id, name, arguments),
// its reasoning (OpenAI's reasoning summaries, the reasoning_content of
// OpenAI-compatible servers, Anthropic's thinking, Gemini's thoughts,
// Bedrock's reasoning content), at most 64 KiB of text and arguments and
// 128 parts, named in truncated when cut. [WithoutOutput] keeps it out.
// The response's own facts are kept either way: finish reason, response
// id, model, usage, and OpenAI's service_tier and system_fingerprint.
//
// # Secrets
//
// Authorization, api-key, x-api-key, x-goog-api-key and cookie headers are
// never passed to parsers; key= query parameters are removed from URLs;
// key-shaped strings (sk-..., AIza..., bearer tokens) in captured bodies,
// URL paths and error messages become [REDACTED] before a record exists
// ([redact.Secrets]), and so do the literal values of the credentials the call
// carried, whatever their shape. The answer a record keeps is redacted
// again once a stream's pieces are put together, since a stream may split
// a key across its events. [WithRedactor] adds a hook of your own;
// redact.PII is one that takes personal data out, on the recorder's
// goroutine, off the call's path.
//
// # The history preview
//
// One opt-in exception to "the call is sacred": [WithHistoryPreview] makes
// the recorder tell the model that its history exists. Each chat request
// gets [HistoryGuidance] (the history is available as structured records
// under conversation_history; filter and query it directly; optional
// fields may be absent) and a bounded preview of its conversation, made
// from the in-memory history of the request's trace:
//
//	History: 5 records in this conversation (trace t-1). Latest:
//	- 12:01:01 user openai.chat.completions.create model=gpt-4o ok chat.completion 640ms
//	- 12:01:02 agent openai.chat.completions.create model=gpt-4o error rate_limit attempts=3 2105ms
//	- 12:01:03 tool openai.chat.completions.create model=gpt-4o ok chat.completion 812ms
//
// The lines hold no payload (no args, kwargs, output, program source or
// error message), at most 160 bytes each, secrets redacted. A call
// without a trace previews the conversation the recorder finds it
// continues, from its body as the caller wrote it. A call whose
// conversation has a call that ended but is not in the history yet waits
// up to 50ms for it, so an agent's next step sees its last.
//
// The guidance goes where each API takes it, and the provider that
// recognizes the request says where (providers.GuidanceEditor): a system
// message inserted first in an OpenAI chat completion's messages; a
// Responses API call's instructions (after the caller's, separated by a
// blank line); a part appended to a Gemini generateContent or
// streamGenerateContent call's systemInstruction, added when absent; an
// Anthropic Messages call's system prompt. A provider of your own takes
// the preview when it implements the interface; one that does not keeps
// its calls untouched. The request is matched to its provider once, and
// the record asks the same provider. The edit is one insertion: every
// other byte of the body is sent as the caller made it. A body that is not
// JSON of the expected shape, declares another Content-Type or a
// Content-Encoding, has no GetBody, or is longer than the capture cap goes
// untouched, and so does every call on any failure of the preview.
//
// The caller's request is not changed: the clone sent carries the new
// body, ContentLength, Content-Length header (when the caller set one)
// and a GetBody that replays the edited body, so [Retry] inside the
// recorder resends it rather than adding the guidance again. The record
// holds what was sent, the guidance included in args, and
// history_guidance is true; the dedup key keeps the caller's body, so a
// request resent by an SDK still folds into the same record.
//
// The preview costs about 14 µs (OpenAI) to 24 µs (Gemini) of editing per
// call, and 50 to 70 µs in all when the previous call's record has to be
// waited for and summed up (go test ./middleware -run '^$' -bench
// 'Preview|EditBody').
//
// # Further reading
//
// In the repository, docs/recording.md gathers these promises with the
// faults found by adversarial testing and what each now does;
// docs/proof.md has the soak with faults, the memory bounds and the crash
// tests, and docs/performance.md what recording costs against a bare
// transport and otelhttp, each with the commands that reproduce them.
package middleware

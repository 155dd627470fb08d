// Package otelsink exports history records as OpenTelemetry spans and
// metrics, with the GenAI semantic conventions (semconv v1.41.0), so that
// the stacks teams run for LLM calls (Jaeger, Tempo, Langfuse, Phoenix,
// Datadog, Honeycomb), and the OpenTelemetry Collector in front of them,
// take them as they take every other traced service's calls.
//
// A [Sink] is a [record.Sink] like the others: give it to a recorder, or
// append the records of a JSONL file to it. [Middleware], before the
// recorder in the chain, gives the sink what a record does not carry: the
// parent span of a traceparent header (and the server the call went to,
// which the record also carries).
//
//	exp, _ := otlptracehttp.New(ctx)                       // OTEL_EXPORTER_OTLP_* say where
//	sink, _ := otelsink.New(otelsink.Options{SpanExporter: exp, MetricReader: reader})
//	rec := middleware.NewRecorder(middleware.WithSink(sink))
//	defer rec.Close()                                      // flushes and closes the sink
//	client := &http.Client{Transport: middleware.Chain(http.DefaultTransport,
//		otelsink.Middleware(), rec.Middleware())}
//
// [FromEnv] makes the OTLP exporters from the standard environment
// variables, for a tool such as llmhistory export.
//
// Only the programs that import this package link OpenTelemetry: the
// recording path (middleware, record, the providers) never imports it.
// docs/opentelemetry.md in the repository has the mapping as a table, a
// Collector configuration and the setup for a team of services.
//
// # What maps to what
//
// One record is one span of kind client, named
// "{gen_ai.operation.name} {gen_ai.request.model}", starting at the
// record's timestamp and lasting its duration_ms, with the status Error and
// the (redacted) error message when the call failed. The attributes:
//
//   - gen_ai.operation.name and gen_ai.provider.name from method_name
//     (chat, generate_content, text_completion, embeddings; openai,
//     gcp.gen_ai, anthropic), and openai.api.type for OpenAI's chat
//     completions and Responses API. A token count is "count_tokens". A
//     provider of your own is named by its method name's first segment
//     (the conventions' name when it is a well-known one: bedrock is
//     aws.bedrock, mistral mistral_ai); an endpoint no provider
//     recognized has the provider [ProviderOther] ("_OTHER", the value
//     OpenTelemetry uses for a value outside a known set) and the
//     operation "http.POST", without its path, so that no URL reaches a
//     span name or a metric attribute.
//   - gen_ai.request.model and the request parameters from kwargs, in any
//     provider's spelling: temperature, max_tokens, top_p, top_k,
//     frequency and presence penalties, seed, stop sequences, choice
//     count, encoding formats, stream, output type, OpenAI's service tier,
//     and an embeddings call's gen_ai.embeddings.dimension.count
//     (dimensions, outputDimensionality).
//   - gen_ai.response.model (model, unless a failed call never got a
//     response that named one), gen_ai.response.id,
//     http.response.status_code and error.type (the taxonomy's type:
//     rate_limit, auth, ...) from the outcome.
//   - gen_ai.response.finish_reasons: the outcome's finish reason on the
//     conventions' values, stop, length, content_filter, tool_call and
//     error (OpenAI's tool_calls, Anthropic's end_turn, max_tokens and
//     tool_use, Gemini's STOP, MAX_TOKENS and SAFETY, a Responses API
//     status); a value with no counterpart (Anthropic's pause_turn) is
//     kept. A response that called tools and says it stopped is
//     tool_call: Gemini ends a function call with STOP, and a Responses
//     API status says completed. The tool calls of the record's answer
//     decide (none when its recorder was made with
//     middleware.WithoutOutput).
//     llmhistory.outcome.finish_reason has the provider's own when it
//     differs.
//   - openai.response.service_tier and openai.response.system_fingerprint
//     from service_tier and system_fingerprint (llmhistory.service_tier
//     and llmhistory.system_fingerprint for another provider's).
//   - gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens,
//     cache_creation.input_tokens and reasoning.output_tokens from usage,
//     whose meaning is already the conventions' (input includes the
//     cache, output includes reasoning). An embeddings call has no output
//     tokens.
//   - gen_ai.conversation.id from trace_id;
//     gen_ai.response.time_to_first_chunk for streams;
//     http.request.resend_count (attempts - 1) for a retried call, which
//     is one span, as it is one record.
//   - server.address and server.port from the record's server_address
//     and server_port, which the recorder takes from the request's URL,
//     so that a span exported from a file has them too; [Middleware]
//     reads the same URL live, and [Options.ServerAddress] wins over both
//     (the server behind a proxy).
//   - Under the prefix "llmhistory.", the fields that have no convention:
//     call_id, parent_call_id, speaker, method_name, depth, attempts,
//     hops, artifact_hit, outcome.status, outcome.retriable,
//     outcome.value_class, outcome.finish_reason, usage.cache_write_1h_tokens,
//     cost.usd, cost.table, truncated, history_guidance, and the four
//     history telemetry fields: history_record_appended,
//     conversation_history_size, history_access_detected and
//     history_query_patterns.
//
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// server.address and server.port are given when the span starts, as the
// conventions ask, for samplers.
//
// The test TestEveryFieldIsMapped holds this list to [record.Fields]: a
// new field of the record fails it until it is mapped or listed as not
// exported. Three are not: outcome_summary.ok (the span status says it),
// usage.total_tokens (input plus output; the conventions have no total)
// and version (the JSON format's). args, output, tool_calls, reasoning
// and program_source are content (below); timestamp and duration_ms are
// the span's times.
//
// # Traces and parents
//
// Where a record's span goes, in this order:
//
//   - Under the caller's span. When the context given to Append carries
//     a valid span (a recorder passes on the caller's context values, so
//     this is the span the application had open when it made the call),
//     or, through [Middleware], the request carried a W3C traceparent
//     header, that span's trace is the trace. A top-level call is the
//     caller span's child; a nested call (parent_call_id) is the child
//     of its parent call's span, in that trace. So a service that traces
//     its requests gets each request's calls as a tree under its span.
//   - In its conversation's trace. Otherwise the conversation is the
//     trace: trace_id itself when it is a W3C trace ID (32 hex digits, as
//     the recorder takes it from a traceparent header), a hash of it
//     otherwise. Its top-level calls are the trace's roots and each
//     nested call is the child of its parent call's span. A call without
//     a trace_id is in the trace of the top-level call it is nested
//     under.
//
// In Jaeger or Tempo a conversation is therefore one trace, named after
// its first call, whose top-level calls follow one another in time
// order, each with the calls nested under it; gen_ai.conversation.id
// carries trace_id, which a search by attribute finds. This was chosen
// over two others. A synthetic "conversation" span as the root: no record
// can end it (no call knows it is a conversation's last), and two
// processes, or a live sink and a later export, would each send it with
// other times under one span ID. A trace per turn: a call nested two deep
// could join its turn's trace only through the records of its ancestors,
// so its place would depend on which records the sink had seen, and in
// what order.
//
// The IDs come from the record: the span ID is a hash of call_id, and a
// nested call's parent is the hash of its parent_call_id, so a
// conversation's spans form its tree whatever order they arrive in, and
// exporting the same file twice gives the same IDs. A call without a
// trace_id finds its chain's trace through the sink's memory of the last
// 4096 such calls (its parent's record usually arrives first, since it
// answered before the calls its answer started); a parent it has not seen
// is taken for a top-level call, which it is for a call one deep.
//
// The parent span a traceparent header named is not in the record: a
// record from a file whose trace_id came from such a header is a root of
// that trace.
//
// Records arrive when calls end, so a caller's span, or a parent call
// that streams while its nested calls run, is often exported after its
// children. OTLP backends assemble a trace from spans in any order; a
// child shown before its parent arrives is normal.
//
// # Sampling
//
// A span under the caller's span follows the caller's sampling decision:
// under an unsampled span (or a traceparent header whose flags say so),
// nothing is exported, since a span whose parent never is would be an
// orphan. Every other span is decided by [Options.Sampler], or, when it
// is nil, by OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (always_on
// by default). The sampler sees no parent: a nested call's parent is a
// span of this sink decided the same way, and a sampler that decides by
// trace ID, as the SDK's ratio sampler does, keeps or drops a
// conversation whole. [Stats] counts what sampling left out; the metrics
// count every call.
//
// # Content
//
// Messages, system instructions, the output and the program source are not
// exported unless asked for, by [Options.Content] or by
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, whose values are
// the GenAI instrumentations': SPAN_ONLY and SPAN_AND_EVENT (as the
// Python GenAI utilities define them) and true capture on the spans;
// EVENT_ONLY, NO_CONTENT and false do not (the sink emits no events).
// Then args become gen_ai.system_instructions (the system prompts the
// providers keep apart) and gen_ai.input.messages; reasoning, output and
// tool_calls become gen_ai.output.messages, one assistant message whose
// parts are a reasoning part, a text part and a tool_call part per call
// (id, name, and the arguments as the JSON the model wrote), with the
// finish reason on the conventions' values; all as JSON of the
// conventions' schemas, and
// program_source becomes llmhistory.program_source; every one is
// redacted again (key-shaped strings become [REDACTED]) and bounded by
// [Options.MaxContentBytes]. An embeddings call has none of the three
// message attributes.
//
// The output message is the record's answer (output_message, a message of
// the message model, record.Message), which a recorder keeps unless made
// with middleware.WithoutOutput: without it, capture exports what was
// asked but no gen_ai.output.messages. Bounded by
// [Options.MaxContentBytes], the output message has its texts cut first,
// then its tool calls' arguments (as strings).
//
// # Metrics
//
// With a metric reader or meter provider, every record is measured:
// gen_ai.client.operation.duration (seconds, with error.type for a failed
// call), gen_ai.client.token.usage (by gen_ai.token.type, input and
// output, when the provider reported usage; input only for embeddings)
// and, for streams, gen_ai.client.operation.time_to_first_chunk, with the
// conventions' bucket boundaries. Their attributes are the operation,
// provider, request and response models, server address and port: few in
// values, as metrics need.
//
// # Never in the way
//
// Append records the metrics and queues the record; the sink's goroutine
// makes the span and exports batches. When the queue is full the record is
// dropped and counted, never waited for ([Options.WaitWhenFull] is for
// tools that export files). A slow or failing collector therefore delays
// no call: behind a recorder, the recorder's own queue for the sink
// already keeps Append off the call's path, and a failed export is
// counted in [Sink.Stats] and given to [Options.OnError]. Each record
// becomes at most one span; the OTLP exporters retry a batch the
// collector refused for a retryable reason, so a batch the collector took
// but whose answer was lost can arrive twice. Recorder.Close flushes and
// closes the sink.
//
// # Logs
//
// The slog sink ([record.NewSlog]) already carries every record as a log
// record. Through the OpenTelemetry slog bridge it becomes an OTel log
// record, its fields as attributes (outcome_summary and usage as maps),
// with the caller's trace and span IDs:
//
//	logger := otelslog.NewLogger("llmhistory", otelslog.WithLoggerProvider(lp))
//	rec := middleware.NewRecorder(middleware.WithSink(record.NewSlog(logger)))
//
// # Which version of the conventions
//
// The names are those of semconv v1.41.0, the last release of the
// OpenTelemetry semantic conventions that holds the GenAI conventions,
// through the Go constants of go.opentelemetry.io/otel/semconv/v1.41.0;
// TestAttributeNamesAreConventions checks every name against them. The
// GenAI conventions now live in their own repository
// (open-telemetry/semantic-conventions-genai), whose main branch renames
// the inference span, replaces gen_ai.client.token.usage and renames the
// cache attributes (cache_creation becomes cache_write). An untagged
// branch is not followed: the names stay pinned to v1.41.0 until that
// repository tags a release and the Go semconv package carries it. Then
// the sink will emit it under OTEL_SEMCONV_STABILITY_OPT_IN containing
// gen_ai_latest_experimental, the switch the conventions define for
// instrumentations that already emit an older version, keeping v1.41.0
// the default until the conventions are stable.
//
// # Many services
//
// Each service records locally and exports OTLP to a Collector (this
// sink), or writes JSONL that a log shipper reads; the Collector routes to
// whatever backend the team runs. testdata/collector.yaml is a Collector
// configuration that the integration tests (the repository's
// integration/ module) load into the Collector's own components.
package otelsink

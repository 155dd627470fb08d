// Package otelsink exports history records as OpenTelemetry spans and
// metrics, with the GenAI semantic conventions (semconv v1.41.0), so that
// the stacks teams run for LLM calls (Jaeger, Tempo, Langfuse, Phoenix,
// Datadog, Honeycomb), and the OpenTelemetry Collector in front of them,
// take them as they take every other traced service's calls.
//
// A [Sink] is a [record.Sink] like the others: give it to a recorder, or
// append the records of a JSONL file to it.
//
//	exp, _ := otlptracehttp.New(ctx)                       // OTEL_EXPORTER_OTLP_* say where
//	sink, _ := otelsink.New(otelsink.Options{SpanExporter: exp, MetricReader: reader})
//	rec := middleware.NewRecorder(middleware.WithSink(sink))
//	defer rec.Close()                                      // flushes and closes the sink
//
// [FromEnv] makes the OTLP exporters from the standard environment
// variables, for a tool such as llmhistory export.
//
// Only the programs that import this package link OpenTelemetry: the
// recording path (middleware, record, the providers) never imports it.
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
//     completions and Responses API. A token count is "count_tokens"; an
//     endpoint no provider knows is named by its method_name.
//   - gen_ai.request.model and the request parameters from kwargs, in any
//     provider's spelling: temperature, max_tokens, top_p, top_k,
//     frequency and presence penalties, seed, stop sequences, choice
//     count, encoding formats, stream, output type, OpenAI's service tier.
//   - gen_ai.response.model (model, unless a failed call never got a
//     response that named one), gen_ai.response.id, and
//     gen_ai.response.finish_reasons, http.response.status_code and
//     error.type (the taxonomy's type: rate_limit, auth, ...) from the
//     outcome.
//   - gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens,
//     cache_creation.input_tokens and reasoning.output_tokens from usage,
//     whose meaning is already the conventions' (input includes the
//     cache, output includes reasoning).
//   - gen_ai.conversation.id from trace_id;
//     gen_ai.response.time_to_first_chunk for streams;
//     http.request.resend_count (attempts - 1) for a retried call, which
//     is one span, as it is one record.
//   - server.address when [Options.ServerAddress] gives it: a record does
//     not carry its host.
//   - Under the prefix "llmhistory.", the fields that have no convention:
//     call_id, parent_call_id, speaker, method_name, depth, attempts,
//     hops, artifact_hit, outcome.status, outcome.retriable,
//     outcome.value_class, usage.cache_write_1h_tokens, cost.usd,
//     cost.table, truncated, history_guidance, and the four history
//     telemetry fields: history_record_appended,
//     conversation_history_size, history_access_detected and
//     history_query_patterns.
//
// The test TestEveryFieldIsMapped holds this list to [record.Fields]: a
// new field of the record fails it until it is mapped or listed as not
// exported. Three are not: outcome_summary.ok (the span status says it),
// usage.total_tokens (input plus output; the conventions have no total)
// and version (the JSON format's). args, output and program_source are
// content (below); timestamp and duration_ms are the span's times.
//
// # Parents
//
// When the context given to Append carries a valid span (a recorder passes
// on the caller's context values, so this is the span the application had
// open when it made the call), that span is the parent and its trace the
// trace. Otherwise the IDs come from the record: the span ID is a hash of
// call_id, the trace ID is trace_id when it is a W3C trace ID (32 hex
// digits) and a hash of it otherwise, and the parent is the span whose ID
// is the hash of parent_call_id. So a conversation's spans form its tree,
// and exporting the same file twice gives the same IDs. A record without
// a trace_id takes its parent's call as its trace.
//
// Records arrive when calls end, so a parent's span is often exported
// after its children's. OTLP backends assemble a trace from spans in any
// order; a child shown before its parent arrives is normal.
//
// # Content
//
// Messages, system instructions, the output and the program source are not
// exported unless asked for, by [Options.Content] or by
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Then args become
// gen_ai.system_instructions (the system prompts the providers keep apart)
// and gen_ai.input.messages, output becomes gen_ai.output.messages, all as
// JSON of the conventions' schemas, and program_source becomes
// llmhistory.program_source; every one is redacted again (key-shaped
// strings become [REDACTED]) and bounded by [Options.MaxContentBytes].
//
// # Metrics
//
// With a metric reader or meter provider, every record is measured:
// gen_ai.client.operation.duration (seconds, with error.type for a failed
// call), gen_ai.client.token.usage (by gen_ai.token.type, input and
// output, when the provider reported usage) and, for streams,
// gen_ai.client.operation.time_to_first_chunk, with the conventions'
// bucket boundaries. Their attributes are the operation, provider, request
// and response models and server address: low in cardinality, as metrics
// need.
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
// becomes exactly one span; the OTLP exporters retry a batch the
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
// # Many services
//
// Each service records locally and exports OTLP to a Collector (this
// sink), or writes JSONL that a log shipper reads; the Collector routes to
// whatever backend the team runs. testdata/collector.yaml is a Collector
// configuration that the tests load into the Collector's own OTLP
// receiver.
package otelsink

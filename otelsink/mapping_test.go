package otelsink

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/record"
)

// fakeKey is shaped like an OpenAI key, made at run time so that no
// key-shaped string is in the source.
var fakeKey = "sk-" + strings.Repeat("Fake0key", 5)

// testSink is a sink over the SDK's in-memory exporter and a manual
// metric reader.
func testSink(t *testing.T, opts Options) (*Sink, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	reader := sdkmetric.NewManualReader()
	opts.SpanExporter, opts.MetricReader = exp, reader
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, exp, reader
}

// spansOf appends records and returns their spans, in order.
func spansOf(t *testing.T, s *Sink, exp *tracetest.InMemoryExporter, rs ...record.Record) tracetest.SpanStubs {
	t.Helper()
	for _, r := range rs {
		require.NoError(t, s.Append(context.Background(), r))
	}
	require.NoError(t, s.Flush())
	spans := exp.GetSpans()
	require.Len(t, spans, len(rs))
	return spans
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// chatRecord is a retried, streamed OpenAI chat call nested one deep, with
// every optional field the recorder sets.
func chatRecord() record.Record {
	return record.Record{
		CallID:     "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A",
		Timestamp:  "2026-11-21T09:30:00.123456Z",
		Speaker:    record.SpeakerUser,
		MethodName: "openai.chat.completions.create",
		Args:       json.RawMessage(`[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Summarize."}]}]`),
		Kwargs:     json.RawMessage(`{"model":"gpt-4o-mini","stream":true,"temperature":0.2,"max_completion_tokens":64,"top_p":0.9,"seed":7,"stop":["END"],"n":1,"frequency_penalty":0.5,"presence_penalty":0.25,"response_format":"json_object","service_tier":"auto"}`),
		Outcome: record.Outcome{
			Status: record.StatusOK, OK: true, ValueClass: "chat.completion",
			HTTPStatus: 200, FinishReason: "stop", ResponseID: "chatcmpl-abc123",
		},
		UserID:             "user-42",
		Tags:               []string{"checkout", "beta"},
		Metadata:           map[string]string{"tenant": "acme"},
		TraceID:            "4bf92f3577b34da6a3ce929d0e0e4736",
		ParentCallID:       "01JD2Q8Y00000000000000000P",
		Depth:              record.Int(1),
		DurationMS:         812.25,
		TimeToFirstChunkMS: 140.5,
		Attempts:           2,
		Hops:               1,
		ArtifactHit:        true,
		Model:              "gpt-4o-mini-2024-07-18",
		Usage: &record.Usage{InputTokens: 120, OutputTokens: 48, TotalTokens: 168,
			CachedTokens: 64, CacheWriteTokens: 32, CacheWrite1hTokens: 8, ReasoningTokens: 16},
		Cost:                    &record.Cost{USD: 0.000123, Table: "litellm-2026-11-20"},
		Truncated:               []string{"args"},
		HistoryGuidance:         true,
		HistoryRecordAppended:   true,
		ConversationHistorySize: 3,
		HistoryAccessDetected:   true,
		HistoryQueryPatterns:    []string{"slice", "map"},
		Output:                  &record.Message{Role: record.RoleAssistant, Parts: []record.Part{{Type: record.PartText, Content: "Here it is."}}},
		ProgramSource:           "history.last(3)",
	}
}

// Every attribute of a full record, with content off (the default).
func TestSpanAttributes(t *testing.T) {
	t.Setenv(EnvCaptureContent, "")
	s, exp, _ := testSink(t, Options{ServerAddress: func(record.Record) string { return "api.openai.com" }})
	span := spansOf(t, s, exp, chatRecord())[0]

	want := map[string]any{
		"gen_ai.operation.name":                    "chat",
		"gen_ai.provider.name":                     "openai",
		"openai.api.type":                          "chat_completions",
		"gen_ai.request.model":                     "gpt-4o-mini",
		"gen_ai.request.stream":                    true,
		"gen_ai.request.temperature":               0.2,
		"gen_ai.request.max_tokens":                int64(64),
		"gen_ai.request.top_p":                     0.9,
		"gen_ai.request.seed":                      int64(7),
		"gen_ai.request.stop_sequences":            []string{"END"},
		"gen_ai.request.choice.count":              int64(1),
		"gen_ai.request.frequency_penalty":         0.5,
		"gen_ai.request.presence_penalty":          0.25,
		"gen_ai.output.type":                       "json",
		"openai.request.service_tier":              "auto",
		"server.address":                           "api.openai.com",
		"server.port":                              int64(443),
		"gen_ai.conversation.id":                   "4bf92f3577b34da6a3ce929d0e0e4736",
		"session.id":                               "4bf92f3577b34da6a3ce929d0e0e4736",
		"user.id":                                  "user-42",
		"llmhistory.tags":                          []string{"checkout", "beta"},
		"llmhistory.metadata.tenant":               "acme",
		"gen_ai.response.model":                    "gpt-4o-mini-2024-07-18",
		"gen_ai.response.id":                       "chatcmpl-abc123",
		"gen_ai.response.finish_reasons":           []string{"stop"},
		"gen_ai.response.time_to_first_chunk":      0.1405,
		"http.response.status_code":                int64(200),
		"http.request.resend_count":                int64(1),
		"gen_ai.usage.input_tokens":                int64(120),
		"gen_ai.usage.output_tokens":               int64(48),
		"gen_ai.usage.cache_read.input_tokens":     int64(64),
		"gen_ai.usage.cache_creation.input_tokens": int64(32),
		"gen_ai.usage.reasoning.output_tokens":     int64(16),
		"llmhistory.usage.cache_write_1h_tokens":   int64(8),
		"llmhistory.call_id":                       "01JD2Q8Z3XKQ4M9R7T5V6W8Y0A",
		"llmhistory.parent_call_id":                "01JD2Q8Y00000000000000000P",
		"llmhistory.speaker":                       "user",
		"llmhistory.method_name":                   "openai.chat.completions.create",
		"llmhistory.depth":                         int64(1),
		"llmhistory.outcome.status":                "ok",
		"llmhistory.outcome.retriable":             false,
		"llmhistory.outcome.value_class":           "chat.completion",
		"llmhistory.attempts":                      int64(2),
		"llmhistory.hops":                          int64(1),
		"llmhistory.artifact_hit":                  true,
		"llmhistory.cost.usd":                      0.000123,
		"llmhistory.cost.table":                    "litellm-2026-11-20",
		"llmhistory.truncated":                     []string{"args"},
		"llmhistory.history_guidance":              true,
		"llmhistory.history_record_appended":       true,
		"llmhistory.conversation_history_size":     int64(3),
		"llmhistory.history_access_detected":       true,
		"llmhistory.history_query_patterns":        []string{"slice", "map"},
	}
	assert.Equal(t, want, attrMap(span.Attributes))
	assert.Equal(t, "chat gpt-4o-mini", span.Name)
	assert.Equal(t, trace.SpanKindClient, span.SpanKind)
	assert.Equal(t, codes.Unset, span.Status.Code)
	start, _ := record.ParseTime("2026-11-21T09:30:00.123456Z")
	assert.Equal(t, start, span.StartTime)
	assert.Equal(t, int64(812250000), span.EndTime.Sub(span.StartTime).Nanoseconds())
	assert.Equal(t, ScopeName, span.InstrumentationScope.Name)
	assert.Equal(t, semconv.SchemaURL, span.InstrumentationScope.SchemaURL)
	assert.Equal(t, ScopeVersion, span.InstrumentationScope.Version)
}

// A failed call: status Error with the redacted message, error.type from
// the taxonomy, no usage.
func TestErrorSpan(t *testing.T) {
	s, exp, _ := testSink(t, Options{})
	r := record.Record{
		CallID: "c-err", Timestamp: "2026-11-21T09:30:00Z", Speaker: "user",
		MethodName: "anthropic.messages.create", Kwargs: json.RawMessage(`{"model":"claude-x","max_tokens":10}`),
		Outcome:      record.Failure(record.ErrorAuth),
		ErrorType:    record.ErrorAuth,
		ErrorMessage: "invalid x-api-key " + fakeKey,
		DurationMS:   5,
		Model:        "claude-x", // the recorder's fallback: the model asked for
	}
	r.Outcome.HTTPStatus = 401
	span := spansOf(t, s, exp, r)[0]
	a := attrMap(span.Attributes)
	assert.Equal(t, "auth", a["error.type"])
	assert.Equal(t, "anthropic", a["gen_ai.provider.name"])
	assert.Equal(t, int64(401), a["http.response.status_code"])
	assert.Equal(t, int64(10), a["gen_ai.request.max_tokens"])
	assert.NotContains(t, a, "gen_ai.usage.input_tokens")
	assert.NotContains(t, a, "gen_ai.response.model", "no response named a model")
	assert.Equal(t, codes.Error, span.Status.Code)
	assert.Equal(t, "invalid x-api-key [REDACTED]", span.Status.Description)
	assert.Equal(t, "chat claude-x", span.Name)
}

// How each field of record.Fields reaches OpenTelemetry. A field is in
// exactly one of mapped and notExported; TestEveryFieldIsMapped holds the
// lists to record.Fields, so a field added to the record fails it until
// someone decides.
var mapped = map[string]struct {
	attrs []attribute.Key // attributes it sets on the span
	also  string          // where else it goes
}{
	"call_id":                        {[]attribute.Key{AttrCallID}, "the span ID (hashed)"},
	"timestamp":                      {nil, "the span's start time"},
	"speaker":                        {[]attribute.Key{AttrSpeaker}, ""},
	"method_name":                    {[]attribute.Key{semconv.GenAIOperationNameKey, semconv.GenAIProviderNameKey, semconv.OpenAIAPITypeKey, AttrMethodName}, "the span name"},
	"args":                           {[]attribute.Key{semconv.GenAISystemInstructionsKey, semconv.GenAIInputMessagesKey}, "content, when captured"},
	"kwargs":                         {[]attribute.Key{semconv.GenAIRequestModelKey, semconv.GenAIRequestTemperatureKey, semconv.GenAIRequestStreamKey}, "the request parameters (TestKwargs has them all)"},
	"outcome_summary":                {nil, "its fields"},
	"outcome_summary.status":         {[]attribute.Key{AttrStatus}, "the span status"},
	"outcome_summary.error_type":     {[]attribute.Key{semconv.ErrorTypeKey}, ""},
	"outcome_summary.retriable":      {[]attribute.Key{AttrRetriable}, ""},
	"outcome_summary.value_class":    {[]attribute.Key{AttrValueClass}, ""},
	"outcome_summary.http_status":    {[]attribute.Key{semconv.HTTPResponseStatusCodeKey}, ""},
	"outcome_summary.finish_reason":  {[]attribute.Key{semconv.GenAIResponseFinishReasonsKey}, "on the conventions' values; llmhistory.outcome.finish_reason when the provider's differs"},
	"outcome_summary.response_id":    {[]attribute.Key{semconv.GenAIResponseIDKey}, ""},
	"trace_id":                       {[]attribute.Key{semconv.GenAIConversationIDKey, semconv.SessionIDKey}, "the trace ID"},
	"parent_call_id":                 {[]attribute.Key{AttrParentCallID}, "the parent span ID (hashed)"},
	"depth":                          {[]attribute.Key{AttrDepth}, ""},
	"duration_ms":                    {nil, "the span's end time; gen_ai.client.operation.duration"},
	"time_to_first_chunk_ms":         {[]attribute.Key{semconv.GenAIResponseTimeToFirstChunkKey}, "gen_ai.client.operation.time_to_first_chunk"},
	"error_type":                     {[]attribute.Key{semconv.ErrorTypeKey}, ""},
	"error_message":                  {nil, "the span status description, redacted"},
	"program_source":                 {[]attribute.Key{AttrProgramSource}, "content, when captured"},
	"output_message":                 {[]attribute.Key{semconv.GenAIOutputMessagesKey, semconv.GenAIResponseFinishReasonsKey}, "content, when captured: the output message; a stop that called tools is tool_call"},
	"output_message.role":            {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "assistant"},
	"output_message.parts":           {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "its parts"},
	"output_message.parts.type":      {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "text, reasoning, tool_call, tool_call_response; media as a uri part, or one of its own; other parts under the provider's name"},
	"output_message.parts.id":        {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "a tool_call's and a tool_call_response's id"},
	"output_message.parts.name":      {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "a tool_call's name; an other part's type"},
	"output_message.parts.content":   {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "a text or reasoning part's content; a tool_call_response's response"},
	"output_message.parts.arguments": {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "a tool_call's arguments, as JSON"},
	"output_message.parts.mime_type": {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "media's mime_type and modality"},
	"output_message.parts.uri":       {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "a uri part's uri"},
	"output_message.parts.size":      {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "inline media's size"},
	"output_message.parts.is_error":  {nil, "the conventions' tool_call_response has no error flag"},
	"output_message.parts.data":      {[]attribute.Key{semconv.GenAIOutputMessagesKey}, "an other part's content"},
	"server_address":                 {[]attribute.Key{semconv.ServerAddressKey}, "unless Options.ServerAddress or Middleware give one; the metrics too"},
	"server_port":                    {[]attribute.Key{semconv.ServerPortKey}, "with server_address"},
	"service_tier":                   {[]attribute.Key{semconv.OpenAIResponseServiceTierKey}, "llmhistory.service_tier for a provider other than OpenAI"},
	"system_fingerprint":             {[]attribute.Key{semconv.OpenAIResponseSystemFingerprintKey}, "llmhistory.system_fingerprint for a provider other than OpenAI"},
	"artifact_hit":                   {[]attribute.Key{AttrArtifactHit}, ""},
	"attempts":                       {[]attribute.Key{semconv.HTTPRequestResendCountKey, AttrAttempts}, ""},
	"hops":                           {[]attribute.Key{AttrHops}, ""},
	"model":                          {[]attribute.Key{semconv.GenAIResponseModelKey}, ""},
	"usage":                          {nil, "its fields"},
	"usage.input_tokens":             {[]attribute.Key{semconv.GenAIUsageInputTokensKey}, "gen_ai.client.token.usage (input)"},
	"usage.output_tokens":            {[]attribute.Key{semconv.GenAIUsageOutputTokensKey}, "gen_ai.client.token.usage (output)"},
	"usage.cached_tokens":            {[]attribute.Key{semconv.GenAIUsageCacheReadInputTokensKey}, ""},
	"usage.cache_write_tokens":       {[]attribute.Key{semconv.GenAIUsageCacheCreationInputTokensKey}, ""},
	"usage.cache_write_1h_tokens":    {[]attribute.Key{AttrCacheWrite1hTokens}, ""},
	"usage.reasoning_tokens":         {[]attribute.Key{semconv.GenAIUsageReasoningOutputTokensKey}, ""},
	"cost":                           {nil, "its fields"},
	"cost.usd":                       {[]attribute.Key{AttrCostUSD}, ""},
	"cost.table":                     {[]attribute.Key{AttrCostTable}, ""},
	"truncated":                      {[]attribute.Key{AttrTruncated}, ""},
	"trace_inferred":                 {[]attribute.Key{AttrTraceInferred}, ""},
	"user_id":                        {[]attribute.Key{semconv.UserIDKey}, ""},
	"tags":                           {[]attribute.Key{AttrTags}, ""},
	"metadata":                       {[]attribute.Key{MetadataPrefix + "tenant", MetadataPrefix + "experiment"}, ""},
	"history_guidance":               {[]attribute.Key{AttrHistoryGuidance}, ""},
	"history_record_appended":        {[]attribute.Key{AttrHistoryRecordAppended}, ""},
	"conversation_history_size":      {[]attribute.Key{AttrConversationHistorySize}, ""},
	"history_access_detected":        {[]attribute.Key{AttrHistoryAccessDetected}, ""},
	"history_query_patterns":         {[]attribute.Key{AttrHistoryQueryPatterns}, ""},
}

var notExported = map[string]string{
	"outcome_summary.ok": "the span status says it (Error when not ok)",
	"usage.total_tokens": "input + output: the conventions have no total, and a sum is not a fact of its own",
	"version":            "the JSON format's version, not a fact about the call",
	// A record from a recorder has its Args whole; args_prefix is set only
	// on a record read from a damaged file, whose truncated says "args".
	"args_prefix":         "how a JSONL file stores Args; truncated already says args",
	"args_prefix.call_id": "how a JSONL file stores Args",
	"args_prefix.count":   "how a JSONL file stores Args",
	"args_prefix.crc32c":  "how a JSONL file stores Args",
}

func fieldPaths(prefix string, fs []record.Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, prefix+f.Name)
		out = append(out, fieldPaths(prefix+f.Name+".", f.Fields)...)
	}
	return out
}

func TestEveryFieldIsMapped(t *testing.T) {
	paths := fieldPaths("", record.Fields())
	for _, p := range paths {
		_, m := mapped[p]
		_, n := notExported[p]
		assert.True(t, m != n, "field %q must be either mapped or listed as not exported, once", p)
	}
	for p := range mapped {
		assert.Contains(t, paths, p, "mapped lists %q, which record.Fields does not have", p)
	}
	for p := range notExported {
		assert.Contains(t, paths, p, "notExported lists %q, which record.Fields does not have", p)
	}

	// The mapping is real: a record with every field set, content on,
	// carries every attribute the list promises.
	b, err := os.ReadFile(filepath.Join("..", "testdata", "records", "record_full.golden.json"))
	require.NoError(t, err)
	var full record.Record
	require.NoError(t, json.Unmarshal(b, &full))
	full.ErrorType, full.Outcome.ErrorType = record.ErrorRateLimit, record.ErrorRateLimit // a failed call for error.type
	full.Outcome.OK, full.Outcome.Status = false, record.StatusError
	// A system prompt given apart, as the Responses API's instructions.
	full.Args = json.RawMessage(`[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`)
	s, exp, _ := testSink(t, Options{Content: ContentOn})
	got := attrMap(spansOf(t, s, exp, full)[0].Attributes)
	for p, m := range mapped {
		for _, k := range m.attrs {
			assert.Contains(t, got, string(k), "field %s", p)
		}
	}
}

// conventionKeys are the attribute names of semconv v1.41.0 this package
// may use; every other name must carry the llmhistory. prefix.
var conventionKeys = []attribute.Key{
	semconv.GenAIOperationNameKey, semconv.GenAIProviderNameKey, semconv.OpenAIAPITypeKey,
	semconv.GenAIRequestModelKey, semconv.GenAIRequestTemperatureKey, semconv.GenAIRequestTopPKey,
	semconv.GenAIRequestTopKKey, semconv.GenAIRequestMaxTokensKey, semconv.GenAIRequestFrequencyPenaltyKey,
	semconv.GenAIRequestPresencePenaltyKey, semconv.GenAIRequestSeedKey, semconv.GenAIRequestStopSequencesKey,
	semconv.GenAIRequestChoiceCountKey, semconv.GenAIRequestEncodingFormatsKey, semconv.GenAIRequestStreamKey,
	semconv.GenAIOutputTypeKey, semconv.OpenAIRequestServiceTierKey, semconv.ServerAddressKey, semconv.ServerPortKey,
	semconv.OpenAIResponseServiceTierKey, semconv.OpenAIResponseSystemFingerprintKey,
	semconv.GenAIEmbeddingsDimensionCountKey,
	semconv.GenAIConversationIDKey, semconv.GenAIResponseModelKey, semconv.GenAIResponseIDKey,
	semconv.GenAIResponseFinishReasonsKey, semconv.GenAIResponseTimeToFirstChunkKey,
	semconv.HTTPResponseStatusCodeKey, semconv.HTTPRequestResendCountKey, semconv.ErrorTypeKey,
	semconv.GenAIUsageInputTokensKey, semconv.GenAIUsageOutputTokensKey, semconv.GenAIUsageCacheReadInputTokensKey,
	semconv.GenAIUsageCacheCreationInputTokensKey, semconv.GenAIUsageReasoningOutputTokensKey,
	semconv.GenAISystemInstructionsKey, semconv.GenAIInputMessagesKey, semconv.GenAIOutputMessagesKey,
	semconv.GenAITokenTypeKey, semconv.SessionIDKey, semconv.UserIDKey,
}

func checkNames(t *testing.T, what string, kvs []attribute.KeyValue) {
	t.Helper()
	for _, kv := range kvs {
		if strings.HasPrefix(string(kv.Key), Prefix) {
			continue
		}
		assert.Contains(t, conventionKeys, kv.Key, "%s: attribute %q is neither a convention nor ours", what, kv.Key)
	}
}

// Every attribute name on spans and metrics is a semconv constant or
// carries our prefix, and the metrics are the conventions' instruments.
func TestAttributeNamesAreConventions(t *testing.T) {
	s, exp, reader := testSink(t, Options{Content: ContentOn, ServerAddress: func(record.Record) string { return "h" }})
	failed := chatRecord()
	failed.Outcome = record.Failure(record.ErrorRateLimit)
	gemini := chatRecord()
	gemini.MethodName, gemini.Kwargs = "gemini.models.streamGenerateContent", json.RawMessage(`{"model":"gemini-2.5-flash","topK":40,"candidateCount":2,"stopSequences":["x"]}`)
	embed := chatRecord()
	embed.MethodName, embed.Kwargs = "openai.embeddings.create", json.RawMessage(`{"model":"text-embedding-3-small","encoding_format":"float"}`)
	for _, sp := range spansOf(t, s, exp, chatRecord(), failed, gemini, embed) {
		checkNames(t, "span "+sp.Name, sp.Attributes)
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	var names []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		names = append(names, m.Name)
		switch d := m.Data.(type) {
		case metricdata.Histogram[float64]:
			for _, dp := range d.DataPoints {
				checkNames(t, m.Name, dp.Attributes.ToSlice())
			}
		case metricdata.Histogram[int64]:
			for _, dp := range d.DataPoints {
				checkNames(t, m.Name, dp.Attributes.ToSlice())
			}
		default:
			t.Errorf("metric %s is a %T, not a histogram", m.Name, m.Data)
		}
	}
	assert.ElementsMatch(t, []string{
		genaiconv.ClientOperationDuration{}.Name(),
		genaiconv.ClientTokenUsage{}.Name(),
		genaiconv.ClientOperationTimeToFirstChunk{}.Name(),
	}, names)
}

// The request parameters, in each provider's spelling.
func TestKwargs(t *testing.T) {
	for _, tc := range []struct {
		name, kwargs string
		want         []attribute.KeyValue
	}{
		{"openai", `{"model":"m","temperature":1,"max_tokens":5,"top_p":0.5,"stop":"END","n":2,"seed":3,"frequency_penalty":0.1,"presence_penalty":0.2}`,
			[]attribute.KeyValue{semconv.GenAIRequestTemperature(1), semconv.GenAIRequestMaxTokens(5), semconv.GenAIRequestTopP(0.5),
				semconv.GenAIRequestStopSequences("END"), semconv.GenAIRequestChoiceCount(2), semconv.GenAIRequestSeed(3),
				semconv.GenAIRequestFrequencyPenalty(0.1), semconv.GenAIRequestPresencePenalty(0.2)}},
		{"openai responses", `{"model":"m","max_output_tokens":9}`, []attribute.KeyValue{semconv.GenAIRequestMaxTokens(9)}},
		{"gemini", `{"model":"m","temperature":0.3,"topP":0.8,"topK":40,"maxOutputTokens":100,"candidateCount":1,"stopSequences":["a","b"],"presencePenalty":0.5,"frequencyPenalty":0.6,"seed":1}`,
			[]attribute.KeyValue{semconv.GenAIRequestTemperature(0.3), semconv.GenAIRequestTopP(0.8), semconv.GenAIRequestTopK(40),
				semconv.GenAIRequestMaxTokens(100), semconv.GenAIRequestChoiceCount(1), semconv.GenAIRequestStopSequences("a", "b"),
				semconv.GenAIRequestPresencePenalty(0.5), semconv.GenAIRequestFrequencyPenalty(0.6), semconv.GenAIRequestSeed(1)}},
		{"gemini snake case", `{"model":"m","top_k":3,"candidate_count":2}`,
			[]attribute.KeyValue{semconv.GenAIRequestTopK(3), semconv.GenAIRequestChoiceCount(2)}},
		{"anthropic", `{"model":"m","max_tokens":1024,"top_k":5,"stop_sequences":["\n\nHuman:"]}`,
			[]attribute.KeyValue{semconv.GenAIRequestMaxTokens(1024), semconv.GenAIRequestTopK(5), semconv.GenAIRequestStopSequences("\n\nHuman:")}},
		{"bedrock converse", `{"model":"m","inferenceConfig":{"maxTokens":512,"temperature":0.2,"topP":0.9,"stopSequences":["END"]}}`,
			[]attribute.KeyValue{semconv.GenAIRequestMaxTokens(512), semconv.GenAIRequestTemperature(0.2), semconv.GenAIRequestTopP(0.9), semconv.GenAIRequestStopSequences("END")}},
		{"ollama", `{"model":"m","options":{"num_predict":50,"temperature":0,"top_k":40,"seed":7,"stop":["END"]}}`,
			[]attribute.KeyValue{semconv.GenAIRequestMaxTokens(50), semconv.GenAIRequestTemperature(0), semconv.GenAIRequestTopK(40), semconv.GenAIRequestSeed(7), semconv.GenAIRequestStopSequences("END")}},
		{"embeddings", `{"model":"m","encoding_format":"base64"}`, []attribute.KeyValue{semconv.GenAIRequestEncodingFormats("base64")}},
		{"first spelling wins", `{"max_tokens":1,"max_completion_tokens":2}`, []attribute.KeyValue{semconv.GenAIRequestMaxTokens(1)}},
		{"wrong types are left out", `{"temperature":"hot","seed":null,"stop":[1,2]}`, nil},
		{"not an object", `[1]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := readKwargs([]byte(tc.kwargs))
			assert.Equal(t, tc.want, q.params)
		})
	}
}

func TestOperationAndProvider(t *testing.T) {
	for _, tc := range []struct{ method, op, provider string }{
		{"openai.chat.completions.create", "chat", "openai"},
		{"openai.responses.create", "chat", "openai"},
		{"openai.completions.create", "text_completion", "openai"},
		{"openai.embeddings.create", "embeddings", "openai"},
		{"gemini.models.generateContent", "generate_content", "gcp.gen_ai"},
		{"gemini.models.streamGenerateContent", "generate_content", "gcp.gen_ai"},
		{"gemini.models.embedContent", "embeddings", "gcp.gen_ai"},
		{"gemini.models.batchEmbedContents", "embeddings", "gcp.gen_ai"},
		{"gemini.models.countTokens", "count_tokens", "gcp.gen_ai"},
		{"anthropic.messages.create", "chat", "anthropic"},
		{"anthropic.messages.count_tokens", "count_tokens", "anthropic"},
		// The generic provider: no path in the operation, and the
		// required provider name is the fallback.
		{"http.POST /v1/rerank", "http.POST", "_OTHER"},
		{"http.GET /v1/models/gpt-4o?x=1", "http.GET", "_OTHER"},
		{"bedrock.converse", "chat", "aws.bedrock"},
		{"bedrock.converse_stream", "chat", "aws.bedrock"},
		{"bedrock.invoke_model", "generate_content", "aws.bedrock"},
		{"bedrock.invoke_model_with_response_stream", "generate_content", "aws.bedrock"},
		{"ollama.chat", "chat", "ollama"},
		{"ollama.generate", "text_completion", "ollama"},
		{"ollama.embed", "embeddings", "ollama"},
		// Providers of your own: their method names, their names, or the
		// conventions' when it is a well-known one.
		{"ollama.pull", "ollama.pull", "ollama"},
		{"mistral.chat.complete", "mistral.chat.complete", "mistral_ai"},
		{"", "_OTHER", "_OTHER"},
	} {
		op, _ := operation(tc.method)
		assert.Equal(t, tc.op, op, tc.method)
		assert.Equal(t, tc.provider, provider(tc.method), tc.method)
	}
}

// IDs follow the record: a W3C trace_id is the trace ID, another is
// hashed, a child's parent is its parent call's span.
func TestIDs(t *testing.T) {
	s, exp, _ := testSink(t, Options{})
	root := record.Record{CallID: "root", TraceID: "conversation-7", Timestamp: "2026-11-21T09:30:00Z", Speaker: "user", MethodName: "m", Outcome: record.Success("x")}
	child := root
	child.CallID, child.ParentCallID = "child", "root"
	grandchild := root
	grandchild.CallID, grandchild.ParentCallID = "grandchild", "child"
	w3c := root
	w3c.CallID, w3c.TraceID = "w3c", "4bf92f3577b34da6a3ce929d0e0e4736"
	untraced := root
	untraced.CallID, untraced.TraceID = "u-root", ""
	untracedChild := untraced
	untracedChild.CallID, untracedChild.ParentCallID = "u-child", "u-root"

	// Children arrive before their parents, as records do.
	spans := spansOf(t, s, exp, grandchild, child, root, w3c, untracedChild, untraced)
	byID := map[string]tracetest.SpanStub{}
	for _, sp := range spans {
		byID[attrMap(sp.Attributes)["llmhistory.call_id"].(string)] = sp
	}
	rootSC := byID["root"].SpanContext
	assert.False(t, byID["root"].Parent.IsValid(), "the root has no parent")
	assert.Equal(t, rootSC.SpanID(), byID["child"].Parent.SpanID())
	assert.Equal(t, byID["child"].SpanContext.SpanID(), byID["grandchild"].Parent.SpanID())
	for _, id := range []string{"child", "grandchild"} {
		assert.Equal(t, rootSC.TraceID(), byID[id].SpanContext.TraceID(), id)
		assert.Equal(t, rootSC.TraceID(), byID[id].Parent.TraceID(), id)
	}
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", byID["w3c"].SpanContext.TraceID().String())
	assert.NotEqual(t, rootSC.TraceID(), byID["u-root"].SpanContext.TraceID())
	assert.Equal(t, byID["u-root"].SpanContext.TraceID(), byID["u-child"].SpanContext.TraceID(), "an untraced child takes its parent's trace")
	assert.Equal(t, byID["u-root"].SpanContext.SpanID(), byID["u-child"].Parent.SpanID())

	// The same records exported again get the same IDs.
	exp.Reset()
	again := spansOf(t, s, exp, root)
	assert.Equal(t, rootSC, again[0].SpanContext)
}

// The caller's span, when the context has one, is the parent of a
// top-level call, and its trace the trace; the conversation id still
// says trace_id. A nested call is the child of its parent call's span,
// in the caller's trace: not a sibling under the caller's span.
func TestCallerSpanIsParent(t *testing.T) {
	s, exp, _ := testSink(t, Options{})
	caller := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), caller)
	nested := chatRecord() // has a parent_call_id and a W3C trace_id of its own
	top := chatRecord()
	top.CallID, top.ParentCallID = nested.ParentCallID, ""
	cancelable, cancel := context.WithCancel(ctx)
	require.NoError(t, s.Append(cancelable, nested)) // the child first, as records often come
	require.NoError(t, s.Append(cancelable, top))
	cancel() // the record outlives the call's context
	require.NoError(t, s.Flush())
	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	child, parent := spans[0], spans[1]
	assert.Equal(t, caller.TraceID(), parent.SpanContext.TraceID())
	assert.Equal(t, caller.SpanID(), parent.Parent.SpanID(), "a top-level call is under the caller's span")
	assert.Equal(t, spanID(top.CallID), parent.SpanContext.SpanID())
	assert.Equal(t, caller.TraceID(), child.SpanContext.TraceID())
	assert.Equal(t, parent.SpanContext.SpanID(), child.Parent.SpanID(), "a nested call is under its parent call")
	assert.Equal(t, spanID(nested.CallID), child.SpanContext.SpanID())
	assert.Equal(t, nested.TraceID, attrMap(child.Attributes)["gen_ai.conversation.id"])
}

func TestMetrics(t *testing.T) {
	s, _, reader := testSink(t, Options{})
	ok := chatRecord() // streamed: has a time to first chunk
	failed := chatRecord()
	failed.CallID, failed.Outcome, failed.Usage, failed.TimeToFirstChunkMS = "f", record.Failure(record.ErrorServer), nil, 0
	failed.DurationMS = 2000
	for _, r := range []record.Record{ok, ok, failed} {
		require.NoError(t, s.Append(context.Background(), r))
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := map[string]metricdata.Aggregation{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		got[m.Name] = m.Data
	}
	common := []attribute.KeyValue{
		semconv.GenAIOperationNameChat, semconv.GenAIProviderNameOpenAI,
		semconv.GenAIRequestModel("gpt-4o-mini"), semconv.GenAIResponseModel("gpt-4o-mini-2024-07-18"),
	}
	dur := got["gen_ai.client.operation.duration"].(metricdata.Histogram[float64])
	byErr := map[string]metricdata.HistogramDataPoint[float64]{}
	for _, dp := range dur.DataPoints {
		v, _ := dp.Attributes.Value(semconv.ErrorTypeKey)
		byErr[v.AsString()] = dp
	}
	require.Len(t, byErr, 2)
	assert.Equal(t, uint64(2), byErr[""].Count)
	assert.InDelta(t, 2*0.81225, byErr[""].Sum, 1e-9)
	assert.Equal(t, attribute.NewSet(common...), byErr[""].Attributes)
	assert.Equal(t, uint64(1), byErr["server"].Count)
	assert.InDelta(t, 2.0, byErr["server"].Sum, 1e-9)
	assert.Equal(t, durationBuckets, byErr[""].Bounds)

	tokens := got["gen_ai.client.token.usage"].(metricdata.Histogram[int64])
	byType := map[string]metricdata.HistogramDataPoint[int64]{}
	for _, dp := range tokens.DataPoints {
		v, _ := dp.Attributes.Value(semconv.GenAITokenTypeKey)
		byType[v.AsString()] = dp
	}
	require.Len(t, byType, 2)
	assert.Equal(t, int64(240), byType["input"].Sum)
	assert.Equal(t, int64(96), byType["output"].Sum)
	assert.Equal(t, uint64(2), byType["output"].Count, "a call without usage records no tokens")
	assert.Equal(t, tokenBuckets, byType["input"].Bounds)

	ttfc := got["gen_ai.client.operation.time_to_first_chunk"].(metricdata.Histogram[float64])
	require.Len(t, ttfc.DataPoints, 1)
	assert.Equal(t, uint64(2), ttfc.DataPoints[0].Count)
	assert.InDelta(t, 2*0.1405, ttfc.DataPoints[0].Sum, 1e-9)
}

// A service tier or fingerprint in a record of another provider than
// OpenAI is not put under openai.*: it goes under llmhistory.
func TestServiceTierOfAnotherProvider(t *testing.T) {
	s, exp, _ := testSink(t, Options{})
	r := chatRecord()
	r.MethodName, r.Kwargs = "anthropic.messages.create", json.RawMessage(`{"model":"claude-sonnet-4-5"}`)
	r.ServiceTier, r.SystemFingerprint = "standard", "fp_x"
	a := attrMap(spansOf(t, s, exp, r)[0].Attributes)
	assert.Equal(t, "standard", a[string(AttrServiceTier)])
	assert.Equal(t, "fp_x", a[string(AttrSystemFingerprint)])
	assert.NotContains(t, a, string(semconv.OpenAIResponseServiceTierKey))
	assert.NotContains(t, a, string(semconv.OpenAIResponseSystemFingerprintKey))

	s, exp, _ = testSink(t, Options{})
	r = chatRecord()
	r.ServiceTier = "priority"
	a = attrMap(spansOf(t, s, exp, r)[0].Attributes)
	assert.Equal(t, "priority", a[string(semconv.OpenAIResponseServiceTierKey)])
	assert.NotContains(t, a, string(AttrServiceTier))
}

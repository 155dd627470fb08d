package otelsink

import (
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/providers"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// Prefix starts the name of every attribute this package sets for a field
// of the record that has no GenAI convention.
const Prefix = "llmhistory."

// The attributes of the record's fields that have no convention.
const (
	AttrCallID                  = attribute.Key(Prefix + "call_id")
	AttrParentCallID            = attribute.Key(Prefix + "parent_call_id")
	AttrSpeaker                 = attribute.Key(Prefix + "speaker")
	AttrMethodName              = attribute.Key(Prefix + "method_name")
	AttrDepth                   = attribute.Key(Prefix + "depth")
	AttrStatus                  = attribute.Key(Prefix + "outcome.status")
	AttrRetriable               = attribute.Key(Prefix + "outcome.retriable")
	AttrValueClass              = attribute.Key(Prefix + "outcome.value_class")
	AttrAttempts                = attribute.Key(Prefix + "attempts")
	AttrHops                    = attribute.Key(Prefix + "hops")
	AttrArtifactHit             = attribute.Key(Prefix + "artifact_hit")
	AttrCacheWrite1hTokens      = attribute.Key(Prefix + "usage.cache_write_1h_tokens")
	AttrCostUSD                 = attribute.Key(Prefix + "cost.usd")
	AttrCostTable               = attribute.Key(Prefix + "cost.table")
	AttrTruncated               = attribute.Key(Prefix + "truncated")
	AttrHistoryGuidance         = attribute.Key(Prefix + "history_guidance")
	AttrHistoryRecordAppended   = attribute.Key(Prefix + "history_record_appended")
	AttrConversationHistorySize = attribute.Key(Prefix + "conversation_history_size")
	AttrHistoryAccessDetected   = attribute.Key(Prefix + "history_access_detected")
	AttrHistoryQueryPatterns    = attribute.Key(Prefix + "history_query_patterns")
	AttrTraceInferred           = attribute.Key(Prefix + "trace_inferred")
	AttrTags                    = attribute.Key(Prefix + "tags")
	// AttrProgramSource is content: set only when content is captured.
	AttrProgramSource = attribute.Key(Prefix + "program_source")
	// AttrContentTruncated names the content attributes whose earliest
	// messages were left out to fit [Options.MaxContentBytes].
	AttrContentTruncated = attribute.Key(Prefix + "content_truncated")
	// AttrFinishReason is the provider's own finish reason ("end_turn",
	// "STOP", "tool_calls"), set when the conventions' value in
	// gen_ai.response.finish_reasons differs from it.
	AttrFinishReason = attribute.Key(Prefix + "outcome.finish_reason")
	// AttrServiceTier and AttrSystemFingerprint carry a record's
	// service_tier and system_fingerprint when its provider is not
	// OpenAI, whose are openai.response.service_tier and
	// openai.response.system_fingerprint.
	AttrServiceTier       = attribute.Key(Prefix + "service_tier")
	AttrSystemFingerprint = attribute.Key(Prefix + "system_fingerprint")
)

// MetadataPrefix starts the attribute of each metadata key of a record:
// metadata tenant=acme is the attribute llmhistory.metadata.tenant.
const MetadataPrefix = Prefix + "metadata."

// Operation names the GenAI conventions do not list. A token count spends
// no tokens; the conventions leave such operations to the provider's name
// for them.
const opCountTokens = "count_tokens"

// operation returns the gen_ai.operation.name of a record's method and,
// for OpenAI, its openai.api.type. A method no built-in provider knows
// keeps its own name, which a provider of your own makes from a fixed set
// (saying "chat" for it would be a guess); the generic provider's
// "http.POST /v1/rerank" becomes "http.POST": the path would put every
// URL into span names and metric attributes, whose values must stay few.
func operation(method string) (op string, apiType attribute.KeyValue) {
	switch method {
	case "openai.chat.completions.create":
		return semconv.GenAIOperationNameChat.Value.AsString(), semconv.OpenAIAPITypeChatCompletions
	case "openai.responses.create":
		return semconv.GenAIOperationNameChat.Value.AsString(), semconv.OpenAIAPITypeResponses
	case "openai.completions.create":
		return semconv.GenAIOperationNameTextCompletion.Value.AsString(), attribute.KeyValue{}
	case "openai.embeddings.create", "gemini.models.embedContent", "gemini.models.batchEmbedContents":
		return opEmbeddings, attribute.KeyValue{}
	case "gemini.models.generateContent", "gemini.models.streamGenerateContent":
		return semconv.GenAIOperationNameGenerateContent.Value.AsString(), attribute.KeyValue{}
	case "anthropic.messages.create", "bedrock.converse", "bedrock.converse_stream", "ollama.chat":
		return semconv.GenAIOperationNameChat.Value.AsString(), attribute.KeyValue{}
	case "bedrock.invoke_model", "bedrock.invoke_model_with_response_stream":
		// A body in the model family's own shape: chat for some, a prompt
		// for others, embeddings for a few; the method does not say which.
		return semconv.GenAIOperationNameGenerateContent.Value.AsString(), attribute.KeyValue{}
	case "ollama.generate":
		return semconv.GenAIOperationNameTextCompletion.Value.AsString(), attribute.KeyValue{}
	case "ollama.embed":
		return opEmbeddings, attribute.KeyValue{}
	case "gemini.models.countTokens", "anthropic.messages.count_tokens":
		return opCountTokens, attribute.KeyValue{}
	}
	if i := strings.IndexAny(method, " /?"); i >= 0 {
		method = method[:i]
	}
	if method == "" {
		method = opOther
	}
	return method, attribute.KeyValue{}
}

var (
	opEmbeddings   = semconv.GenAIOperationNameEmbeddings.Value.AsString()
	providerOpenAI = semconv.GenAIProviderNameOpenAI.Value.AsString()
)

// ProviderOther is the gen_ai.provider.name of a call no provider
// recognized (the generic provider's "http.POST /path"). The conventions
// list well-known values and allow others but name no fallback; "_OTHER"
// is the one OpenTelemetry uses wherever a value is outside a known set
// (error.type, http.request.method).
const ProviderOther = "_OTHER"

// opOther is the operation of a record without a method name.
const opOther = "_OTHER"

// providerNames maps the first segment of a method name onto the
// conventions' well-known gen_ai.provider.name. The Gemini parser reads
// the Gemini API and Vertex AI alike, and a record does not say which it
// was: gcp.gen_ai is the conventions' name for "any Google generative AI
// endpoint". The other entries are for providers of your own, whose
// method names start with a provider's usual name.
var providerNames = map[string]string{
	"openai":     semconv.GenAIProviderNameOpenAI.Value.AsString(),
	"gemini":     semconv.GenAIProviderNameGCPGenAI.Value.AsString(),
	"anthropic":  semconv.GenAIProviderNameAnthropic.Value.AsString(),
	"bedrock":    semconv.GenAIProviderNameAWSBedrock.Value.AsString(),
	"ollama":     "ollama", // the conventions list no name for it: its own
	"mistral":    semconv.GenAIProviderNameMistralAI.Value.AsString(),
	"xai":        semconv.GenAIProviderNameXAI.Value.AsString(),
	"vertexai":   semconv.GenAIProviderNameGCPVertexAI.Value.AsString(),
	"cohere":     semconv.GenAIProviderNameCohere.Value.AsString(),
	"deepseek":   semconv.GenAIProviderNameDeepseek.Value.AsString(),
	"groq":       semconv.GenAIProviderNameGroq.Value.AsString(),
	"perplexity": semconv.GenAIProviderNamePerplexity.Value.AsString(),
}

// provider returns the gen_ai.provider.name of a record's method, which
// the conventions require: the well-known name of the record's provider
// (record.ProviderOf), a provider of your own's name, or ProviderOther for
// an endpoint nobody recognized (the generic provider's http) and a
// method that names no provider.
func provider(method string) string {
	name := record.ProviderOf(method)
	if known, ok := providerNames[name]; ok {
		return known
	}
	if name == "" || name == "http" || strings.ContainsAny(name, " /?") {
		return ProviderOther
	}
	return name
}

// responseFinishReason is the finish reason of r's response on the
// conventions' values (see providers.FinishReason). A response that called tools
// and says it stopped is tool_call: Gemini ends a function call with
// STOP, and a Responses API status says completed. A record has its tool
// calls when its recorder kept the answer (unless middleware.WithoutOutput).
func responseFinishReason(r *record.Record) string {
	mapped := providers.FinishReason(r.Outcome.FinishReason)
	if r.Output.Has(record.PartToolCall) && (mapped == "stop" || mapped == "" && r.Outcome.OK) {
		return "tool_call"
	}
	return mapped
}

// request is what the attributes need from a record's kwargs, read in one
// pass.
type request struct {
	model       string
	stream      bool
	serviceTier string
	outputType  string
	dimensions  int // requested embedding dimensions; 0: not asked
	params      []attribute.KeyValue
}

// readKwargs reads the request parameters the GenAI conventions name.
// Each provider spells them its own way (OpenAI max_tokens, Gemini's
// generationConfig maxOutputTokens, ...); the providers keep them as sent.
func readKwargs(kw []byte) request {
	var q request
	if len(kw) == 0 || kw[0] != '{' {
		return q
	}
	add := func(kv attribute.KeyValue) {
		for _, p := range q.params {
			if p.Key == kv.Key {
				return // the first spelling wins
			}
		}
		q.params = append(q.params, kv)
	}
	var read func(k, v gjson.Result) bool
	read = func(k, v gjson.Result) bool {
		switch k.String() {
		case "inferenceConfig", "options":
			// Bedrock Converse's and Ollama's parameters, one level down.
			if v.IsObject() {
				v.ForEach(read)
			}
		case "model":
			if v.Type == gjson.String {
				q.model = v.String()
			}
		case "stream":
			q.stream = v.Type == gjson.True
		case "temperature":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestTemperature(v.Float()))
			}
		case "top_p", "topP":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestTopP(v.Float()))
			}
		case "top_k", "topK":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestTopK(v.Float()))
			}
		case "max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens", "maxTokens", "num_predict", "max_gen_len":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestMaxTokens(int(v.Int())))
			}
		case "frequency_penalty", "frequencyPenalty":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestFrequencyPenalty(v.Float()))
			}
		case "presence_penalty", "presencePenalty":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestPresencePenalty(v.Float()))
			}
		case "seed":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestSeed(int(v.Int())))
			}
		case "n", "candidateCount", "candidate_count":
			if v.Type == gjson.Number {
				add(semconv.GenAIRequestChoiceCount(int(v.Int())))
			}
		case "stop", "stop_sequences", "stopSequences":
			if s := stringList(v); len(s) > 0 {
				add(semconv.GenAIRequestStopSequences(s...))
			}
		case "encoding_format":
			if v.Type == gjson.String {
				add(semconv.GenAIRequestEncodingFormats(v.String()))
			}
		case "dimensions", "outputDimensionality", "output_dimensionality":
			if v.Type == gjson.Number && v.Int() > 0 && q.dimensions == 0 {
				q.dimensions = int(v.Int())
			}
		case "service_tier":
			if v.Type == gjson.String {
				q.serviceTier = v.String()
			}
		case "response_format":
			// Kept by the OpenAI provider as its type.
			switch t := v.String(); {
			case v.IsObject():
				q.outputType = outputType(v.Get("type").String())
			default:
				q.outputType = outputType(t)
			}
		case "responseMimeType", "response_mime_type":
			switch v.String() {
			case "application/json":
				q.outputType = semconv.GenAIOutputTypeJSON.Value.AsString()
			case "text/plain":
				q.outputType = semconv.GenAIOutputTypeText.Value.AsString()
			}
		}
		return true
	}
	gjson.ParseBytes(kw).ForEach(read)
	return q
}

func outputType(responseFormat string) string {
	switch responseFormat {
	case "json_object", "json_schema":
		return semconv.GenAIOutputTypeJSON.Value.AsString()
	case "text":
		return semconv.GenAIOutputTypeText.Value.AsString()
	}
	return ""
}

// stringList reads a string or an array of strings.
func stringList(v gjson.Result) []string {
	if v.Type == gjson.String {
		return []string{v.String()}
	}
	var out []string
	if v.IsArray() {
		v.ForEach(func(_, e gjson.Result) bool {
			if e.Type == gjson.String {
				out = append(out, e.String())
			}
			return true
		})
	}
	return out
}

// names is what a span and the metrics share about a record.
type names struct {
	op, provider                string
	requestModel, responseModel string
	errorType                   string
	server                      server
}

// sampling appends the attributes the span and the metrics share, which
// the conventions also ask for at the span's start, for samplers:
// operation, provider, request model, server address and port.
func (n names) sampling(dst []attribute.KeyValue) []attribute.KeyValue {
	dst = append(dst, semconv.GenAIOperationNameKey.String(n.op), semconv.GenAIProviderNameKey.String(n.provider))
	if n.requestModel != "" {
		dst = append(dst, semconv.GenAIRequestModel(n.requestModel))
	}
	return n.server.append(dst)
}

func (sv server) append(dst []attribute.KeyValue) []attribute.KeyValue {
	if sv.host == "" {
		return dst
	}
	dst = append(dst, semconv.ServerAddress(sv.host))
	if sv.port > 0 {
		dst = append(dst, semconv.ServerPort(sv.port))
	}
	return dst
}

// responseModel is the model that answered. A record's model is the
// response's when there was one and the request's otherwise, so a failed
// call whose model is the one asked for says nothing about a response.
func responseModel(r *record.Record, requestModel string) string {
	if r.Outcome.OK || r.Model != requestModel {
		return r.Model
	}
	return ""
}

// spanName is "{gen_ai.operation.name} {gen_ai.request.model}", the
// model being the response's when the request did not name one.
func (n names) spanName() string {
	m := n.requestModel
	if m == "" {
		m = n.responseModel
	}
	if m == "" {
		return n.op
	}
	return n.op + " " + m
}

// errorType is the error.type of a failed call: the taxonomy's type
// (rate_limit, auth, ...), which is low in cardinality as the convention
// asks.
func errorType(r *record.Record) string {
	if r.Outcome.OK {
		return ""
	}
	if t := r.FailureType(); t != "" {
		return t
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// attributes appends the span attributes of r to dst. Content
// (messages, system instructions, output, program source) is added by
// the caller when it is captured.
func (s *Sink) attributes(r *record.Record, q *request, n names, dst []attribute.KeyValue) []attribute.KeyValue {
	_, apiType := operation(r.MethodName)
	a := dst
	if apiType.Valid() {
		a = append(a, apiType)
	}
	a = append(a, q.params...)
	embeddings := n.op == opEmbeddings
	if embeddings {
		if d := q.dimensions; d > 0 {
			a = append(a, semconv.GenAIEmbeddingsDimensionCount(d))
		}
	}
	if q.stream || r.MethodName == "gemini.models.streamGenerateContent" {
		a = append(a, semconv.GenAIRequestStream(true))
	}
	if q.serviceTier != "" {
		a = append(a, semconv.OpenAIRequestServiceTierKey.String(q.serviceTier))
	}
	if q.outputType != "" {
		a = append(a, semconv.GenAIOutputTypeKey.String(q.outputType))
	}
	if r.TraceID != "" {
		// The conversation, under both names: session.id is what
		// Langfuse and others group sessions by.
		a = append(a, semconv.GenAIConversationID(r.TraceID), semconv.SessionID(r.TraceID))
	}
	if r.TraceInferred {
		a = append(a, AttrTraceInferred.Bool(true))
	}
	if r.UserID != "" {
		a = append(a, semconv.UserID(r.UserID))
	}
	if len(r.Tags) > 0 {
		a = append(a, AttrTags.StringSlice(r.Tags))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Metadata)) {
		a = append(a, attribute.String(MetadataPrefix+k, r.Metadata[k]))
	}

	o := &r.Outcome
	if n.responseModel != "" {
		a = append(a, semconv.GenAIResponseModel(n.responseModel))
	}
	if o.ResponseID != "" {
		a = append(a, semconv.GenAIResponseID(o.ResponseID))
	}
	if o.FinishReason != "" {
		mapped := responseFinishReason(r)
		a = append(a, semconv.GenAIResponseFinishReasons(mapped))
		if mapped != o.FinishReason {
			a = append(a, AttrFinishReason.String(o.FinishReason))
		}
	}
	if r.ServiceTier != "" || r.SystemFingerprint != "" {
		tier, fingerprint := AttrServiceTier, AttrSystemFingerprint
		if n.provider == providerOpenAI {
			tier, fingerprint = semconv.OpenAIResponseServiceTierKey, semconv.OpenAIResponseSystemFingerprintKey
		}
		if r.ServiceTier != "" {
			a = append(a, tier.String(r.ServiceTier))
		}
		if r.SystemFingerprint != "" {
			a = append(a, fingerprint.String(r.SystemFingerprint))
		}
	}
	if o.HTTPStatus != 0 {
		a = append(a, semconv.HTTPResponseStatusCode(o.HTTPStatus))
	}
	if n.errorType != "" {
		a = append(a, semconv.ErrorTypeKey.String(n.errorType))
	}
	if r.Attempts > 1 {
		// The convention counts resends: the first attempt is not one.
		// Redirects are counted apart, in llmhistory.hops.
		a = append(a, semconv.HTTPRequestResendCount(r.Attempts-1))
	}
	if r.TimeToFirstChunkMS > 0 {
		a = append(a, semconv.GenAIResponseTimeToFirstChunk(r.TimeToFirstChunkMS/1000))
	}
	if u := r.Usage; u != nil {
		a = append(a, semconv.GenAIUsageInputTokens(u.InputTokens))
		if !embeddings || u.OutputTokens != 0 {
			// An embedding generates no tokens: its span has none to say.
			a = append(a, semconv.GenAIUsageOutputTokens(u.OutputTokens))
		}
		if u.CachedTokens != 0 {
			a = append(a, semconv.GenAIUsageCacheReadInputTokens(u.CachedTokens))
		}
		if u.CacheWriteTokens != 0 {
			a = append(a, semconv.GenAIUsageCacheCreationInputTokens(u.CacheWriteTokens))
		}
		if u.CacheWrite1hTokens != 0 {
			a = append(a, AttrCacheWrite1hTokens.Int(u.CacheWrite1hTokens))
		}
		if u.ReasoningTokens != 0 {
			a = append(a, semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
		}
	}

	// Ours: the record's identity, outcome details and history telemetry.
	a = append(a,
		AttrCallID.String(r.CallID),
		AttrSpeaker.String(r.Speaker),
		AttrMethodName.String(r.MethodName),
		AttrStatus.String(o.Status),
		AttrRetriable.Bool(o.Retriable),
	)
	if r.ParentCallID != "" {
		a = append(a, AttrParentCallID.String(r.ParentCallID))
	}
	if r.Depth != nil {
		a = append(a, AttrDepth.Int(*r.Depth))
	}
	if o.ValueClass != "" {
		a = append(a, AttrValueClass.String(o.ValueClass))
	}
	if r.Attempts != 0 {
		a = append(a, AttrAttempts.Int(r.Attempts))
	}
	if r.Hops != 0 {
		a = append(a, AttrHops.Int(r.Hops))
	}
	if r.ArtifactHit {
		a = append(a, AttrArtifactHit.Bool(true))
	}
	if r.Cost != nil {
		a = append(a, AttrCostUSD.Float64(r.Cost.USD), AttrCostTable.String(r.Cost.Table))
	}
	if len(r.Truncated) > 0 {
		a = append(a, AttrTruncated.StringSlice(r.Truncated))
	}
	if r.HistoryGuidance {
		a = append(a, AttrHistoryGuidance.Bool(true))
	}
	patterns := r.HistoryQueryPatterns
	if patterns == nil {
		patterns = []string{} // every record carries the four fields, "[]" when none
	}
	a = append(a,
		AttrHistoryRecordAppended.Bool(r.HistoryRecordAppended),
		AttrConversationHistorySize.Int(r.ConversationHistorySize),
		AttrHistoryAccessDetected.Bool(r.HistoryAccessDetected),
		AttrHistoryQueryPatterns.StringSlice(patterns),
	)
	return a
}

// statusMessage is the span status description of a failed call: its
// error message, redacted again, since records read from a file may come
// from anywhere.
func statusMessage(r *record.Record) string {
	msg := r.ErrorMessage
	if msg == "" {
		msg = r.FailureType()
	}
	return redact.Secrets(msg)
}

package record

import (
	"context"
	"log/slog"
	"maps"
	"slices"
)

// logAttrsCap is room for a record's attributes: as many as a record has
// logged fields, so that logging one allocates no bigger list.
const logAttrsCap = 32

// LogMessage is the message of every log record the [Slog] sink writes, so
// a pipeline can select history lines by it.
const LogMessage = "llm call"

// LogValue makes a Record log as a group of its identity, outcome, timing,
// usage and history telemetry, with the same keys as its JSON. Args,
// Kwargs, ProgramSource, Output, ToolCalls and Reasoning are left out:
// transcripts do not belong in logs.
func (r Record) LogValue() slog.Value {
	return slog.GroupValue(r.logAttrs(make([]slog.Attr, 0, logAttrsCap))...)
}

func (r Record) logAttrs(a []slog.Attr) []slog.Attr {
	a = append(a, slog.String("call_id", r.CallID), slog.String("timestamp", r.Timestamp))
	if r.TraceID != "" {
		a = append(a, slog.String("trace_id", r.TraceID))
	}
	if r.TraceInferred {
		a = append(a, slog.Bool("trace_inferred", true))
	}
	if r.ParentCallID != "" {
		a = append(a, slog.String("parent_call_id", r.ParentCallID))
	}
	if r.Depth != nil {
		a = append(a, slog.Int("depth", *r.Depth))
	}
	if r.UserID != "" {
		a = append(a, slog.String("user_id", r.UserID))
	}
	if len(r.Tags) > 0 {
		a = append(a, slog.Any("tags", r.Tags))
	}
	if len(r.Metadata) > 0 {
		a = append(a, slog.Attr{Key: "metadata", Value: metadataValue(r.Metadata)})
	}
	a = append(a, slog.String("speaker", r.Speaker), slog.String("method_name", r.MethodName))
	if r.Model != "" {
		a = append(a, slog.String("model", r.Model))
	}
	if r.ServerAddress != "" {
		a = append(a, slog.String("server_address", r.ServerAddress))
	}
	if r.ServerPort != 0 {
		a = append(a, slog.Int("server_port", r.ServerPort))
	}
	if r.ServiceTier != "" {
		a = append(a, slog.String("service_tier", r.ServiceTier))
	}
	if r.SystemFingerprint != "" {
		a = append(a, slog.String("system_fingerprint", r.SystemFingerprint))
	}
	a = append(a, slog.Attr{Key: "outcome_summary", Value: r.Outcome.LogValue()})
	if r.DurationMS != 0 && isFinite(r.DurationMS) {
		a = append(a, slog.Float64("duration_ms", r.DurationMS))
	}
	if r.TimeToFirstChunkMS != 0 && isFinite(r.TimeToFirstChunkMS) {
		a = append(a, slog.Float64("time_to_first_chunk_ms", r.TimeToFirstChunkMS))
	}
	if r.Attempts != 0 {
		a = append(a, slog.Int("attempts", r.Attempts))
	}
	if r.Hops != 0 {
		a = append(a, slog.Int("hops", r.Hops))
	}
	if r.ErrorType != "" {
		a = append(a, slog.String("error_type", r.ErrorType))
	}
	if r.ErrorMessage != "" {
		a = append(a, slog.String("error_message", r.ErrorMessage))
	}
	if r.ArtifactHit {
		a = append(a, slog.Bool("artifact_hit", true))
	}
	if r.Usage != nil {
		a = append(a, slog.Attr{Key: "usage", Value: r.Usage.LogValue()})
	}
	if r.Cost != nil {
		a = append(a, slog.Group("cost", slog.Float64("usd", r.Cost.USD), slog.String("table", r.Cost.Table)))
	}
	if len(r.Truncated) > 0 {
		a = append(a, slog.Any("truncated", r.Truncated))
	}
	if r.HistoryGuidance {
		a = append(a, slog.Bool("history_guidance", true))
	}
	patterns := r.HistoryQueryPatterns
	if patterns == nil {
		patterns = []string{}
	}
	return append(a,
		slog.Bool("history_record_appended", r.HistoryRecordAppended),
		slog.Int("conversation_history_size", r.ConversationHistorySize),
		slog.Bool("history_access_detected", r.HistoryAccessDetected),
		slog.Any("history_query_patterns", patterns),
	)
}

// metadataValue is metadata as a group, its keys sorted as in the JSON.
func metadataValue(m map[string]string) slog.Value {
	keys := slices.Sorted(maps.Keys(m))
	a := make([]slog.Attr, len(keys))
	for i, k := range keys {
		a[i] = slog.String(k, m[k])
	}
	return slog.GroupValue(a...)
}

// LogValue logs an Outcome as a group with the keys of its JSON.
func (o Outcome) LogValue() slog.Value {
	a := make([]slog.Attr, 0, 8)
	a = append(a, slog.String("status", o.Status), slog.Bool("ok", o.OK))
	if o.ErrorType != "" {
		a = append(a, slog.String("error_type", o.ErrorType))
	}
	a = append(a, slog.Bool("retriable", o.Retriable))
	if o.ValueClass != "" {
		a = append(a, slog.String("value_class", o.ValueClass))
	}
	if o.HTTPStatus != 0 {
		a = append(a, slog.Int("http_status", o.HTTPStatus))
	}
	if o.FinishReason != "" {
		a = append(a, slog.String("finish_reason", o.FinishReason))
	}
	if o.ResponseID != "" {
		a = append(a, slog.String("response_id", o.ResponseID))
	}
	return slog.GroupValue(a...)
}

// LogValue logs Usage as a group with the keys of its JSON.
func (u Usage) LogValue() slog.Value {
	a := []slog.Attr{
		slog.Int("input_tokens", u.InputTokens),
		slog.Int("output_tokens", u.OutputTokens),
		slog.Int("total_tokens", u.TotalTokens),
	}
	if u.CachedTokens != 0 {
		a = append(a, slog.Int("cached_tokens", u.CachedTokens))
	}
	if u.CacheWriteTokens != 0 {
		a = append(a, slog.Int("cache_write_tokens", u.CacheWriteTokens))
	}
	if u.CacheWrite1hTokens != 0 {
		a = append(a, slog.Int("cache_write_1h_tokens", u.CacheWrite1hTokens))
	}
	if u.ReasoningTokens != 0 {
		a = append(a, slog.Int("reasoning_tokens", u.ReasoningTokens))
	}
	return slog.GroupValue(a...)
}

// Slog is a sink that writes one log record per history record through a
// [slog.Logger]: message [LogMessage], the record's fields as top-level
// attributes (see [Record.LogValue]), level Info, or Warn when the call
// failed. It works with any handler: [slog.NewJSONHandler] for pipelines,
// github.com/lmittmann/tint for people.
type Slog struct {
	logger *slog.Logger
}

// NewSlog returns a sink logging to l; nil means [slog.Default].
func NewSlog(l *slog.Logger) *Slog {
	if l == nil {
		l = slog.Default()
	}
	return &Slog{logger: l}
}

// Append logs r. Nothing is built when the logger's handler does not want
// the level. r's Args never reach the handler (a recorder lends it records
// whose Args it then reuses).
func (s *Slog) Append(ctx context.Context, r Record) error {
	level := slog.LevelInfo
	if r.Outcome.Status == StatusError {
		level = slog.LevelWarn
	}
	if !s.logger.Enabled(ctx, level) {
		return nil
	}
	var buf [logAttrsCap]slog.Attr
	s.logger.LogAttrs(ctx, level, LogMessage, r.logAttrs(buf[:0])...)
	return nil
}

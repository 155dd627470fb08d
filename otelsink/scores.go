package otelsink

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/store"
)

// EvaluationEvent is the name of the event a score becomes: the GenAI
// conventions' evaluation result (semconv v1.41.0 defines its attributes,
// gen_ai.evaluation.*; the Go package has no constant for the event's
// name).
const EvaluationEvent = "gen_ai.evaluation.result"

// Scores exports scores as the GenAI conventions define evaluation
// results: one log event named [EvaluationEvent] per score, with
// gen_ai.evaluation.name, gen_ai.evaluation.score.value (a number; 1 or 0
// for a boolean), gen_ai.evaluation.score.label (a category's label;
// "true" or "false" for a boolean) and gen_ai.evaluation.explanation (the
// comment), in the trace and under the span that a [Sink] gives the call
// scored. A conversation's score has no span to be under, and OpenTelemetry
// no trace without one: it carries gen_ai.conversation.id. What the conventions do not name goes under "llmhistory.":
// score.source, score.author, call_id; gen_ai.conversation.id is the
// trace.
//
// A call's score needs its trace_id (evaluators in package eval set it)
// to land in its call's trace: without it, the event carries the call_id
// alone. Scores is an eval.ScoreSink and safe for concurrent use.
type Scores struct {
	logger otellog.Logger
}

// NewScores returns an exporter of scores through the logger provider
// (an sdk/log LoggerProvider over otlploghttp, for a Collector).
func NewScores(lp otellog.LoggerProvider) *Scores {
	return &Scores{logger: lp.Logger(ScopeName)}
}

// AddScore emits sc as an evaluation event.
func (s *Scores) AddScore(ctx context.Context, sc store.Score) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	var r otellog.Record
	r.SetEventName(EvaluationEvent)
	r.SetTimestamp(sc.Time)
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(otellog.SeverityInfo)
	attrs := []attribute.KeyValue{semconv.GenAIEvaluationName(sc.Name)}
	if f, ok := sc.Value.Float(); ok {
		attrs = append(attrs, semconv.GenAIEvaluationScoreValue(f))
	}
	if sc.Value.Kind() != store.NumberValue {
		attrs = append(attrs, semconv.GenAIEvaluationScoreLabel(sc.Value.String()))
	}
	if sc.Comment != "" {
		attrs = append(attrs, semconv.GenAIEvaluationExplanation(sc.Comment))
	}
	attrs = append(attrs, attribute.String("llmhistory.score.source", string(sc.Source)))
	if sc.Author != "" {
		attrs = append(attrs, attribute.String("llmhistory.score.author", sc.Author))
	}
	if sc.CallID != "" {
		attrs = append(attrs, AttrCallID.String(sc.CallID))
	}
	if sc.TraceID != "" {
		attrs = append(attrs, semconv.GenAIConversationID(sc.TraceID))
	}
	if sc.TraceID != "" && sc.CallID != "" {
		// The span the Sink gave the call: the event is its child.
		ctx = trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: conversationTrace(sc.TraceID), SpanID: spanID(sc.CallID), TraceFlags: trace.FlagsSampled,
		}))
	}
	r.AddAttributes(attrs...)
	s.logger.Emit(ctx, r)
	return nil
}

package otelsink

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/record"
)

// A record's span gets IDs derived from the record, so that the spans of
// one conversation form its tree whatever order their records arrive in,
// and exporting the same records twice (a file exported again) gives the
// same IDs:
//
//   - the span ID is the first 8 bytes of SHA-256 of call_id, so a child's
//     parent span ID is the same hash of its parent_call_id;
//   - the trace ID is trace_id itself when it is a W3C trace ID (32 hex
//     digits, as the recorder takes from a traceparent header), else the
//     first 16 bytes of SHA-256 of trace_id. A record without a trace_id
//     takes the trace of the top-level call it is nested under (see
//     untracedTrace).

func spanID(callID string) trace.SpanID {
	sum := sha256.Sum256([]byte("llmhistory span " + callID))
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		id[7] = 1 // all zeros is not a span ID
	}
	return id
}

// hashTraceID is the trace ID of a key that is not a W3C trace ID.
func hashTraceID(key string) trace.TraceID {
	sum := sha256.Sum256([]byte("llmhistory " + key))
	var id trace.TraceID
	copy(id[:], sum[:16])
	if !id.IsValid() {
		id[15] = 1
	}
	return id
}

// conversationTrace is the trace of a record that has a trace_id: its
// conversation's.
func conversationTrace(traceID string) trace.TraceID {
	if id, err := trace.TraceIDFromHex(traceID); err == nil {
		return id // TraceIDFromHex refuses the all-zero ID
	}
	return hashTraceID("trace " + traceID)
}

// maxUntraced bounds the calls without a trace_id whose trace the sink
// remembers for the calls nested under them.
const maxUntraced = 4096

// untracedTrace is the trace of a record without a trace_id: that of the
// top-level call it is nested under, so that a chain of nested calls is
// one trace. A top-level call's trace is the hash of its call_id; a
// nested call's is its parent's, which the sink remembers for the last
// calls it saw (the parent's record usually arrives first: it answered
// before the calls its answer started). A parent it has not seen is
// taken for a top-level call, which it is for a call one deep.
func (s *Sink) untracedTrace(r *record.Record) trace.TraceID {
	var id trace.TraceID
	switch known, ok := s.untraced[r.ParentCallID]; {
	case r.ParentCallID == "":
		id = hashTraceID("call " + r.CallID)
	case ok:
		id = known
	default:
		id = hashTraceID("call " + r.ParentCallID)
	}
	if len(s.untraced) >= maxUntraced {
		clear(s.untraced) // forgetting costs only a deep chain's grandchildren
	}
	s.untraced[r.CallID] = id
	return id
}

// placement is where a record's span goes: its trace, its parent (none
// for a root), and whether that parent is the caller's span, whose
// sampling decision the span follows.
type placement struct {
	trace  trace.TraceID
	parent trace.SpanContext
	caller bool
}

// place decides a record's trace and parent.
//
//   - The caller's span (the one the context carried, or the one a
//     traceparent header named, through Middleware) gives the trace. A
//     top-level call is its child; a nested call is the child of its
//     parent call's span, in that trace.
//   - Without one, the conversation is the trace: trace_id's, or, for a
//     call without a trace_id, its top-level call's. A nested call is the
//     child of its parent call's span; a top-level call is a root.
func (s *Sink) place(ctx context.Context, r *record.Record) placement {
	caller := trace.SpanContextFromContext(ctx)
	if !caller.IsValid() {
		if info := requestFrom(ctx); info != nil {
			caller = info.parent
		}
	}
	if caller.IsValid() {
		p := placement{trace: caller.TraceID(), parent: caller, caller: true}
		if r.ParentCallID != "" {
			p.parent = trace.NewSpanContext(trace.SpanContextConfig{
				TraceID:    caller.TraceID(),
				SpanID:     spanID(r.ParentCallID),
				TraceFlags: caller.TraceFlags(),
				TraceState: caller.TraceState(),
				Remote:     true,
			})
		}
		return p
	}
	var p placement
	if r.TraceID != "" {
		p.trace = conversationTrace(r.TraceID)
	} else {
		p.trace = s.untracedTrace(r)
	}
	if r.ParentCallID != "" {
		p.parent = trace.NewSpanContext(trace.SpanContextConfig{
			TraceID:    p.trace,
			SpanID:     spanID(r.ParentCallID),
			TraceFlags: trace.FlagsSampled,
			Remote:     true,
		})
	}
	return p
}

// wantIDs carries the IDs a span is to get, through the context given to
// Tracer.Start, to the sink's ID generator.
type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

type wantKey struct{}

// ids is the sink's IDGenerator: the SDK asks it for a new span's IDs
// with the context the span starts under. Only the sink starts spans on
// its provider, always with wanted IDs; the random IDs are a fallback
// that keeps the generator correct for any other use.
type ids struct{}

func (ids) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if w, ok := ctx.Value(wantKey{}).(wantIDs); ok {
		return w.trace, w.span
	}
	var t trace.TraceID
	binary.NativeEndian.PutUint64(t[:8], rand.Uint64()|1)
	binary.NativeEndian.PutUint64(t[8:], rand.Uint64())
	return t, randomSpanID()
}

func (ids) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if w, ok := ctx.Value(wantKey{}).(wantIDs); ok {
		return w.span
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	binary.NativeEndian.PutUint64(s[:], rand.Uint64()|1)
	return s
}

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
//     takes the trace of its parent call (the hash of parent_call_id), or
//     of its own call_id when it has no parent.

func spanID(callID string) trace.SpanID {
	sum := sha256.Sum256([]byte("llmhistory span " + callID))
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		id[7] = 1 // all zeros is not a span ID
	}
	return id
}

func traceID(r *record.Record) trace.TraceID {
	if id, err := trace.TraceIDFromHex(r.TraceID); err == nil {
		return id // TraceIDFromHex refuses the all-zero ID
	}
	key := "trace " + r.TraceID
	switch {
	case r.TraceID != "":
	case r.ParentCallID != "":
		key = "call " + r.ParentCallID
	default:
		key = "call " + r.CallID
	}
	sum := sha256.Sum256([]byte("llmhistory " + key))
	var id trace.TraceID
	copy(id[:], sum[:16])
	if !id.IsValid() {
		id[15] = 1
	}
	return id
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

package middleware

import (
	"context"
	"sync/atomic"
)

type (
	traceKey    struct{}
	parentKey   struct{}
	speakerKey  struct{}
	callIDKey   struct{}
	attemptsKey struct{}
)

type parentInfo struct {
	id    string
	depth int // depth of the calls made under this context
}

// WithTrace returns a context whose calls belong to the conversation
// traceID: their records carry it as trace_id, and the in-memory history
// groups them by it.
func WithTrace(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceID)
}

// WithParent returns a context whose calls are nested under the call
// parentCallID: their records carry it as parent_call_id, with a depth one
// more than the calls made under ctx. Calls made under no parent have
// depth 0, so nesting WithParent twice gives depth 2.
func WithParent(ctx context.Context, parentCallID string) context.Context {
	depth := 1
	if p, ok := ctx.Value(parentKey{}).(parentInfo); ok {
		depth = p.depth + 1
	}
	return context.WithValue(ctx, parentKey{}, parentInfo{id: parentCallID, depth: depth})
}

// WithSpeaker returns a context whose calls are recorded as spoken by
// speaker ("user", "agent" or "tool"), instead of the speaker read from the
// request's last message.
func WithSpeaker(ctx context.Context, speaker string) context.Context {
	return context.WithValue(ctx, speakerKey{}, speaker)
}

// WithCallID returns a context whose call is recorded under callID. Every
// HTTP attempt made with this context is the same logical call: retries
// collapse into one record with that call_id. Use [NewCallID] to make one,
// and WithParent(ctx, callID) to nest calls under it.
func WithCallID(ctx context.Context, callID string) context.Context {
	return context.WithValue(ctx, callIDKey{}, callID)
}

// TraceFrom returns the trace set by [WithTrace], or "".
func TraceFrom(ctx context.Context) string {
	s, _ := ctx.Value(traceKey{}).(string)
	return s
}

// CallIDFrom returns the call ID set by [WithCallID], or "".
func CallIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(callIDKey{}).(string)
	return s
}

func parentFrom(ctx context.Context) (id string, depth int) {
	p, _ := ctx.Value(parentKey{}).(parentInfo)
	return p.id, p.depth
}

func speakerFrom(ctx context.Context) string {
	s, _ := ctx.Value(speakerKey{}).(string)
	return s
}

// attemptCounter is how a Retry middleware inside the recorder tells it
// how many HTTP attempts one RoundTrip made.
func attemptCounter(ctx context.Context) *atomic.Int32 {
	c, _ := ctx.Value(attemptsKey{}).(*atomic.Int32)
	return c
}

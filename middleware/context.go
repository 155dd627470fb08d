package middleware

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/record"
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

// attribution is what WithUser, WithTags and WithMetadata put in a
// context: one value, copied on each change, so that a call reads it with
// one lookup and a context nested inside another adds to what it holds.
type attribution struct {
	user     string
	tags     []string // in the order given, without duplicates, at most record.MaxTags
	tagsOver bool     // more tags were given than kept
	meta     []metaPair
	metaOver bool // more keys were given than kept
}

type metaPair struct{ key, value string }

type attributionKey struct{}

func attributionFrom(ctx context.Context) *attribution {
	a, _ := ctx.Value(attributionKey{}).(*attribution)
	return a
}

// with returns a copy of a (nil is empty) for a context that changes it.
func (a *attribution) with() *attribution {
	if a == nil {
		return &attribution{}
	}
	c := *a
	c.tags = slices.Clip(a.tags) // appending copies: the parent's never changes
	c.meta = slices.Clip(a.meta)
	return &c
}

// WithUser returns a context whose calls are attributed to the user id:
// their records carry it as user_id. A later WithUser replaces it. The
// recorder never joins calls of different users into one conversation.
func WithUser(ctx context.Context, id string) context.Context {
	a := attributionFrom(ctx).with()
	a.user = id
	return context.WithValue(ctx, attributionKey{}, a)
}

// WithTags returns a context whose calls carry tags (a feature, a tenant,
// an experiment), added to those ctx holds already: nested contexts
// accumulate, duplicates are dropped and the order of first mention kept.
// The first [record.MaxTags] are kept; a record whose context was given
// more names "tags" in its truncated list. WithTags(ctx) adds nothing.
func WithTags(ctx context.Context, tags ...string) context.Context {
	if len(tags) == 0 {
		return ctx
	}
	a := attributionFrom(ctx).with()
	for _, t := range tags {
		if slices.Contains(a.tags, t) {
			continue
		}
		if len(a.tags) >= record.MaxTags {
			a.tagsOver = true
			continue
		}
		a.tags = append(a.tags, t)
	}
	return context.WithValue(ctx, attributionKey{}, a)
}

// WithMetadata returns a context whose calls carry the metadata pair
// key=value, added to what ctx holds; a later value for the same key wins.
// At most [record.MaxMetadata] keys are kept; a record whose context was
// given more names "metadata" in its truncated list.
func WithMetadata(ctx context.Context, key, value string) context.Context {
	a := attributionFrom(ctx).with()
	if i := slices.IndexFunc(a.meta, func(p metaPair) bool { return p.key == key }); i >= 0 {
		a.meta = slices.Clone(a.meta)
		a.meta[i].value = value
	} else if len(a.meta) >= record.MaxMetadata {
		a.metaOver = true
	} else {
		a.meta = append(a.meta, metaPair{key, value})
	}
	return context.WithValue(ctx, attributionKey{}, a)
}

// UserFrom returns the user set by [WithUser], or "".
func UserFrom(ctx context.Context) string {
	if a := attributionFrom(ctx); a != nil {
		return a.user
	}
	return ""
}

// TagsFrom returns a copy of the tags set by [WithTags], in order.
func TagsFrom(ctx context.Context) []string {
	if a := attributionFrom(ctx); a != nil {
		return slices.Clone(a.tags)
	}
	return nil
}

// MetadataFrom returns a copy of the metadata set by [WithMetadata].
func MetadataFrom(ctx context.Context) map[string]string {
	a := attributionFrom(ctx)
	if a == nil || len(a.meta) == 0 {
		return nil
	}
	m := make(map[string]string, len(a.meta))
	for _, p := range a.meta {
		m[p.key] = p.value
	}
	return m
}

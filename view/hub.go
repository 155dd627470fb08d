package view

import (
	"context"
	"slices"
	"sync"
)

// hub hands Changes to subscribers. A subscriber that is busy has its
// changes merged, so a slow reader never blocks the indexer and never
// misses that something changed.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
	done   chan struct{}
}

type subscriber struct {
	mu      sync.Mutex
	pending Change
	has     bool
	wake    chan struct{}
}

// maxChangeTraces bounds the conversations a Change lists.
const maxChangeTraces = 100

func (h *hub) init() {
	if h.subs == nil {
		h.subs = make(map[*subscriber]struct{})
		h.done = make(chan struct{})
	}
}

func (h *hub) subscribe(ctx context.Context) <-chan Change {
	out := make(chan Change)
	sub := &subscriber{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.init()
	if h.closed {
		h.mu.Unlock()
		close(out)
		return out
	}
	h.subs[sub] = struct{}{}
	done := h.done
	h.mu.Unlock()
	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			delete(h.subs, sub)
			h.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-sub.wake:
			}
			sub.mu.Lock()
			c, has := sub.pending, sub.has
			sub.pending, sub.has = Change{}, false
			sub.mu.Unlock()
			if !has {
				continue
			}
			select {
			case out <- c:
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return out
}

func (h *hub) publish(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		sub.mu.Lock()
		sub.pending = merge(sub.pending, c)
		sub.has = true
		sub.mu.Unlock()
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// merge is what a subscriber is told of changes a and b together.
func merge(a, b Change) Change {
	a.Records += b.Records
	a.Reset = a.Reset || b.Reset
	a.More = a.More || b.More
	for _, t := range b.Traces {
		if slices.Contains(a.Traces, t) {
			continue
		}
		if len(a.Traces) >= maxChangeTraces {
			a.More = true
			break
		}
		a.Traces = append(a.Traces, t)
	}
	return a
}

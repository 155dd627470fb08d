package middleware

import (
	"context"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// held is a retriable failure waiting for the retry that would fold it
// into one record with the retry's outcome.
type held struct {
	key      string
	rec      record.Record
	start    time.Time // the first attempt's start
	attempts int
	ctx      context.Context
	timer    *time.Timer
}

// hold keeps h until its retry claims it or the window passes. It returns
// false when the recorder is closed: the caller emits at once instead.
func (r *Recorder) hold(key string, h *held) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	h.key = key
	r.held[key] = append(r.held[key], h)
	r.nHeld++
	h.timer = time.AfterFunc(r.cfg.dedupWindow, func() { r.expire(h) })
	return true
}

// claim takes the oldest failure held under key, if any, for the attempt
// that retries it.
func (r *Recorder) claim(key string) *held {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.held[key]
	if len(list) == 0 {
		return nil
	}
	h := list[0]
	r.remove(h)
	h.timer.Stop()
	return h
}

// expire emits a failure whose retry never came.
func (r *Recorder) expire(h *held) {
	r.mu.Lock()
	if !r.remove(h) {
		r.mu.Unlock()
		return // claimed, or emitted by Close, meanwhile
	}
	r.mu.Unlock()
	r.emit(h.ctx, h.rec)
}

// remove drops h from the held set; it reports whether h was there.
// r.mu must be held.
func (r *Recorder) remove(h *held) bool {
	list := r.held[h.key]
	for i, x := range list {
		if x == h {
			list = append(list[:i:i], list[i+1:]...)
			if len(list) == 0 {
				delete(r.held, h.key)
			} else {
				r.held[h.key] = list
			}
			r.nHeld--
			return true
		}
	}
	return false
}

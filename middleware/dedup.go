package middleware

import (
	"context"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// held is a retriable failure waiting for the retry that would fold it
// into one record with the retry's outcome, or a redirect waiting for its
// next hop. It is made on the call's path,
// when the failure is known; its record is filled in by the worker, which
// always gets to it before the job of any retry that claims it.
type held struct {
	key      attemptKey
	start    time.Time // the first attempt's start
	attempts int
	hops     int
	ctx      context.Context
	timer    *time.Timer
	rec      record.Record // set by the worker
}

// hold keeps h until its retry claims it or the window passes. When the
// recorder is closed, h is emitted as soon as its record is built.
func (r *Recorder) hold(h *held) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.work.submit(&job{emit: h})
		return
	}
	r.held[h.key] = append(r.held[h.key], h)
	r.nHeld++
	r.keyed.Add(1)
	h.timer = time.AfterFunc(r.cfg.dedupWindow, func() { r.expire(h) })
}

// claim takes the oldest failure held under key, if any, for the attempt
// that retries it.
func (r *Recorder) claim(key attemptKey) *held {
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

// expire emits a failure whose retry never came, through the queue, after
// its record is built.
func (r *Recorder) expire(h *held) {
	r.mu.Lock()
	if !r.remove(h) {
		r.mu.Unlock()
		return // claimed, or emitted by Close, meanwhile
	}
	r.mu.Unlock()
	r.work.submit(&job{emit: h})
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
			r.keyed.Add(-1)
			return true
		}
	}
	return false
}

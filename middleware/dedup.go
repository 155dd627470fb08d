package middleware

import (
	"context"
	"net/url"
	"reflect"
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
	ctx      context.Context // for the sinks: the call's values, without its cancellation
	timer    *time.Timer
	rec      record.Record // set by the worker

	// What tells this call apart from an identical one (see claim).
	ended   uint64          // the recorder's sequence when the failure was handed back
	reqURL  *url.URL        // the request's URL: the same value means the same request sent again
	callCtx context.Context // the request's own context
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

// claim takes the failure held under key that attempt a retries, if any.
//
// A held failure is a's retry only if it was handed back to its caller
// before a began: a request already on its way when the failure came back
// is another call. Under an explicit key (a call ID, an Idempotency-Key)
// the oldest such failure is taken. Under a fingerprint, many identical
// calls may be in flight at once (a batch job, a health probe), so a
// failure is taken only with more to go on:
//
//   - the same request value sent again (genai and go-retryablehttp resend
//     the *http.Request they were given; http.Client's copy of it keeps
//     its URL, which is what is compared): certain;
//   - else the same context, when it is not a bare context.Background or
//     TODO, which every call without one shares: a retry loop keeps its
//     call's context, while a middleware above the recorder may copy the
//     request. Calls that share one context are told apart by nothing,
//     so each such fold is counted in [Stats].FoldedByContext;
//   - else, for a request an SDK marks as a retry (X-Stainless-Retry-Count
//     above 0), the oldest: it retries one of them. When there were
//     several to choose from, the choice is counted in
//     [Stats].RetriesGuessed.
//
// A new request with the same bytes under a bare context is a new call.
func (r *Recorder) claim(key attemptKey, a *attempt) *held {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.held[key]
	var pick *held
	fits, byCtx, sameCtx := 0, -1, 0
	for i, h := range list {
		if h.ended >= a.begun {
			continue // a was on its way before this failure came back
		}
		if key.kind != 'f' || a.reqURL != nil && h.reqURL == a.reqURL {
			pick = h
			break
		}
		fits++
		if distinctContext(a.ctx) && sameContext(h.callCtx, a.ctx) {
			sameCtx++
			if byCtx < 0 {
				byCtx = i
			}
		}
	}
	switch {
	case pick != nil:
	case byCtx >= 0:
		pick = list[byCtx]
		if !a.retryMarked {
			r.byContext.Add(1)
		} else if sameCtx > 1 {
			r.guessed.Add(1)
		}
	case a.retryMarked && fits > 0:
		for _, h := range list {
			if h.ended < a.begun {
				pick = h
				break
			}
		}
		if fits > 1 {
			r.guessed.Add(1)
		}
	default:
		return nil
	}
	r.remove(pick)
	pick.timer.Stop()
	return pick
}

// distinctContext reports whether ctx can tell a call apart: a bare
// background context is shared by every call that has no other.
func distinctContext(ctx context.Context) bool {
	return ctx != nil && ctx != context.Background() && ctx != context.TODO()
}

// sameContext reports whether a and b are the same context value. A
// context of a type that cannot be compared is never the same.
func sameContext(a, b context.Context) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta != nil && ta == tb && ta.Comparable() && a == b
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

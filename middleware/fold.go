package middleware

import (
	"context"
	"hash/maphash"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// folder decides which HTTP attempts are one logical call, so that a call
// retried three times is one record with attempts 3. It is the whole of
// the recorder's retry folding; its contract:
//
//   - An attempt that fails in a way its caller may retry is held
//     ([folder.hold]) under its key (attemptKey: a call ID, an
//     Idempotency-Key, an AWS invocation id, a fingerprint of its bytes,
//     or the redirect a hop follows) until an attempt claims it, the
//     window passes, or the folder closes. The last two hand it to emit,
//     once, for its record to be written alone.
//   - An attempt claims ([folder.claim]) at most one held failure, which
//     must have been handed back to its caller before the attempt began
//     (sequence numbers from [folder.next] order the two). What else it
//     takes to claim under a fingerprint, which identical calls share, is
//     claim's doc.
//   - An attempt whose failure only the worker can tell (a 2xx whose JSON
//     was cut) is counted pending under its key ([folder.pending]) until
//     the worker has settled it, so that its retry can wait for it.
//   - While nothing is held or pending ([folder.idle]), no attempt can
//     claim: the caller's path then needs no fingerprint.
//
// Every method is safe for concurrent use. A held failure's record (h.rec)
// is set by the recorder's worker, which always builds it before the job
// of any attempt that claims it; the folder never reads it.
type folder struct {
	window time.Duration // how long a failure waits; 0 folds nothing
	emit   func(*held)   // a failure whose retry never came, to be recorded alone

	seq atomic.Uint64

	mu     sync.Mutex
	closed bool                   // close was called: hold emits at once
	held   map[attemptKey][]*held // oldest first
	nHeld  int

	pendMu sync.Mutex
	pend   map[attemptKey]int

	// keyed counts what is held and pending, readable without a lock.
	keyed atomic.Int64

	// alike counts, per hash of an attempt's method, host, path and
	// length, the attempts in flight and begun: whether identical calls
	// run at once (see alone).
	alike    [alikeSlots]alikeSlot
	alikeKey maphash.Seed

	byContext, bySequence, guessed atomic.Uint64 // Stats
}

// held is a retriable failure waiting for the retry that would fold it
// into one record with the retry's outcome, or a redirect waiting for its
// next hop.
type held struct {
	key      attemptKey
	start    time.Time // the first attempt's start
	attempts int
	hops     int
	ctx      context.Context // for the sinks: the call's values, without its cancellation
	timer    *time.Timer
	rec      record.Record // set by the worker

	// What tells this call apart from an identical one (see claim).
	ended      uint64          // the folder's sequence when the failure was handed back
	reqURL     *url.URL        // the request's URL: the same value means the same request sent again
	callCtx    context.Context // the request's own context
	alone      bool            // no attempt alike ran beside it
	innerRetry bool            // a Retry inside the recorder made its attempts, and gave up
}

// claimant is what an attempt shows when it claims an earlier failure.
type claimant struct {
	begun       uint64          // the folder's sequence when it began
	reqURL      *url.URL        // its request's URL, as a pointer: the request's identity
	ctx         context.Context // its request's context
	retryMarked bool            // an SDK marked it a retry
	alone       bool            // no attempt alike was in flight when it began
}

func newFolder(window time.Duration, emit func(*held)) *folder {
	return &folder{
		window:   window,
		emit:     emit,
		held:     make(map[attemptKey][]*held),
		pend:     make(map[attemptKey]int),
		alikeKey: maphash.MakeSeed(),
	}
}

// on reports whether the folder folds anything (WithDedupWindow above 0).
func (f *folder) on() bool { return f.window > 0 }

// next returns the next sequence number: attempts take one as they begin
// and as their end is handed back.
func (f *folder) next() uint64 { return f.seq.Add(1) }

// idle reports whether nothing is held or pending: no attempt can claim.
func (f *folder) idle() bool { return f.keyed.Load() == 0 }

// hold keeps h until its retry claims it or the window passes. When the
// folder is closed, h is emitted at once.
func (f *folder) hold(h *held) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		f.emit(h)
		return
	}
	f.held[h.key] = append(f.held[h.key], h)
	f.nHeld++
	f.keyed.Add(1)
	h.timer = time.AfterFunc(f.window, func() { f.expire(h) })
}

// claim takes the failure held under key that c retries, if any.
//
// A held failure is c's retry only if it was handed back to its caller
// before c began: a request already on its way when the failure came back
// is another call. Under an explicit key (a call ID, an Idempotency-Key,
// an AWS invocation id, a redirect) the oldest such failure is taken.
// Under a fingerprint, many identical calls may be in flight at once (a
// batch job, a health probe), so a failure is taken only with more to go
// on, in this order:
//
//   - the same request value sent again (genai's own retries and
//     go-retryablehttp resend the *http.Request they were given; http.Client's copy of it keeps its URL,
//     which is what is compared): certain;
//   - else the same context, when it is not a bare context.Background or
//     TODO, which every call without one shares: a retry loop keeps its
//     call's context, while a middleware above the recorder may copy the
//     request. Calls that share one context are told apart by nothing,
//     so each such fold is counted in [Stats].FoldedByContext;
//   - else, for a request an SDK marks as a retry (X-Stainless-Retry-Count
//     above 0), the oldest: it retries one of them. When there were
//     several to choose from, the choice is counted in
//     [Stats].RetriesGuessed;
//   - else, one call after the other: c began with no call alike in
//     flight, and exactly one failure is held that it could retry, which
//     ran alone and was not given up on by a [Retry] inside the recorder.
//     That is a retry loop that builds its request again (an application
//     retrying by hand through genai, which derives a context of its own
//     for each request); a sequence of identical calls looks the same, so
//     each such fold is counted in [Stats].FoldedBySequence. Identical
//     calls made at once are never folded this way.
func (f *folder) claim(key attemptKey, c claimant) *held {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := f.held[key]
	var pick *held
	fits, byCtx, sameCtx, lone := 0, -1, 0, -1
	for i, h := range list {
		if h.ended >= c.begun {
			continue // c was on its way before this failure came back
		}
		if key.kind != 'f' || c.reqURL != nil && h.reqURL == c.reqURL {
			pick = h
			break
		}
		fits++
		if distinctContext(c.ctx) && sameContext(h.callCtx, c.ctx) {
			sameCtx++
			if byCtx < 0 {
				byCtx = i
			}
		}
		if h.alone && !h.innerRetry {
			lone = i
		}
	}
	switch {
	case pick != nil:
	case byCtx >= 0:
		pick = list[byCtx]
		if !c.retryMarked {
			f.byContext.Add(1)
		} else if sameCtx > 1 {
			f.guessed.Add(1)
		}
	case c.retryMarked && fits > 0:
		for _, h := range list {
			if h.ended < c.begun {
				pick = h
				break
			}
		}
		if fits > 1 {
			f.guessed.Add(1)
		}
	case c.alone && fits == 1 && lone >= 0:
		pick = list[lone]
		f.bySequence.Add(1)
	default:
		return nil
	}
	f.remove(pick)
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

// expire emits a failure whose retry never came.
func (f *folder) expire(h *held) {
	f.mu.Lock()
	if !f.remove(h) {
		f.mu.Unlock()
		return // claimed, or emitted by close, meanwhile
	}
	f.mu.Unlock()
	f.emit(h)
}

// remove drops h from the held set; it reports whether h was there.
// f.mu must be held.
func (f *folder) remove(h *held) bool {
	list := f.held[h.key]
	for i, x := range list {
		if x == h {
			list = append(list[:i:i], list[i+1:]...)
			if len(list) == 0 {
				delete(f.held, h.key)
			} else {
				f.held[h.key] = list
			}
			f.nHeld--
			f.keyed.Add(-1)
			return true
		}
	}
	return false
}

// pending adds delta to the count of attempts under key that have ended
// and that the worker has yet to settle, and reports whether there are
// any.
func (f *folder) pending(key attemptKey, delta int) bool {
	f.pendMu.Lock()
	defer f.pendMu.Unlock()
	old := f.pend[key]
	n := old + delta
	if n <= 0 {
		delete(f.pend, key)
		f.keyed.Add(-int64(old))
		return false
	}
	f.pend[key] = n
	f.keyed.Add(int64(n - old))
	return true
}

// close stops holding: it returns the failures held, their timers
// stopped, for the caller to emit, and later holds emit at once.
func (f *folder) close() []*held {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	var waiting []*held
	for _, list := range f.held {
		for _, h := range list {
			h.timer.Stop()
			waiting = append(waiting, h)
		}
	}
	clear(f.held)
	f.keyed.Add(-int64(f.nHeld))
	f.nHeld = 0
	return waiting
}

// heldCount returns how many failures are held.
func (f *folder) heldCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nHeld
}

// alikeSlots is how many counters the attempts' likeness is spread over:
// two kinds of call that share one only look alike (fewer folds), never
// the reverse.
const alikeSlots = 64

type alikeSlot struct {
	inflight atomic.Int32
	begun    atomic.Uint64
	_        [48]byte // a cache line each: calls of different kinds do not contend
}

// alikeMark is what an attempt keeps of its likeness from begin to end.
type alikeMark struct {
	slot  *alikeSlot
	begun uint64
	alone bool // no attempt alike in flight when it began
}

// begin counts an attempt in flight among those alike (same method,
// host, path and body length: what identical calls share).
func (f *folder) begin(req *http.Request) alikeMark {
	var h maphash.Hash
	h.SetSeed(f.alikeKey)
	h.WriteString(req.Method)
	if req.URL != nil {
		h.WriteString(req.URL.Host)
		h.WriteString(req.URL.Path)
	}
	s := &f.alike[(h.Sum64()^uint64(req.ContentLength))%alikeSlots]
	return alikeMark{slot: s, begun: s.begun.Add(1), alone: s.inflight.Add(1) == 1}
}

// end counts the attempt out, and reports whether it ran alone: no
// attempt alike was in flight when it began, nor began while it was.
func (m *alikeMark) end() bool {
	if m.slot == nil {
		return false
	}
	m.slot.inflight.Add(-1)
	alone := m.alone && m.slot.begun.Load() == m.begun
	m.slot = nil
	return alone
}

package eval

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"

	"github.com/llmhistory/llmhistory/record"
)

// OnlineOptions configures [NewOnline]. The zero value is the defaults.
type OnlineOptions struct {
	// Sample is the fraction of calls judged, from 0 to 1; 0 means 0.1.
	// A call is picked by its call ID, so that the same calls are picked
	// whichever process sees them.
	Sample float64
	// Workers is how many calls are judged at once; default 2.
	Workers int
	// Queue is how many picked calls may wait; default 1000. A call
	// picked while it is full is dropped and counted, never waited for.
	Queue int
	// Logger receives failures, once per evaluator; default slog.Default().
	Logger *slog.Logger
}

// OnlineStats counts what an [Online] did.
type OnlineStats struct {
	Seen    uint64 // records given
	Sampled uint64 // picked to be judged
	Dropped uint64 // picked, but the queue was full or the sink closed
	Scores  uint64 // scores written
	Failed  uint64 // evaluations that failed, and scores the sink refused
}

// Online judges a sampled fraction of calls as they are recorded. It is a
// [record.Sink]: give it to the recorder (middleware.WithSink), which
// hands it records on the sink's own queue and goroutine, never on the
// call's path. Append only samples and queues; a bounded number of
// workers judge, and write the scores to a [ScoreSink] (a store, a scores
// file). Evaluators of conversations are not run online (a conversation
// is never known to be over): run them with [Run].
//
// Records an evaluator made ([IsEvaluation]) are never judged, so a
// judge whose client the same recorder wraps does not judge itself. What
// the judges spend is bounded by their own [Budget] (JudgeOptions.Budget):
// give them one, as their calls cost money; once it is spent they fail
// with [ErrBudget], logged once, and the code evaluators go on.
type Online struct {
	dst    ScoreSink
	evs    []Evaluator
	infos  []Info
	o      OnlineOptions
	cut    uint64 // a call is picked when its hash is below it
	queue  chan record.Record
	wg     sync.WaitGroup
	mu     sync.RWMutex // guards closed against Append's send
	closed bool
	// pending counts the calls queued or being judged, for Flush.
	pendingMu sync.Mutex
	pending   int
	idle      *sync.Cond
	logged    sync.Map // evaluator author → logged once

	seen, sampled, dropped, scores, failed atomic.Uint64
}

var _ record.Sink = (*Online)(nil)

// NewOnline returns an online evaluation writing to dst, and starts its
// workers. Close stops them.
func NewOnline(dst ScoreSink, evaluators []Evaluator, o OnlineOptions) *Online {
	if o.Sample <= 0 {
		o.Sample = 0.1
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.Queue <= 0 {
		o.Queue = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	on := &Online{dst: dst, o: o, queue: make(chan record.Record, o.Queue)}
	on.idle = sync.NewCond(&on.pendingMu)
	for _, e := range evaluators {
		if info := e.Info(); !info.Conversation {
			on.evs, on.infos = append(on.evs, e), append(on.infos, info)
		}
	}
	if o.Sample >= 1 {
		on.cut = math.MaxUint64
	} else {
		on.cut = uint64(o.Sample * (1 << 64))
	}
	on.wg.Add(o.Workers)
	for range o.Workers {
		go on.work()
	}
	return on
}

// Sampled reports whether a call of this ID is among those judged at the
// fraction sample.
func sampled(callID string, cut uint64) bool {
	if cut == math.MaxUint64 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(callID))
	// FNV's high bits hardly move between IDs that differ in their last
	// characters (ULIDs of one millisecond): mixed (splitmix64's
	// finalizer), every bit depends on every byte.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return x < cut
}

// Append picks the record or not, and queues it: it never waits.
func (on *Online) Append(_ context.Context, r record.Record) error {
	on.seen.Add(1)
	if IsEvaluation(&r) || !sampled(r.CallID, on.cut) {
		return nil
	}
	on.sampled.Add(1)
	on.mu.RLock()
	defer on.mu.RUnlock()
	if on.closed {
		on.dropped.Add(1)
		return record.ErrClosed
	}
	on.pendingMu.Lock()
	on.pending++
	on.pendingMu.Unlock()
	select {
	case on.queue <- r:
		return nil
	default:
		on.done()
		on.dropped.Add(1)
		return record.ErrQueueFull
	}
}

func (on *Online) work() {
	defer on.wg.Done()
	ctx := context.Background()
	for r := range on.queue {
		s := Subject{Records: []record.Record{r}}
		for i, e := range on.evs {
			scores, err := Score(ctx, e, s)
			if err != nil {
				on.failed.Add(1)
				on.logOnce(on.infos[i].Author(), "eval: an online evaluation failed", err)
				continue
			}
			for _, sc := range scores {
				if err := on.dst.AddScore(ctx, sc); err != nil {
					on.failed.Add(1)
					on.logOnce("sink", "eval: a score could not be written", err)
					continue
				}
				on.scores.Add(1)
			}
		}
		on.done()
	}
}

// done counts one queued call judged (or dropped).
func (on *Online) done() {
	on.pendingMu.Lock()
	if on.pending--; on.pending == 0 {
		on.idle.Broadcast()
	}
	on.pendingMu.Unlock()
}

// Flush waits until every call queued so far is judged and its scores
// written. A recorder's Flush calls it: flush the recorder before closing
// it, and the calls the last judgements made (a judge's, through the same
// recorder) are recorded too.
func (on *Online) Flush() error {
	on.pendingMu.Lock()
	for on.pending > 0 {
		on.idle.Wait()
	}
	on.pendingMu.Unlock()
	return nil
}

func (on *Online) logOnce(kind, msg string, err error) {
	if _, dup := on.logged.LoadOrStore(kind, true); dup {
		return
	}
	level := slog.LevelWarn
	if errors.Is(err, ErrBudget) {
		level = slog.LevelInfo
	}
	on.o.Logger.Log(context.Background(), level, msg, "evaluator", kind, "err", err)
}

// Close judges what is queued, stops the workers and returns. It does not
// close the score sink, which is the caller's.
func (on *Online) Close() error {
	on.mu.Lock()
	if !on.closed {
		on.closed = true
		close(on.queue)
	}
	on.mu.Unlock()
	on.wg.Wait()
	return nil
}

// Stats returns what the online evaluation did so far.
func (on *Online) Stats() OnlineStats {
	return OnlineStats{
		Seen:    on.seen.Load(),
		Sampled: on.sampled.Load(),
		Dropped: on.dropped.Load(),
		Scores:  on.scores.Load(),
		Failed:  on.failed.Load(),
	}
}

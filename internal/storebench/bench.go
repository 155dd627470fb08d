package storebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Workload is a stream of records as a team's services make them:
// many conversations at once, their calls interleaved, of hundreds of
// users, each working on a tag or two and for a tenant (in metadata),
// on a few models, with some failures and some calls without a price.
type Workload struct {
	rng   *rand.Rand
	opts  WorkloadOptions
	start time.Time
	step  time.Duration
	open  []*convState
	convs int
	n     int
	// UniqueBytes counts the bytes of unique text (system prompts, user
	// messages and answers, once each, as JSON) of the records made.
	UniqueBytes int64
}

// WorkloadOptions shapes a [Workload]; the zero value is a team's.
type WorkloadOptions struct {
	Users    int // distinct users; default 500
	MinCalls int // calls of a conversation: from MinCalls (default 5)
	MaxCalls int // to MaxCalls (default 50)
	// Every LongEvery-th conversation has LongCalls calls (default: one
	// in 200 has 100), for the page of a long conversation.
	LongEvery, LongCalls int
	Open                 int // conversations going on at once; default 64
}

func (o WorkloadOptions) withDefaults() WorkloadOptions {
	if o.Users <= 0 {
		o.Users = 500
	}
	if o.MinCalls <= 0 {
		o.MinCalls = 5
	}
	if o.MaxCalls < o.MinCalls {
		o.MaxCalls = max(o.MinCalls, 50)
	}
	if o.LongEvery <= 0 {
		o.LongEvery = 200
	}
	if o.LongCalls <= 0 {
		o.LongCalls = 100
	}
	if o.Open <= 0 {
		o.Open = 64
	}
	return o
}

type convState struct {
	recs []record.Record
	next int
}

// NewWorkload returns a team's workload whose records are step apart (a
// million records a month: 2.6 s).
func NewWorkload(seed uint64, start time.Time, step time.Duration) *Workload {
	return NewWorkloadWith(seed, start, step, WorkloadOptions{})
}

// NewWorkloadWith is [NewWorkload] shaped by o.
func NewWorkloadWith(seed uint64, start time.Time, step time.Duration, o WorkloadOptions) *Workload {
	return &Workload{rng: rand.New(rand.NewPCG(seed, seed^0x9e37)), opts: o.withDefaults(), start: start, step: step}
}

// MonthStep spaces a million records over 30 days.
const MonthStep = 30 * 24 * time.Hour / 1_000_000

var (
	// Models, the models of a workload.
	Models = []string{"gpt-4o-mini", "gpt-4o", "claude-sonnet-4", "gemini-2.5-flash", "gpt-4.1"}
	// Tags, its tags.
	Tags = []string{"checkout", "support", "search", "beta", "batch", "summarizer", "agent", "eval"}
)

// User is the name of a workload's i-th user.
func User(i int) string { return fmt.Sprintf("user-%d", i) }

// Next returns the next record.
func (w *Workload) Next() record.Record {
	o := w.opts
	for len(w.open) < o.Open {
		c := w.convs
		w.convs++
		calls := o.MinCalls + w.rng.IntN(o.MaxCalls-o.MinCalls+1)
		if c%o.LongEvery == o.LongEvery-1 {
			calls = o.LongCalls
		}
		model := Models[w.rng.IntN(len(Models))]
		u := w.rng.IntN(o.Users)
		// A user works on a tag or two of their own, for a tenant.
		home := []string{Tags[u%len(Tags)], Tags[(u/len(Tags)+u)%len(Tags)]}
		tags := []string{home[w.rng.IntN(2)]}
		if w.rng.IntN(3) == 0 && home[0] != home[1] {
			tags = home
		}
		recs, unique := Conversation(w.rng, ConversationOptions{
			Trace: fmt.Sprintf("w%x-%d", w.rng.Uint32(), c), Turns: calls, Model: model, User: User(u), Tags: tags,
			UserBytes: 100 + w.rng.IntN(200), AssistantByte: 300 + w.rng.IntN(900),
		})
		tenant := fmt.Sprint("tenant-", u%50)
		for i := range recs {
			recs[i].Metadata = map[string]string{"tenant": tenant, "feature": tags[0]}
			switch model {
			case "claude-sonnet-4":
				recs[i].MethodName = "anthropic.messages.create"
			case "gemini-2.5-flash":
				recs[i].MethodName = "gemini.generate_content"
			case "gpt-4.1":
				recs[i].Cost = nil // a model the price table does not know
			}
		}
		w.UniqueBytes += int64(unique)
		w.open = append(w.open, &convState{recs: recs})
	}
	i := w.rng.IntN(len(w.open))
	c := w.open[i]
	r := c.recs[c.next]
	c.recs[c.next] = record.Record{} // its args are the conversation so far: let them go
	c.next++
	if c.next == len(c.recs) {
		w.open[i] = w.open[len(w.open)-1]
		w.open = w.open[:len(w.open)-1]
	}
	at := w.start.Add(time.Duration(w.n) * w.step)
	r.Timestamp = record.FormatTime(at)
	if w.rng.IntN(33) == 0 { // 3% fail, most on rate limits
		r.Outcome = record.Failure([]string{record.ErrorRateLimit, record.ErrorRateLimit, record.ErrorTimeout, record.ErrorServer}[w.rng.IntN(4)])
		r.ErrorType = r.Outcome.ErrorType
		r.ErrorMessage = "upstream said no: " + r.ErrorType
		r.Usage, r.Cost = nil, nil
	}
	// Call IDs sort by time, as the recorder's ULIDs do.
	r.CallID = fmt.Sprintf("%010X%016X", at.UnixMilli(), w.rng.Uint64())
	w.n++
	return r
}

// Rand is the workload's source of random numbers.
func (w *Workload) Rand() *rand.Rand { return w.rng }

// Batch returns the next n records.
func (w *Workload) Batch(n int) []record.Record {
	out := make([]record.Record, n)
	for i := range out {
		out[i] = w.Next()
	}
	return out
}

// BenchIngest measures writing records in batches of the recorder's
// default (record.DefaultMaxBatch), as its sink queue hands them over
// under load.
func BenchIngest(b *testing.B, url string) {
	ctx := context.Background()
	s, err := store.OpenWith(ctx, url, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := NewWorkload(1, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), MonthStep)
	batch := record.DefaultMaxBatch
	// Records are made before the clock runs.
	recs := w.Batch(b.N)
	b.ResetTimer()
	cpu0 := CPUTime()
	start := time.Now()
	for i := 0; i < len(recs); i += batch {
		if err := s.AppendBatch(ctx, recs[i:min(i+batch, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	cpu := CPUTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/record")
	size, _ := s.Size(ctx)
	b.ReportMetric(float64(size)/float64(b.N), "bytes/record")
	b.ReportMetric(float64(w.UniqueBytes)/float64(b.N), "unique-text-bytes/record")
}

// CPUTime is the CPU time (user and system) this process has used: on a
// shared machine, the cost of work when the wall clock says more about
// the neighbours.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

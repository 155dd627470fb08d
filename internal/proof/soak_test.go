package proof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// What is the truth a soak record is held to?
//
// A logical call is one call of the application: one SDK method call, or,
// for the application loop around go-openai, the loop. Its attempts are
// the HTTP requests the fault server saw for it. The recorder sees the
// attempts of middleware.Retry (inside it) as one RoundTrip, and counts
// them. It sees the attempts of retries outside it (genai's, openai-go's,
// the application loop) one by one, and folds them into one record because
// they are marked (openai-go's X-Stainless-Retry-Count) or because the
// identical request follows a retriable failure within the dedup window
// (genai, the application loop). Every soak call sends its own body in its
// own trace (WithTrace "call-<n>"), so no two logical calls look the same
// to the recorder, and every outside retry follows a failure the recorder
// counts retriable (429, 5xx, a reset, a cut). So the truth is: one record
// per logical call, with attempts equal to the attempts the server saw and
// the outcome of the last of them. (Two different logical calls sending
// the identical request in one trace within the window, the first failing
// retriably, would be folded into one record: that is what WithDedupWindow
// promises, and why the soak gives each call its own trace.)

// soakRun is what one run of the script produced.
type soakRun struct {
	results  []string        // per call: how it ended for the application
	took     []time.Duration // per call: how long it took
	server   *faultServer
	duration time.Duration
}

func soakCalls(t *testing.T) int {
	if v := os.Getenv("LLMHISTORY_SOAK_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		return n
	}
	if os.Getenv("LLMHISTORY_SOAK") != "" {
		return 100_000
	}
	return 1000
}

func soakSeed(t *testing.T) uint64 {
	if v := os.Getenv("LLMHISTORY_SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
		return s
	}
	return rand.Uint64()
}

const (
	// soakResponseCap is the recorder's response capture in the soak: the
	// long-crlf fault's answers are longer, so their ends are in the tail.
	soakResponseCap = 8 << 10
	soakConcurrency = 64
	// soakDeadline bounds each logical call, all attempts included. It is
	// far above any answered call, even under -race on a busy machine, so
	// that only stalls reach it, in both runs alike.
	soakDeadline = 3 * time.Second
)

// spurious reports whether call n of run ended on its deadline though the
// server never stalled its last attempt: the machine, not the fault script
// nor the recorder, made it late (a CPU-starved accept loop, a SYN
// retransmitted after a full listen backlog). Such calls are excused from
// the comparisons, counted, and bounded.
func spurious(run soakRun, n int) bool {
	a := run.server.attempts(n)
	// Its deadline cut it, or it ran up to it: an error other than the
	// deadline's may end a call whose retry the deadline forbade.
	if !strings.Contains(run.results[n], "deadline") && run.took[n] < soakDeadline*9/10 {
		return false
	}
	if len(a) == 0 {
		return true
	}
	switch a[len(a)-1] {
	case faultStall, faultStallMidBody, faultStallError:
		return false
	}
	return true
}

// cutShort reports whether call n ended at its deadline in run after
// the same attempts as in other, but fewer: a machine too slow that
// moment for the attempt other went on to make (a stall's own wait
// passes the same in both runs; what follows it may not).
func cutShort(run, other soakRun, n int) bool {
	a, b := run.server.attempts(n), other.server.attempts(n)
	return strings.Contains(run.results[n], "deadline") && len(a) < len(b) && slices.Equal(a, b[:len(a)])
}

// runSoak makes calls logical calls at soakConcurrency through fresh
// clients against a fresh fault server, through rec when it is not nil.
func runSoak(t *testing.T, seed uint64, calls int, rec *middleware.Recorder) soakRun {
	t.Helper()
	srv := newFaultServer(t, seed)
	defer srv.Close()
	clients := newSoakClients(t, srv.URL, rec)
	defer clients.close()

	run := soakRun{results: make([]string, calls), took: make([]time.Duration, calls), server: srv}
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range soakConcurrency {
		wg.Go(func() {
			for n := range next {
				ctx := middleware.WithTrace(context.Background(), traceOf(n))
				ctx, cancel := context.WithTimeout(ctx, soakDeadline)
				began := time.Now()
				run.results[n] = clients.call(ctx, n)
				run.took[n] = time.Since(began)
				cancel()
			}
		})
	}
	for n := range calls {
		next <- n
	}
	close(next)
	wg.Wait()
	run.duration = time.Since(start)
	return run
}

func traceOf(n int) string { return "call-" + strconv.Itoa(n) }

// audit sees every record the recorder emits, through a WithRedactor hook,
// which runs for each record before the history and the sinks, and cannot
// drop one.
type audit struct {
	mu   sync.Mutex
	seen map[string][]record.Record // trace -> records (one, if all is well)
}

func (a *audit) hook(r *record.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Keep a small copy: a long soak must not hold every args.
	a.seen[r.TraceID] = append(a.seen[r.TraceID], record.Record{
		CallID: r.CallID, TraceID: r.TraceID, Attempts: r.Attempts, Hops: r.Hops, Outcome: r.Outcome,
		ErrorType: r.ErrorType, ErrorMessage: r.ErrorMessage, MethodName: r.MethodName,
	})
}

// countingSink counts by trace what reached it and what it failed.
type countingSink struct {
	mu     sync.Mutex
	got    map[string]int
	failed map[string]bool // traces whose append returned an error
}

func newCountingSink() *countingSink {
	return &countingSink{got: make(map[string]int), failed: make(map[string]bool)}
}

func (s *countingSink) wrap(inner func(record.Record) error) record.Sink {
	return record.SinkFunc(func(_ context.Context, r record.Record) error {
		err := inner(r)
		s.mu.Lock()
		s.got[r.TraceID]++
		if err != nil {
			s.failed[r.TraceID] = true
		}
		s.mu.Unlock()
		return err
	})
}

func (s *countingSink) total() (n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.got {
		n += c
	}
	return n
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// wantErrorType is the recorder's error type for a call whose last
// attempt got the fault. A 503 is an overload even when its OpenAI body
// says the catch-all "type":"server_error". A body that ends cleanly
// inside an event is a stream that did not finish, or JSON that came
// whole and cannot be decoded (its chunked framing ended cleanly: nothing
// was lost on the way). A client reads a stalled 429's body until its deadline, or
// closes it unread and gives up.
var wantErrorType = map[fault][]string{
	faultRateLimit:    {record.ErrorRateLimit},
	faultInternal:     {record.ErrorServer},
	faultUnavailable:  {record.ErrorOverloaded},
	faultReset:        {record.ErrorTransport},
	faultStall:        {record.ErrorTimeout},
	faultCut:          {record.ErrorTransport},
	faultGarbage:      {record.ErrorDecode},
	faultRedirect:     {record.ErrorUnknown}, // not followed: a body without GetBody
	faultEndMidEvent:  {record.ErrorIncomplete, record.ErrorDecode},
	faultStallMidBody: {record.ErrorTimeout},
	faultEchoKey:      {record.ErrorAuth},
	faultBlocked:      {record.ErrorContentFilter},
	faultNilResponse:  {record.ErrorTransport},
	faultStallError:   {record.ErrorTimeout, record.ErrorRateLimit},
}

// wantOK is whether call n, whose last attempt got the fault, succeeded.
func wantOK(last fault, n int) bool {
	kind := n % numKinds
	switch last {
	case faultOK, faultGzip, faultLongCRLF:
		return true
	case faultRedirect:
		// http.Client cannot resend a body without GetBody.
		return !(kind == kindHTTP && httpVariant(n) == httpChatNoRewind)
	case faultNilResponse:
		// Only the clients without middleware.Retry have the broken
		// middleware below the recorder.
		return !plainChain(n)
	case faultBlocked:
		// An endpoint no provider knows: nothing reads its finish reason.
		return kind == kindHTTP && httpVariant(n) == httpKeyInPath
	}
	return false
}

// plainChain reports whether call n goes through the client without
// middleware.Retry, which has the broken middleware below the recorder.
func plainChain(n int) bool {
	switch n % numKinds {
	case kindGoOpenAILoop, kindGenai, kindOpenAISDK:
		return true
	case kindHTTP:
		return httpVariant(n) == httpChatNoRewind
	}
	return false
}

// secretsOf are the credentials the soak's clients send, which the
// echo-key fault sends back: none may reach a record.
var secretsOf = []string{testOpenAIKey, testGeminiKey, testAzureKey}

// panickySink panics in 2% of its appends, and in Flush and Close.
type panickySink struct {
	mu     sync.Mutex
	rng    *rand.Rand
	panics int
}

func (p *panickySink) Append(context.Context, record.Record) error {
	p.mu.Lock()
	boom := p.rng.IntN(50) == 0
	if boom {
		p.panics++
	}
	p.mu.Unlock()
	if boom {
		panic("panicky sink: append")
	}
	return nil
}

func (p *panickySink) Flush() error { panic("panicky sink: flush") }
func (p *panickySink) Close() error { panic("panicky sink: close") }

// stuckSink takes its first records, then blocks in Append until released.
type stuckSink struct {
	mu      sync.Mutex
	got     int
	after   int
	release chan struct{}
}

func (s *stuckSink) Append(context.Context, record.Record) error {
	s.mu.Lock()
	s.got++
	stuck := s.got > s.after
	s.mu.Unlock()
	if stuck {
		<-s.release
	}
	return nil
}

func TestSoak(t *testing.T) {
	calls := soakCalls(t)
	seed := soakSeed(t)
	t.Logf("soak: %d logical calls per run, seed %d (LLMHISTORY_SOAK_SEED=%d replays it)", calls, seed, seed)

	goroutinesBefore := runtime.NumGoroutine()
	heapBefore := settledHeap()

	// The script without the recorder: what each client gets on its own.
	bare := runSoak(t, seed, calls, nil)
	t.Logf("bare run: %v", bare.duration)

	// The same script through the recorder, with sinks that fail 10% of
	// the time, are slow, or sit behind a queue of 8.
	au := &audit{seen: make(map[string][]record.Record)}
	flaky, slow, queued := newCountingSink(), newCountingSink(), newCountingSink()
	var flakyRNG = rand.New(rand.NewPCG(seed, 1))
	var flakyMu sync.Mutex
	jsonlOut := &lockedBuffer{}
	async := record.NewAsync(record.NewJSONL(jsonlOut), &record.AsyncOptions{QueueSize: 8})
	histCap := max(1, min(calls/2, 5000))
	history := record.NewMemory(histCap)
	panicky := &panickySink{rng: rand.New(rand.NewPCG(seed, 2))}
	stuck := &stuckSink{after: calls / 10, release: make(chan struct{})}
	rec := middleware.NewRecorder(
		middleware.WithHistory(history),
		middleware.WithRedactor(au.hook),
		middleware.WithLogger(slog.New(slog.DiscardHandler)),
		middleware.WithSinkQueue(32),
		middleware.WithMaxBody(0, soakResponseCap),
		middleware.WithSink(flaky.wrap(func(record.Record) error {
			flakyMu.Lock()
			fail := flakyRNG.IntN(10) == 0
			flakyMu.Unlock()
			if fail {
				return errors.New("flaky sink: disk full")
			}
			return nil
		})),
		middleware.WithSink(slow.wrap(func(record.Record) error {
			time.Sleep(200 * time.Microsecond)
			return nil
		})),
		middleware.WithSink(queued.wrap(func(r record.Record) error {
			return async.Append(context.Background(), r)
		})),
		middleware.WithSink(panicky),
		middleware.WithSink(stuck),
	)
	recorded := runSoak(t, seed, calls, rec)
	pending := rec.Stats().Pending // failures held for a retry that never came

	// Shutdown gives up on the stuck sink, and on no other; the panicky
	// sink's Close panics, and says so.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := rec.Shutdown(ctx)
	cancel()
	var se *middleware.ShutdownError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"*proof.stuckSink"}, se.Sinks)
	var pe *record.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Close", pe.Method)
	close(stuck.release) // its goroutine ends, and takes the rest late
	require.NoError(t, async.Close())
	st := rec.Stats()
	stuckStats := st.Sinks[4]
	assert.EqualValues(t, se.Undelivered, st.Recorded-stuckStats.Dropped-uint64(stuck.after), "undelivered: what was queued for the stuck sink, and the record it was stuck on")
	t.Logf("recorded run: %v; stats after the calls: %d pending (held failures); after Close: %+v", recorded.duration, pending, st)

	// 1. The recorder changed nothing: each call ended the same way and
	// made the same attempts with and without it.
	faults := map[fault]int{}
	kinds := map[string]int{}
	mismatches := 0
	excused := 0
	for n := range calls {
		a := recorded.server.attempts(n)
		for _, f := range a {
			faults[f]++
		}
		kinds[kindNames[n%numKinds]]++
		if spurious(bare, n) || spurious(recorded, n) || cutShort(recorded, bare, n) || cutShort(bare, recorded, n) {
			excused++
			if excused <= 5 {
				t.Logf("call %d (%s) excused, late for the machine: without the recorder %q after %v, with it %q after %v",
					n, kindNames[n%numKinds], bare.results[n], bare.server.attempts(n), recorded.results[n], a)
			}
			continue
		}
		if bare.results[n] != recorded.results[n] || !slices.Equal(bare.server.attempts(n), a) {
			mismatches++
			if mismatches <= 10 {
				t.Errorf("call %d (%s): without the recorder %q after %v, with it %q after %v",
					n, kindNames[n%numKinds], bare.results[n], bare.server.attempts(n), recorded.results[n], a)
			}
		}
	}
	assert.Zero(t, mismatches, "calls that ended differently through the recorder")
	assert.LessOrEqual(t, excused, calls/100, "calls late for the machine: more than 1% is not noise")
	t.Logf("faults answered (recorded run): %v; calls per client: %v; excused as late for the machine: %d", faults, kinds, excused)

	// 2. Exactly one record per logical call, with the attempts the
	// server saw and the outcome of the last.
	assert.EqualValues(t, calls, st.Recorded, "records emitted")
	assert.Zero(t, st.Pending)
	assert.EqualValues(t, panicky.panics+1, st.Panics, "the panicky sink's appends, and its Close")
	bad := 0
	for n := range calls {
		a := recorded.server.attempts(n)
		rs := au.seen[traceOf(n)]
		var problem string
		switch {
		case len(rs) != 1:
			problem = fmt.Sprintf("%d records", len(rs))
		case spurious(recorded, n), cutShort(recorded, bare, n) && rs[0].Attempts == len(a)+1:
			// Its last attempt may have been cut before the server saw it.
		case rs[0].Attempts != len(a):
			problem = fmt.Sprintf("attempts %d, server saw %d", rs[0].Attempts, len(a))
		case rs[0].Hops != recorded.server.hopsOf(n):
			problem = fmt.Sprintf("hops %d, server saw %d", rs[0].Hops, recorded.server.hopsOf(n))
		default:
			last := a[len(a)-1]
			ok := wantOK(last, n)
			switch {
			case rs[0].Outcome.OK != ok || !ok && !slices.Contains(wantErrorType[last], rs[0].ErrorType):
				problem = fmt.Sprintf("outcome %+v (%s), last attempt got %v", rs[0].Outcome, rs[0].ErrorMessage, last)
			case ok && rs[0].Outcome.FinishReason == "" && !strings.HasPrefix(rs[0].MethodName, "http."):
				problem = fmt.Sprintf("no finish reason in %+v, last attempt got %v", rs[0].Outcome, last)
			}
		}
		for _, secret := range secretsOf {
			if strings.Contains(rs[0].ErrorMessage, secret) || strings.Contains(rs[0].MethodName, secret) {
				problem += "; a credential reached the record"
			}
		}
		if problem != "" {
			bad++
			if bad <= 10 {
				t.Errorf("call %d (%s, attempts %v, result %q): %s", n, kindNames[n%numKinds], a, recorded.results[n], problem)
			}
		}
	}
	assert.Zero(t, bad, "calls whose record is missing, doubled or wrong")
	assert.Len(t, au.seen, calls, "no record for a call that was not made")

	// 3. Records are missing from a sink only where its queue said it
	// dropped them. Each sink has its own queue.
	require.Len(t, st.Sinks, 5)
	for i, s := range []*countingSink{flaky, slow, queued} {
		assert.EqualValues(t, st.Recorded-st.Sinks[i].Dropped, s.total(), "sink %d got every record its queue did not drop", i)
		assert.EqualValues(t, s.total(), st.Sinks[i].Written+st.Sinks[i].Errors, "sink %d: what it got, it took or failed on", i)
	}
	for _, s := range []*countingSink{flaky, slow, queued} {
		for trace, c := range s.got {
			if c != 1 {
				t.Errorf("a sink got %s %d times", trace, c)
			}
		}
	}
	assert.EqualValues(t, len(flaky.failed)+len(queued.failed)+panicky.panics, st.SinkErrors, "one sink error counted per record a sink failed on")
	as := async.Stats()
	assert.EqualValues(t, queued.total(), as.Written+as.Dropped, "the Async queue wrote or counted every record it was given")
	assert.EqualValues(t, len(queued.failed), as.Dropped, "the Async queue's drops are the appends it refused")
	lines, err := record.ReadJSONL(bytes.NewReader(jsonlOut.buf.Bytes()))
	require.NoError(t, err)
	for _, secret := range secretsOf {
		assert.NotContains(t, jsonlOut.buf.String(), secret, "a credential reached the JSONL sink")
	}
	assert.EqualValues(t, as.Written, len(lines), "every record the Async queue wrote is a whole JSONL line")
	assert.Equal(t, histCap, history.Len(), "the history holds its capacity")
	assert.EqualValues(t, calls-histCap, history.Dropped(), "and counts what it let go")
	t.Logf("records: %d for %d calls; the sink queues dropped %d (flaky %d, slow %d, queued %d); sink errors %d (flaky %d, Async full %d); Async wrote %d, dropped %d; history held %d, let go %d",
		st.Recorded, calls, st.Dropped, st.Sinks[0].Dropped, st.Sinks[1].Dropped, st.Sinks[2].Dropped, st.SinkErrors, len(flaky.failed), len(queued.failed), as.Written, as.Dropped, history.Len(), history.Dropped())

	// 4. Goroutines and heap come back to where they were.
	bare.server.forget() // the servers live on in t.Cleanup: not their logs
	recorded.server.forget()
	bare, recorded, rec, au, history, async, jsonlOut, lines = soakRun{}, soakRun{}, nil, nil, nil, nil, nil, nil
	flaky, slow, queued, panicky, stuck = nil, nil, nil, nil, nil
	goroutinesAfter := settleGoroutines(goroutinesBefore, 10*time.Second)
	heapAfter := settledHeap()
	t.Logf("goroutines: %d before, %d after; heap: %.1f MiB before, %.1f MiB after", goroutinesBefore, goroutinesAfter, mib(heapBefore), mib(heapAfter))
	if goroutinesAfter > goroutinesBefore {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines leaked: %d before, %d after\n%s", goroutinesBefore, goroutinesAfter, buf[:runtime.Stack(buf, true)])
	}
	assert.Less(t, int64(heapAfter)-int64(heapBefore), int64(4<<20), "heap back within 4 MiB of where it was")
}

// settleGoroutines waits until no more than want goroutines run, or the
// time is up, and returns how many run.
func settleGoroutines(want int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settledHeap is the live heap after the garbage is collected.
func settledHeap() uint64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

package proof

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
)

// captureCaps is the most the recorder may hold of one call's bodies: the
// request capture, the response head and the response tail ring.
const captureCaps = middleware.DefaultMaxRequestBody + middleware.DefaultMaxResponseBody + 64<<10

// memorySlack is what one call may hold besides the captures at its
// peak: the transport's and the server's buffers, the record, and the work
// of parsing a full capture (the head grows by doubling, so its previous
// backing array is live while it is copied; a stream's text is assembled
// from up to 1 MiB of events). A body copied whole would overshoot it
// by tens of times.
const memorySlack = 6 << 20

// allocBound is what one call may allocate in all, garbage included. The
// capture's head grows in one step to a known Content-Length, else by
// doubling from a pooled 8 KiB buffer to its 1 MiB cap, which allocates
// under twice the cap on the way; so does the assembled text of a long
// stream. (With append's 1.25× growth it was five times: 10.6 MiB for a
// 100 MiB stream, now 6.0.) Constant, not per byte: [checkFlat] proves it
// does not grow with the body.
const allocBound = 2*captureCaps + memorySlack

// checkFlat fails when a call of a big body allocates more than one of a
// small body by over 1 MiB: memory that grows with the bytes passed.
func checkFlat(t *testing.T, what string, measure func(size int64) (peak, allocated uint64)) {
	t.Helper()
	small := int64(4 << 20)
	_, allocSmall := measure(small)
	size := bigBodySize()
	peak, allocBig := measure(size)
	t.Logf("%s of %d MiB: peak heap growth %.1f MiB, allocated %.1f MiB (%.1f MiB for %d MiB); caps %.1f MiB",
		what, size>>20, mib(peak), mib(allocBig), mib(allocSmall), small>>20, mib(captureCaps))
	assert.LessOrEqual(t, peak, uint64(captureCaps+memorySlack), "peak heap growth: caps plus a constant")
	assert.LessOrEqual(t, allocBig, uint64(allocBound), "bytes allocated during the call")
	assert.Less(t, int64(allocBig)-int64(allocSmall), int64(1<<20), "allocation grows with the body")
}

// bigBodySize is 100 MiB, or 16 MiB under -race (which is slow at moving
// bytes) unless LLMHISTORY_LONG is set.
func bigBodySize() int64 {
	if raceEnabled && os.Getenv("LLMHISTORY_LONG") == "" {
		return 16 << 20
	}
	return 100 << 20
}

// patternReader yields n bytes of a repeating JSON-safe pattern without
// holding them: the test never has the body in memory either.
type patternReader struct {
	n   int64
	off int64
}

const pattern = "the quick brown fox jumps over the lazy dog, history and all. "

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), p.n-p.off)]
	for i := range b {
		b[i] = pattern[(p.off+int64(i))%int64(len(pattern))]
	}
	p.off += int64(len(b))
	return len(b), nil
}

// memSampler watches the heap while a call runs: the peak of HeapAlloc
// (sampled) and TotalAlloc (exact: every byte allocated, even garbage
// collected between samples).
type memSampler struct {
	base, peak uint64
	total0     uint64
	stop       chan struct{}
	done       sync.WaitGroup
}

func startSampler() *memSampler {
	var ms runtime.MemStats
	s := &memSampler{stop: make(chan struct{})}
	s.base = settledHeap()
	runtime.ReadMemStats(&ms)
	s.total0, s.peak = ms.TotalAlloc, ms.HeapAlloc
	s.done.Go(func() {
		var ms runtime.MemStats
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			s.peak = max(s.peak, ms.HeapAlloc)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// finish stops sampling and returns the peak heap growth over the settled
// heap before the call, and the bytes allocated during it.
func (s *memSampler) finish() (peakGrowth, allocated uint64) {
	close(s.stop)
	s.done.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return max(s.peak, ms.HeapAlloc) - s.base, ms.TotalAlloc - s.total0
}

func TestMemoryLargeRequestBody(t *testing.T) {
	checkFlat(t, "request", func(size int64) (peak, allocated uint64) {
		var got int64
		var gotCRC uint32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := crc32.NewIEEE()
			got, _ = io.Copy(h, r.Body)
			gotCRC = h.Sum32()
			w.Header().Set("Content-Type", "application/json")
			w.Write(okBody(1, false, false, false))
		}))
		defer srv.Close()
		rec := middleware.NewRecorder()
		defer rec.Close()
		client := rec.Client(nil)

		// A chat request whose one message is size bytes long, streamed
		// from a reader: no GetBody, so the recorder must pass the body
		// through without keeping it.
		head, tail := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"`, `"}]}`
		newBody := func() io.Reader {
			return io.MultiReader(strings.NewReader(head), &patternReader{n: size - int64(len(head)+len(tail))}, strings.NewReader(tail))
		}
		h := crc32.NewIEEE()
		io.Copy(h, newBody())
		wantCRC := h.Sum32()

		s := startSampler()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/v1/chat/completions", newBody())
		require.NoError(t, err)
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		rs := rec.History().Records()
		peak, allocated = s.finish()

		require.Equal(t, size, got, "the server got every byte")
		require.Equal(t, wantCRC, gotCRC, "and the bytes it got are the ones sent")
		require.Len(t, rs, 1)
		assert.True(t, rs[0].Outcome.OK, "%+v", rs[0].Outcome)
		assert.Contains(t, rs[0].Truncated, "args", "the cut capture is marked")
		return peak, allocated
	})
}

func TestMemoryLargeStreamedResponse(t *testing.T) {
	// One event of 32 KiB, written again and again: the server holds one,
	// the client none.
	content := strings.Repeat("x", 32<<10)
	event := []byte(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n")
	last := []byte(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":999,"total_tokens":1002}}` + "\n\ndata: [DONE]\n\n")
	checkFlat(t, "streamed response", func(size int64) (peak, allocated uint64) {
		events := int(size / int64(len(event)))
		var sentCRC uint32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			h := crc32.NewIEEE()
			out := io.MultiWriter(w, h)
			rc := http.NewResponseController(w)
			for i := range events {
				out.Write(event)
				if i%8 == 0 {
					rc.Flush()
				}
			}
			out.Write(last)
			sentCRC = h.Sum32()
		}))
		defer srv.Close()
		rec := middleware.NewRecorder()
		defer rec.Close()
		client := rec.Client(nil)

		s := startSampler()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/v1/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"a long answer, please"}]}`))
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		h := crc32.NewIEEE()
		n, err := io.Copy(h, resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		rs := rec.History().Records()
		peak, allocated = s.finish()

		require.EqualValues(t, events*len(event)+len(last), n, "the caller got every byte")
		require.Equal(t, sentCRC, h.Sum32(), "and the bytes it got are the ones sent")
		require.Len(t, rs, 1)
		assert.True(t, rs[0].Outcome.OK, "%+v", rs[0].Outcome)
		assert.Equal(t, "stop", rs[0].Outcome.FinishReason, "the tail kept the last events")
		if assert.NotNil(t, rs[0].Usage) {
			assert.Equal(t, 1002, rs[0].Usage.TotalTokens)
		}
		return peak, allocated
	})
}

// cannedTransport answers every request at once with a small chat
// completion, so that 100,000 calls measure the recorder, not the network.
type cannedTransport struct{}

var cannedBody = okBody(7, false, false, false)

func (cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(cannedBody)),
		ContentLength: int64(len(cannedBody)),
		Request:       req,
	}, nil
}

func TestMemoryHistoryBounded(t *testing.T) {
	const capacity = 1000
	calls := 100_000
	if raceEnabled && os.Getenv("LLMHISTORY_LONG") == "" {
		calls = 20_000
	}
	history := record.NewMemory(capacity)
	rec := middleware.NewRecorder(middleware.WithHistory(history))
	defer rec.Close()
	client := &http.Client{Transport: middleware.Chain(cannedTransport{}, rec.Middleware())}

	call := func(n int) {
		// Ten calls per conversation: traces come and go, as in a server.
		ctx := middleware.WithTrace(context.Background(), fmt.Sprintf("conversation-%d", n/10))
		body := fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"question %d: %s"}]}`, n, pattern)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://llm.invalid/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	run := func(from, to int) {
		var wg sync.WaitGroup
		const workers = 8
		for w := range workers {
			wg.Go(func() {
				for n := from + w; n < to; n += workers {
					call(n)
				}
			})
		}
		wg.Wait()
		require.NoError(t, rec.Flush())
	}

	before := settledHeap()
	// Fill the history twice over, and the recorder's memory of
	// conversations (middleware.DefaultConversations traces of ten calls):
	// from here on both hold their capacity, and memory must stay where it
	// is however many calls follow.
	fill := max(2*capacity, min(calls/2, 10*middleware.DefaultConversations+10_000))
	run(0, fill)
	full := settledHeap()
	start := time.Now()
	run(fill, calls)
	elapsed := time.Since(start)
	end := settledHeap()

	st := rec.Stats()
	assert.EqualValues(t, calls, st.Recorded)
	assert.Zero(t, st.Pending)
	assert.Equal(t, capacity, history.Len())
	assert.EqualValues(t, calls-capacity, history.Dropped())
	t.Logf("%d calls in %v; heap: %.2f MiB before, %.2f MiB with the history full (%d records), %.2f MiB after all calls (%+.0f KiB)",
		calls, elapsed.Round(time.Millisecond), mib(before), mib(full), capacity, mib(end), (float64(end)-float64(full))/1024)
	assert.Less(t, int64(end)-int64(full), int64(1<<20),
		"memory grows with the calls made, not with the history's capacity: something is kept per call")
	runtime.KeepAlive(rec)
}

package proof

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/middleware"
)

// The stream latency benchmark measures what the recorder adds to the
// moment each event of a server-sent stream reaches the caller. The server
// and the caller share a clock (one process), so each event carries the
// time it was written and flushed, and the caller notes when its read
// returns the event: the difference is the event's delay. The same stream
// (same events, same pauses) goes through a bare transport and through the
// recorder, in the same run.

// latencyEpoch is the shared clock's zero: times are durations since it,
// monotonic.
var latencyEpoch = time.Now()

const sentKey = `"sent_ns":`

// latencyServer streams events OpenAI chat chunks, pausing 200 µs to 1 ms
// (drawn from the request's seed) before each.
func latencyServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		events, _ := strconv.Atoi(r.URL.Query().Get("events"))
		seed, _ := strconv.ParseUint(r.URL.Query().Get("seed"), 10, 64)
		rng := rand.New(rand.NewPCG(seed, 0))
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		rc.Flush()
		buf := make([]byte, 0, 512)
		for i := range events {
			time.Sleep(200*time.Microsecond + time.Duration(rng.Int64N(int64(800*time.Microsecond))))
			buf = append(buf[:0], `data: {"id":"chatcmpl-lat","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"token `...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, ` "},"finish_reason":null}],`+sentKey...)
			buf = strconv.AppendInt(buf, int64(time.Since(latencyEpoch)), 10)
			buf = append(buf, "}\n\n"...)
			w.Write(buf)
			rc.Flush()
		}
		io.WriteString(w, `data: {"id":"chatcmpl-lat","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// streamDelays reads one stream of events through client and appends each
// event's delay to delays.
func streamDelays(tb testing.TB, client *http.Client, url string, events int, seed uint64, delays []time.Duration) []time.Duration {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
		fmt.Sprintf("%s/v1/chat/completions?events=%d&seed=%d", url, events, seed),
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Count."}]}`))
	require.NoError(tb, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(tb, err)
	defer resp.Body.Close()
	// A bufio.Reader over the body, as SDKs read streams: a line is
	// available as soon as the read that brought it returns.
	br := bufio.NewReaderSize(resp.Body, 4096)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		now := time.Since(latencyEpoch)
		if i := bytes.Index(line, []byte(sentKey)); i >= 0 {
			rest := line[i+len(sentKey):]
			sent, perr := strconv.ParseInt(string(rest[:bytes.IndexByte(rest, '}')]), 10, 64)
			require.NoError(tb, perr)
			delays = append(delays, now-time.Duration(sent))
			n++
		}
		if err == io.EOF {
			break
		}
		require.NoError(tb, err)
	}
	require.Equal(tb, events, n, "every event arrived")
	return delays
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// BenchmarkStreamEventLatency reports, per event of a 1,000-event stream
// with 200 µs–1 ms pauses, the delay from the server's flush to the
// caller's read returning it: p50-µs and p99-µs, bare and through the
// recorder. One op is one stream. Compare the two lines; run with
// -count 6 and benchstat for spreads.
func BenchmarkStreamEventLatency(b *testing.B) {
	srv := latencyServer(b)
	const events = 1000
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	rec := middleware.NewRecorder()
	defer rec.Close()
	for _, bc := range []struct {
		name   string
		client *http.Client
	}{
		{"bare", &http.Client{Transport: base}},
		{"recorder", rec.Client(&http.Client{Transport: base})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			delays := make([]time.Duration, 0, events*b.N)
			seed := uint64(0)
			for b.Loop() {
				seed++
				delays = streamDelays(b, bc.client, srv.URL, events, seed, delays)
			}
			slices.Sort(delays)
			b.ReportMetric(float64(percentile(delays, 0.50).Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(percentile(delays, 0.99).Nanoseconds())/1e3, "p99-µs")
		})
	}
}

// TestStreamEventLatencyHarness checks the benchmark's machinery on a
// short stream, without timing anything: every event arrives, in both
// configurations, with a delay that is a delay.
func TestStreamEventLatencyHarness(t *testing.T) {
	srv := latencyServer(t)
	rec := middleware.NewRecorder()
	defer rec.Close()
	for _, client := range []*http.Client{http.DefaultClient, rec.Client(nil)} {
		delays := streamDelays(t, client, srv.URL, 50, 1, nil)
		require.Len(t, delays, 50)
		for _, d := range delays {
			require.Positive(t, d)
		}
	}
	rs := rec.History().Records()
	require.Len(t, rs, 1)
	require.True(t, rs[0].Outcome.OK, "%+v", rs[0].Outcome)
}

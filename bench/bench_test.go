package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// The payloads (a 4 KiB chat request and response, a 100-event stream)
// are middleware.BenchmarkRecorder's too: see internal/benchdata.
var (
	requestBody  = benchdata.Request
	responseBody = benchdata.Response
	streamBody   = benchdata.Stream
)

func server() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasPrefix(r.URL.Path, "/stream/") {
			w.Header().Set("Content-Type", "text/event-stream")
			// Flush per event, as a provider does.
			f := w.(http.Flusher)
			for ev := range bytes.SplitAfterSeq(streamBody, []byte("\n\n")) {
				w.Write(ev)
				f.Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(responseBody)
	}))
}

type transport struct {
	name string
	make func(base http.RoundTripper) (http.RoundTripper, func())
}

var transports = []transport{
	{"bare", func(base http.RoundTripper) (http.RoundTripper, func()) { return base, func() {} }},
	// The recorder with its default in-memory history, then with each
	// kind of sink added: a JSONL file, the same file behind an Async
	// queue, and a slog JSON handler writing to a file.
	{"recorder", func(base http.RoundTripper) (http.RoundTripper, func()) {
		rec := middleware.NewRecorder()
		return middleware.Chain(base, rec.Middleware()), func() { rec.Close() }
	}},
	{"recorder+jsonl", func(base http.RoundTripper) (http.RoundTripper, func()) {
		f := mustJSONL()
		rec := middleware.NewRecorder(middleware.WithSink(f))
		return middleware.Chain(base, rec.Middleware()), func() { rec.Close() }
	}},
	{"recorder+async-jsonl", func(base http.RoundTripper) (http.RoundTripper, func()) {
		a := record.NewAsync(mustJSONL(), nil)
		rec := middleware.NewRecorder(middleware.WithSink(a))
		return middleware.Chain(base, rec.Middleware()), func() { rec.Close() }
	}},
	{"recorder+slog", func(base http.RoundTripper) (http.RoundTripper, func()) {
		f, err := os.CreateTemp("", "llmhistory-bench-*.log")
		if err != nil {
			panic(err)
		}
		os.Remove(f.Name()) // the open file lives on until closed
		rec := middleware.NewRecorder(middleware.WithSink(record.NewSlog(slog.New(slog.NewJSONHandler(f, nil)))))
		return middleware.Chain(base, rec.Middleware()), func() { rec.Close(); f.Close() }
	}},
	// The recorder exporting every record as an OpenTelemetry span and
	// GenAI metrics (otelsink), the exporter discarding the batches: the
	// cost of the export without a network, beside the other sinks and
	// otelhttp (whose spans likewise go nowhere).
	{"recorder+otel", func(base http.RoundTripper) (http.RoundTripper, func()) {
		sink, err := otelsink.New(otelsink.Options{SpanExporter: tracetest.NewNoopExporter(), MetricReader: sdkmetric.NewManualReader()})
		if err != nil {
			panic(err)
		}
		rec := middleware.NewRecorder(middleware.WithSink(sink))
		return middleware.Chain(base, rec.Middleware()), func() { rec.Close() }
	}},
	// The floor: the least a recorder that keeps what this one keeps must
	// do (floor_test.go).
	{"floor", func(base http.RoundTripper) (http.RoundTripper, func()) { return newFloorRecorder(base) }},
	{"otelhttp", func(base http.RoundTripper) (http.RoundTripper, func()) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp)), func() { tp.Shutdown(context.Background()) }
	}},
	// otelhttp as it is deployed: its spans go through a batch span
	// processor to an exporter (one discarding the batches, as for
	// recorder+otel). Without a processor, as above, an ended span goes
	// nowhere: no queue, no goroutine to hand it to.
	{"otelhttp+export", func(base http.RoundTripper) (http.RoundTripper, func()) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp)), func() { tp.Shutdown(context.Background()) }
	}},
}

func BenchmarkRoundTrip(b *testing.B) {
	srv := server()
	defer srv.Close()
	// Both paths end in /chat/completions: the recorder parses them as
	// OpenAI calls, as it would in production.
	for _, call := range []string{"json", "stream"} {
		path := "/" + call + "/v1/chat/completions"
		for _, tr := range transports {
			b.Run(fmt.Sprintf("call=%s/transport=%s", call, tr.name), func(b *testing.B) {
				base := &http.Transport{MaxIdleConnsPerHost: 4}
				defer base.CloseIdleConnections()
				rt, done := tr.make(base)
				defer done()
				client := &http.Client{Transport: rt}
				url := srv.URL + path
				b.ReportAllocs()
				gc0 := gcTime() // first: its collection is no call's
				cpu0 := cpuTime()
				for b.Loop() {
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(requestBody))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.Copy(io.Discard, resp.Body); err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
				}
				// CPU time of the whole process (client, server, recorder's
				// goroutines): steadier than wall time on a shared machine.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				// The garbage collector's share of it, as the runtime
				// estimates it: what a call's allocations and the memory a
				// transport keeps cost in collection, apart from its work.
				b.ReportMetric(float64(gcTime()-gc0)/float64(b.N), "gc-cpu-ns/op")
			})
		}
	}
}

// BenchmarkInProcess is BenchmarkRoundTrip with the network taken out:
// the base transport answers from memory (a stream one event per Read),
// so that what each transport adds is its own work, without the
// scheduling that a loopback server, the client and a transport's
// goroutines cost one another on two cores.
func BenchmarkInProcess(b *testing.B) {
	for _, call := range []string{"json", "stream"} {
		base := benchdata.JSON
		if call == "stream" {
			base = benchdata.SSE
		}
		for _, tr := range transports {
			b.Run(fmt.Sprintf("call=%s/transport=%s", call, tr.name), func(b *testing.B) {
				rt, done := tr.make(base)
				defer done()
				client := &http.Client{Transport: rt}
				buf := make([]byte, 32<<10)
				b.ReportAllocs()
				gc0 := gcTime()
				cpu0 := cpuTime()
				for b.Loop() {
					req, _ := http.NewRequest(http.MethodPost, "http://api.example/v1/chat/completions", bytes.NewReader(requestBody))
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.CopyBuffer(io.Discard, resp.Body, buf); err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(gcTime()-gc0)/float64(b.N), "gc-cpu-ns/op")
			})
		}
	}
}

// mustJSONL opens a JSONL sink on a fresh temporary file, removed at once
// (the open file lives on until the sink closes it).
func mustJSONL() *record.JSONL {
	f, err := os.CreateTemp("", "llmhistory-bench-*.jsonl")
	if err != nil {
		panic(err)
	}
	f.Close()
	j, err := record.OpenJSONL(f.Name())
	if err != nil {
		panic(err)
	}
	os.Remove(f.Name())
	return j
}

// gcTime returns the runtime's estimate of the CPU time its garbage
// collector has used (marking, assists, pauses), brought up to date by a
// collection: the estimate is only updated when a cycle ends.
func gcTime() time.Duration {
	runtime.GC()
	m := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(m)
	return time.Duration(m[0].Value.Float64() * 1e9)
}

// cpuTime returns the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

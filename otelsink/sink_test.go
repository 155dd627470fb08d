package otelsink_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmhistory/llmhistory/internal/otelsinktest"
	"github.com/llmhistory/llmhistory/internal/otlpfake"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

// stuckExporter stands for a collector that does not answer: its first
// export tells entered and then waits until release is closed.
type stuckExporter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	spans   int
}

func newStuck() *stuckExporter {
	return &stuckExporter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (e *stuckExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.once.Do(func() { close(e.entered) })
	<-e.release
	e.mu.Lock()
	e.spans += len(spans)
	e.mu.Unlock()
	return nil
}

func (e *stuckExporter) Shutdown(context.Context) error { return nil }

func rec(id string) record.Record {
	return record.Record{CallID: id, Timestamp: "2026-11-21T09:30:00Z", Speaker: "user",
		MethodName: "openai.chat.completions.create", Outcome: record.Success("chat.completion")}
}

// A collector that does not answer costs records, counted, never time:
// Append returns at once with record.ErrQueueFull.
func TestFullQueueDrops(t *testing.T) {
	exp := newStuck()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, QueueSize: 4, BatchSize: 1})
	require.NoError(t, err)
	require.NoError(t, sink.Append(context.Background(), rec("first")))
	<-exp.entered // the sink's goroutine is stuck in the export now
	for i := range 4 {
		require.NoError(t, sink.Append(context.Background(), rec(string(rune('a'+i)))), "the queue has room for four")
	}
	for range 10 {
		assert.ErrorIs(t, sink.Append(context.Background(), rec("dropped")), record.ErrQueueFull)
	}
	assert.Equal(t, otelsink.Stats{Appended: 15, Dropped: 10, Queued: 4}, sink.Stats())

	close(exp.release)
	require.NoError(t, sink.Close())
	assert.Equal(t, otelsink.Stats{Appended: 15, Exported: 5, Dropped: 10}, sink.Stats())
	assert.Equal(t, 5, exp.spans)
	assert.ErrorIs(t, sink.Append(context.Background(), rec("late")), record.ErrClosed)
	assert.Equal(t, uint64(11), sink.Stats().Dropped)
}

// WaitWhenFull, for a tool exporting a file, waits for room instead, as
// long as its context lets it.
func TestWaitWhenFull(t *testing.T) {
	exp := newStuck()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, QueueSize: 1, BatchSize: 1, WaitWhenFull: true})
	require.NoError(t, err)
	require.NoError(t, sink.Append(context.Background(), rec("first")))
	<-exp.entered
	require.NoError(t, sink.Append(context.Background(), rec("queued")))

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, sink.Append(canceled, rec("given up")), context.Canceled, "the queue is full and the context ended")

	waited := make(chan error)
	go func() { waited <- sink.Append(context.Background(), rec("waits")) }()
	close(exp.release)
	require.NoError(t, <-waited)
	require.NoError(t, sink.Close())
	assert.Equal(t, otelsink.Stats{Appended: 4, Exported: 3, Dropped: 1}, sink.Stats())
}

// Behind a recorder, a stuck collector never delays a call; the
// recorder's shutdown gives up on the sink and says so.
func TestStuckCollectorNeverDelaysCalls(t *testing.T) {
	exp := newStuck()
	defer close(exp.release) // let the sink's goroutine end after the test
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, QueueSize: 2, BatchSize: 1})
	require.NoError(t, err)
	a := otelsinktest.NewApp(t, sink)
	for range 30 {
		a.Call(t, context.Background(), middleware.NewCallID(), "", false) // would hang here if the sink were in the way
	}
	<-exp.entered
	// Every record reaches the sink's Append, through the recorder's own
	// queue for it. (Recorder.Flush would wait for the sink's flush, which
	// waits for the stuck export.)
	otlpfake.WaitFor(t, "every record at the sink", func() bool { return sink.Stats().Appended == 30 })
	st := sink.Stats()
	assert.Equal(t, otelsink.Stats{Appended: 30, Dropped: 27, Queued: 2}, st, "one in the stuck export, two queued, the rest dropped")
	assert.Equal(t, uint64(0), a.Rec.Stats().Dropped, "the recorder's queue for the sink never filled: the sink's Append never waits")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond) // Shutdown must give up, not wait
	defer cancel()
	err = a.Rec.Shutdown(ctx)
	var se *middleware.ShutdownError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"*otelsink.Sink"}, se.Sinks)
}

// A failing collector is counted, returned by Flush, given to OnError,
// and costs no call anything.
func TestFailingCollector(t *testing.T) {
	dead := otlpfake.FreeAddr(t) // nothing listens there
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(dead), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	var mu sync.Mutex
	var reported []error
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp, OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}})
	require.NoError(t, err)
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, sink.Append(context.Background(), rec(id)))
	}
	require.Error(t, sink.Flush())
	assert.Equal(t, otelsink.Stats{Appended: 3, Failed: 3}, sink.Stats())
	mu.Lock()
	assert.Len(t, reported, 1, "one batch, one error")
	mu.Unlock()
	require.NoError(t, sink.Close())
}

// FromEnv honours the standard OTLP variables: endpoint, protocol and
// headers, for both protocols.
func TestFromEnv(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			c := otlpfake.Start(t)
			addr := c.HTTP
			if protocol == "grpc" {
				addr = c.GRPC
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=checkout")
			t.Setenv("OTEL_SERVICE_NAME", "exporter-test")
			sink, err := otelsink.FromEnv(context.Background(), otelsink.Options{})
			require.NoError(t, err)
			r := rec("from-env")
			r.Kwargs, r.DurationMS = []byte(`{"model":"gpt-4o-mini"}`), 10
			require.NoError(t, sink.Append(context.Background(), r))
			require.NoError(t, sink.Close())

			otlpfake.WaitFor(t, "the span", func() bool { return c.SpanCount() == 1 })
			otlpfake.WaitFor(t, "the metrics", func() bool { return len(c.Metrics()) > 0 })
			assert.Contains(t, c.Spans(t), "from-env")
			for _, e := range c.Exports() {
				assert.Equal(t, protocol, e.Protocol, "%s went by the protocol asked for", e.Signal)
				assert.Equal(t, []string{"checkout"}, e.Header["x-team"], "%s carry the headers", e.Signal)
			}
			res := c.Traces()[0].GetResourceSpans()[0].GetResource()
			assert.Equal(t, "exporter-test", otlpfake.Attrs(res.GetAttributes())["service.name"])
		})
	}
}

func TestFromEnvRefuses(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, `OTEL_TRACES_EXPORTER="zipkin": only otlp and none are supported`},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTLP protocol "http/json"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "thrift"}, `OTLP protocol "thrift"`},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		_, err := otelsink.FromEnv(context.Background(), otelsink.Options{})
		assert.ErrorContains(t, err, tc.want)
		for k := range tc.env {
			t.Setenv(k, "")
		}
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	_, err := otelsink.FromEnv(context.Background(), otelsink.Options{})
	assert.True(t, errors.Is(err, otelsink.ErrNoExporter), "%v", err)
}

// Closing twice, and flushing after Close, are safe.
func TestCloseTwice(t *testing.T) {
	sink, err := otelsink.New(otelsink.Options{SpanExporter: newStuckReleased()})
	require.NoError(t, err)
	require.NoError(t, sink.Close())
	require.NoError(t, sink.Close())
	assert.ErrorIs(t, sink.Flush(), record.ErrClosed)
	_, err = otelsink.New(otelsink.Options{})
	assert.ErrorIs(t, err, otelsink.ErrNoExporter)
}

func newStuckReleased() *stuckExporter {
	e := newStuck()
	close(e.release)
	return e
}

// A malformed entry of OTEL_RESOURCE_ATTRIBUTES costs that entry, not
// the sink.
func TestPartialResource(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=checkout,broken")
	exp := tracetest.NewInMemoryExporter()
	sink, err := otelsink.New(otelsink.Options{SpanExporter: exp})
	require.NoError(t, err)
	require.NoError(t, sink.Append(context.Background(), rec("r")))
	require.NoError(t, sink.Flush())
	team, ok := exp.GetSpans()[0].Resource.Set().Value("team")
	assert.True(t, ok)
	assert.Equal(t, "checkout", team.AsString())
	require.NoError(t, sink.Close())
}

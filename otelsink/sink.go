package otelsink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/record"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/llmhistory/llmhistory/otelsink"

// Defaults of [Options].
const (
	DefaultQueueSize     = 2048
	DefaultBatchSize     = 512
	DefaultBatchBytes    = 2 << 20
	DefaultBatchTimeout  = 5 * time.Second
	DefaultExportTimeout = 30 * time.Second
)

// ErrNoExporter is returned by [New] when there is nowhere to export to.
var ErrNoExporter = errors.New("otelsink: no span exporter, metric reader or meter provider")

// Options configures [New]. Every zero field means its default.
type Options struct {
	// SpanExporter receives the spans, one per record: otlptracehttp or
	// otlptracegrpc for a Collector. The sink owns it: Close shuts it
	// down. Nil: no spans.
	SpanExporter sdktrace.SpanExporter

	// MetricReader collects the GenAI client metrics: a periodic reader
	// over otlpmetrichttp or otlpmetricgrpc for a Collector. The sink
	// builds a meter provider of its own on it, with Resource, and owns
	// both: Flush flushes them and Close shuts them down.
	MetricReader sdkmetric.Reader
	// MeterProvider, instead of MetricReader, records the metrics with
	// a provider the application already has. The sink does not own it:
	// Flush flushes it when it can, Close leaves it open.
	MeterProvider metric.MeterProvider

	// Resource describes the service whose records these are; nil means
	// resource.Default() with OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES read when New is called.
	Resource *resource.Resource

	// Content says whether spans carry messages, system instructions,
	// outputs and program source (redacted). The default, ContentFromEnv,
	// is off unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
	// says SPAN_ONLY, SPAN_AND_EVENT or true ([EnvCaptureContent]). The
	// output is the record's answer, which a recorder keeps unless made
	// with middleware.WithoutOutput.
	Content Content
	// MaxContentBytes bounds each content attribute: the earliest
	// messages are left out, then texts are cut, and the attribute
	// llmhistory.content_truncated says which were. Default
	// DefaultMaxContentBytes.
	MaxContentBytes int

	// ServerAddress, when set and not "", gives the server.address and
	// server.port of a record: a URL, "host:port", or a bare host (port
	// 443). It wins over the request's URL, which [Middleware] reads, and
	// over the record's server_address and server_port, which the
	// recorder takes from that URL, so that a call sent through a proxy
	// can name the server behind it, as the conventions ask. Nil (or ""):
	// the request's URL, when Middleware saw it, else the record's
	// server_address and server_port (a record written before they
	// existed has neither attribute).
	ServerAddress func(record.Record) string

	// Sampler decides whether the span of a record that has no caller's
	// span is exported. A span under the caller's span (the context's,
	// or a traceparent header's through Middleware) always follows the
	// caller's decision, so that no exported span has a parent that never
	// is. The sampler sees no parent: the parent of a nested call is a
	// span of this sink, decided the same way, so a sampler that decides
	// by trace ID, as sdktrace.TraceIDRatioBased does, keeps or drops a
	// conversation whole. Nil: OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG as the SDK reads them (always_on,
	// always_off, traceidratio and their parentbased_ forms), and
	// always_on when unset. Metrics count every record, sampled or not.
	Sampler sdktrace.Sampler

	// QueueSize is how many records may wait to become spans; default
	// DefaultQueueSize. When it is full a record is dropped and counted,
	// never waited for, unless WaitWhenFull is set.
	QueueSize int
	// WaitWhenFull makes Append wait for room in the queue, until its
	// context ends, instead of dropping. It is for a tool that exports a
	// file (llmhistory export) and wants every record; never set it on a
	// sink a recorder feeds, where a full queue must cost records, not
	// time.
	WaitWhenFull bool
	// BatchSize and BatchBytes bound one export: at most BatchSize spans
	// (default DefaultBatchSize) of about BatchBytes of attributes
	// (default DefaultBatchBytes, half of a Collector's default gRPC
	// message limit, which matters when content is captured).
	BatchSize, BatchBytes int
	// BatchTimeout is the longest a span waits for its batch to fill;
	// default DefaultBatchTimeout.
	BatchTimeout time.Duration
	// ExportTimeout bounds one export, the exporter's own retries
	// included; default DefaultExportTimeout.
	ExportTimeout time.Duration

	// OnError, when set, is called from the sink's goroutine with each
	// export error. Errors are counted in Stats either way.
	OnError func(error)
}

// Stats counts what a [Sink] did. The counters only grow, except Queued.
type Stats struct {
	Appended  uint64 // records taken
	Exported  uint64 // spans the exporter accepted
	Dropped   uint64 // records that became no span: the queue was full, a wait ended, or the sink was closed
	Failed    uint64 // spans of batches the exporter failed on, after its own retries
	Unsampled uint64 // records whose span sampling left out: the caller's span was not sampled, or the sampler said no
	Queued    int    // records waiting to become spans
}

// Sink exports records as OpenTelemetry spans and metrics. It implements
// [record.Sink], [record.Flusher] and io.Closer, and is safe for
// concurrent use. Append never waits (unless [Options.WaitWhenFull]):
// records queue for the sink's goroutine, which makes the spans and
// exports them in batches.
type Sink struct {
	tp       *sdktrace.TracerProvider // nil without a span exporter
	tracer   trace.Tracer
	exporter sdktrace.SpanExporter
	batch    *batch
	attrs    []attribute.KeyValue // the goroutine's buffer for a span's attributes

	inst    *instruments
	ownMP   *sdkmetric.MeterProvider    // built on Options.MetricReader; shut down by Close
	flushMP func(context.Context) error // flushes the meter provider, ours or the application's

	content       bool
	maxContent    int
	serverAddress func(record.Record) string
	untraced      map[string]trace.TraceID // the goroutine's: see untracedTrace
	wait          bool
	batchSize     int
	batchBytes    int
	batchTimeout  time.Duration
	exportTimeout time.Duration
	onError       func(error)

	mu     sync.RWMutex // held for reading while queueing, for writing to close
	closed bool
	queue  chan item
	done   chan struct{} // closed when the worker has exported the last batch

	closeOnce sync.Once
	closeDone chan struct{}
	closeErr  error

	appended, exported, dropped, failed, unsampled atomic.Uint64
}

var (
	_ record.Sink    = (*Sink)(nil)
	_ record.Flusher = (*Sink)(nil)
)

type item struct {
	ctx   context.Context
	rec   record.Record
	req   request
	names names
	flush chan error // non-nil: a flush request, answered when reached
}

// New returns a sink exporting to the exporters of opts. It builds a
// tracer provider of its own on opts.SpanExporter rather than take the
// application's, because a record's span must have IDs derived from the
// record (so that spans of one conversation link up whatever order they
// arrive in) and the SDK takes IDs only from a provider's ID generator;
// owning it also gives the sink its own bounded batching, which drops and
// counts rather than blocks.
func New(opts Options) (*Sink, error) {
	if opts.SpanExporter == nil && opts.MetricReader == nil && opts.MeterProvider == nil {
		return nil, ErrNoExporter
	}
	if opts.MetricReader != nil && opts.MeterProvider != nil {
		return nil, errors.New("otelsink: give a MetricReader or a MeterProvider, not both")
	}
	res := opts.Resource
	if res == nil {
		// resource.Default reads the environment once per process; the
		// environment is read again here, so that it wins as it should.
		env, err := resource.New(context.Background(), resource.WithFromEnv())
		if err != nil && !errors.Is(err, resource.ErrPartialResource) {
			// A malformed entry of OTEL_RESOURCE_ATTRIBUTES leaves the
			// others, as the SDK's own default resource does.
			return nil, fmt.Errorf("otelsink: resource: %w", err)
		}
		if res, err = resource.Merge(resource.Default(), env); err != nil {
			return nil, fmt.Errorf("otelsink: resource: %w", err)
		}
	}
	s := &Sink{
		content:       opts.Content.OnSpans(),
		maxContent:    or(opts.MaxContentBytes, DefaultMaxContentBytes),
		serverAddress: opts.ServerAddress,
		wait:          opts.WaitWhenFull,
		batchSize:     or(opts.BatchSize, DefaultBatchSize),
		batchBytes:    or(opts.BatchBytes, DefaultBatchBytes),
		batchTimeout:  or(opts.BatchTimeout, DefaultBatchTimeout),
		exportTimeout: or(opts.ExportTimeout, DefaultExportTimeout),
		onError:       opts.OnError,
		done:          make(chan struct{}),
		closeDone:     make(chan struct{}),
	}
	mp := opts.MeterProvider
	if opts.MetricReader != nil {
		s.ownMP = sdkmetric.NewMeterProvider(sdkmetric.WithReader(opts.MetricReader), sdkmetric.WithResource(res))
		mp = s.ownMP
	}
	if mp != nil {
		inst, err := newInstruments(mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL), metric.WithInstrumentationVersion(ScopeVersion)))
		if err != nil {
			if s.ownMP != nil {
				_ = s.ownMP.Shutdown(context.Background())
			}
			return nil, fmt.Errorf("otelsink: metrics: %w", err)
		}
		s.inst = inst
		if f, ok := mp.(interface{ ForceFlush(context.Context) error }); ok {
			s.flushMP = f.ForceFlush
		}
	}
	if opts.SpanExporter != nil {
		root := opts.Sampler
		if root == nil {
			var err error
			if root, err = samplerFromEnv(); err != nil {
				if s.ownMP != nil {
					_ = s.ownMP.Shutdown(context.Background())
				}
				return nil, err
			}
		}
		s.exporter = opts.SpanExporter
		s.batch = &batch{}
		s.untraced = make(map[string]trace.TraceID)
		s.tp = sdktrace.NewTracerProvider(
			sdktrace.WithResource(res),
			sdktrace.WithIDGenerator(ids{}),
			sdktrace.WithSampler(sampler{root: root}),
			sdktrace.WithSpanProcessor(s.batch),
		)
		s.tracer = s.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL), trace.WithInstrumentationVersion(ScopeVersion))
		s.queue = make(chan item, or(opts.QueueSize, DefaultQueueSize))
		go s.run()
	} else {
		close(s.done)
	}
	return s, nil
}

func or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Append records r's metrics and queues r to become a span. It never
// waits unless [Options.WaitWhenFull] is set: when the queue is full the
// record is dropped, counted, and [record.ErrQueueFull] returned. After
// Close it returns [record.ErrClosed]. The context's values are kept (its
// span becomes the parent of r's span) but not its cancellation.
func (s *Sink) Append(ctx context.Context, r record.Record) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.dropped.Add(1)
		return record.ErrClosed
	}
	it := item{ctx: ctx, rec: r, req: readKwargs(r.Kwargs)}
	it.names = s.names(ctx, &it.rec, &it.req)
	if s.inst != nil {
		// Metrics are recorded here, not with the span, so that a slow
		// trace backend that fills the queue does not cost the metrics.
		s.inst.record(ctx, &it.rec, it.names)
	}
	s.appended.Add(1)
	if s.queue == nil {
		return nil // metrics only
	}
	if ctx.Done() != nil {
		it.ctx = context.WithoutCancel(ctx)
	}
	select {
	case s.queue <- it:
		return nil
	default:
	}
	if s.wait {
		select {
		case s.queue <- it:
			return nil
		case <-ctx.Done():
			s.dropped.Add(1)
			return ctx.Err()
		}
	}
	s.dropped.Add(1)
	return record.ErrQueueFull
}

// names reads what the span and the metrics share.
func (s *Sink) names(ctx context.Context, r *record.Record, q *request) names {
	op, _ := operation(r.MethodName)
	n := names{op: op, provider: provider(r.MethodName), requestModel: q.model,
		responseModel: responseModel(r, q.model), errorType: errorType(r)}
	if s.serverAddress != nil {
		n.server = parseServer(s.serverAddress(*r))
	}
	if n.server.host == "" {
		if info := requestFrom(ctx); info != nil {
			n.server = info.server
		}
	}
	if n.server.host == "" && r.ServerAddress != "" {
		// What the recorder read from the request's URL: a record from a
		// file has it too.
		n.server = server{host: r.ServerAddress}
		if r.ServerPort > 0 && r.ServerPort < 1<<16 {
			n.server.port = r.ServerPort
		}
	}
	return n
}

// Flush waits until every record appended before it is exported (or has
// failed to be), then flushes the metrics. It returns the errors of that
// last export and of the metrics' flush.
func (s *Sink) Flush() error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return record.ErrClosed
	}
	var err error
	if s.queue != nil {
		reply := make(chan error, 1)
		s.queue <- item{flush: reply} // waits for room: a flush is not droppable
		s.mu.RUnlock()
		err = <-reply
	} else {
		s.mu.RUnlock()
	}
	return errors.Join(err, s.flushMetrics(context.Background()))
}

func (s *Sink) flushMetrics(ctx context.Context) error {
	if s.flushMP == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.exportTimeout)
	defer cancel()
	return s.flushMP(ctx)
}

// Close is Shutdown without a bound of its own: each export is still
// bounded by [Options.ExportTimeout]. A recorder that closes its sinks
// bounds the wait itself.
func (s *Sink) Close() error { return s.Shutdown(context.Background()) }

// Shutdown stops taking records, exports those queued, shuts down the
// span exporter and the sink's own meter provider (exporting the last
// metrics) and returns their errors. If ctx ends first it gives up and
// returns a [*record.UndeliveredError] counting the records that were
// still queued; they stay counted as neither exported nor failed.
// Shutdown is safe to call more than once.
func (s *Sink) Shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.queue != nil {
			close(s.queue)
		}
		s.mu.Unlock()
		go func() {
			<-s.done
			var errs []error
			if s.tp != nil {
				errs = append(errs, s.tp.Shutdown(ctx), s.exporter.Shutdown(ctx))
			}
			if s.ownMP != nil {
				errs = append(errs, s.ownMP.Shutdown(ctx))
			} else {
				errs = append(errs, s.flushMetrics(ctx))
			}
			s.closeErr = errors.Join(errs...)
			close(s.closeDone)
		}()
	})
	select {
	case <-s.closeDone:
		return s.closeErr
	case <-ctx.Done():
	}
	select {
	case <-s.closeDone:
		return s.closeErr
	default:
	}
	return &record.UndeliveredError{Sink: "*otelsink.Sink", Records: s.queued(), Closing: s.queued() == 0, Err: ctx.Err()}
}

// Stats returns the counters; they are safe to read at any time.
func (s *Sink) Stats() Stats {
	return Stats{
		Appended:  s.appended.Load(),
		Exported:  s.exported.Load(),
		Dropped:   s.dropped.Load(),
		Failed:    s.failed.Load(),
		Unsampled: s.unsampled.Load(),
		Queued:    s.queued(),
	}
}

func (s *Sink) queued() int {
	if s.queue == nil {
		return 0
	}
	return len(s.queue)
}

// run is the sink's goroutine: it turns queued records into spans and
// exports them when a batch is full, BatchTimeout after its first span,
// at a flush, and at Close.
func (s *Sink) run() {
	defer close(s.done)
	timer := time.NewTimer(s.batchTimeout)
	timer.Stop()
	var due <-chan time.Time // the timer's channel while a batch waits
	for {
		select {
		case it, ok := <-s.queue:
			if !ok {
				s.export()
				return
			}
			if it.flush != nil {
				it.flush <- s.export()
				timer.Stop()
				due = nil
				continue
			}
			s.span(&it)
			switch {
			case len(s.batch.spans) >= s.batchSize || s.batch.bytes >= s.batchBytes:
				s.export()
				timer.Stop()
				due = nil
			case due == nil && len(s.batch.spans) > 0:
				timer.Reset(s.batchTimeout)
				due = timer.C
			}
		case <-due:
			s.export()
			due = nil
		}
	}
}

// span makes the span of one record; the batch processor collects it.
func (s *Sink) span(it *item) {
	defer func() {
		// A bug here must cost one record, not the sink's goroutine.
		if p := recover(); p != nil {
			s.failed.Add(1)
			s.report(&record.PanicError{Value: p})
		}
	}()
	r := &it.rec
	start, end := times(r)
	p := s.place(it.ctx, r)
	ctx := it.ctx
	if p.caller {
		ctx = context.WithValue(ctx, callerKey{}, true)
	}
	// A root's context carries no valid span (place found none), and the
	// caller's span is in the context already: only a parent made from
	// the record or a traceparent header is put there.
	if p.parent.IsValid() && !p.parent.Equal(trace.SpanContextFromContext(ctx)) {
		ctx = trace.ContextWithRemoteSpanContext(ctx, p.parent)
	}
	ctx = context.WithValue(ctx, wantKey{}, wantIDs{trace: p.trace, span: spanID(r.CallID)})
	// The buffer is the goroutine's own and reused: the SDK copies the
	// attributes it is given. The ones the conventions name for samplers
	// are given at the start; the rest are set on the span once it is
	// known to be sampled (given to Start, they would be copied once more
	// into its configuration).
	attrs := it.names.sampling(s.attrs[:0])
	_, sp := s.tracer.Start(ctx, it.names.spanName(),
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithTimestamp(start),
		trace.WithAttributes(attrs...))
	if !sp.SpanContext().IsSampled() {
		s.unsampled.Add(1)
		sp.End() // a sampler's RecordOnly span ends here, not exported
		s.attrs = attrs[:0]
		return
	}
	bytes := size(attrs)
	attrs = s.attributes(r, &it.req, it.names, attrs[:0])
	if s.content {
		attrs = contentAttributes(r, it.names.op, s.maxContent, attrs)
	}
	defer func() { s.attrs = attrs[:0] }()
	sp.SetAttributes(attrs...)
	if !r.Outcome.OK {
		sp.SetStatus(codes.Error, statusMessage(r))
	}
	sp.End(trace.WithTimestamp(end))
	s.batch.bytes += bytes + size(attrs) - spanOverhead
}

// times returns a span's start and end: the record's timestamp and its
// duration. A timestamp that does not parse (a record from elsewhere) is
// taken as the time it arrives.
func times(r *record.Record) (time.Time, time.Time) {
	start, err := record.ParseTime(r.Timestamp)
	if err != nil {
		start = time.Now()
	}
	d := time.Duration(r.DurationMS * float64(time.Millisecond))
	if d < 0 {
		d = 0
	}
	return start, start.Add(d)
}

// spanOverhead estimates the bytes of a span's IDs, name, times, status
// and kind on the wire.
const spanOverhead = 128

// size estimates the bytes a span with these attributes takes on the wire.
func size(attrs []attribute.KeyValue) int {
	n := spanOverhead
	for _, kv := range attrs {
		n += len(kv.Key) + 8
		switch kv.Value.Type() {
		case attribute.STRING:
			n += len(kv.Value.AsString())
		case attribute.STRINGSLICE:
			for _, s := range kv.Value.AsStringSlice() {
				n += len(s) + 2
			}
		}
	}
	return n
}

// export sends the batch, counts its spans as exported or failed, and
// returns the exporter's error.
func (s *Sink) export() (err error) {
	spans := s.batch.spans
	if len(spans) == 0 {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = &record.PanicError{Value: p}
		}
		if err != nil {
			s.failed.Add(uint64(len(spans)))
			s.report(err)
		} else {
			s.exported.Add(uint64(len(spans)))
		}
		clear(spans) // the snapshots are the exporter's no more
		s.batch.spans, s.batch.bytes = spans[:0], 0
	}()
	ctx, cancel := context.WithTimeout(context.Background(), s.exportTimeout)
	defer cancel()
	return s.exporter.ExportSpans(ctx, spans)
}

// report hands err to OnError; a panicking callback must not stop the
// sink's goroutine.
func (s *Sink) report(err error) {
	if s.onError == nil {
		return
	}
	defer func() { _ = recover() }()
	s.onError(err)
}

// batch is the span processor of the sink's tracer provider: it collects
// the spans the sink's goroutine ends, for that goroutine to export. Only
// that goroutine ends spans, so it needs no lock.
type batch struct {
	spans []sdktrace.ReadOnlySpan
	bytes int
}

func (b *batch) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (b *batch) OnEnd(s sdktrace.ReadOnlySpan) {
	if s.SpanContext().IsSampled() { // a sampler's RecordOnly is not exported
		b.spans = append(b.spans, s)
	}
}
func (b *batch) Shutdown(context.Context) error   { return nil }
func (b *batch) ForceFlush(context.Context) error { return nil }

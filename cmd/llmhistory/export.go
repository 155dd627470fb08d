package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmhistory/llmhistory/otelsink"
	"github.com/llmhistory/llmhistory/record"
)

func init() {
	register("export", "send JSONL history files or a store to an OpenTelemetry Collector (OTLP)", runExport)
}

const exportAbout = `Export sends the records of each FILE (JSON Lines, as the JSONL sink
writes them; - for standard input; or a store's URL, sqlite:FILE or
postgres://...) to an OpenTelemetry Collector, or any OTLP endpoint, as
spans with the GenAI semantic conventions: one span per record, in the
tree its conversation made. History written before is backfilled, and a
service with no network when it records ships later.

  export OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318
  llmhistory export history.jsonl old/*.jsonl            backfill
  llmhistory export -f /var/log/checkout/history.jsonl   ship as it grows
  zcat history.jsonl.gz | llmhistory export -

Where to: -endpoint, else OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); with neither, export says which to
set and exits 2. The protocol: -protocol, else OTEL_EXPORTER_OTLP_PROTOCOL,
http/protobuf (the default; a Collector listens on port 4318) or grpc
(port 4317). The other standard variables are honoured:
OTEL_EXPORTER_OTLP_HEADERS (a hosted backend's API key), _TIMEOUT,
_COMPRESSION, _CERTIFICATE and their _TRACES_ forms, and OTEL_SERVICE_NAME
and OTEL_RESOURCE_ATTRIBUTES for the spans' service (-service wins).

Messages, system instructions, outputs and program source are not sent
unless -content or OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
asks, and then redacted again. The GenAI metrics are not sent unless
-metrics: they would be counted at the time of the export, and again at
every export of the same file.

Exporting is idempotent at the backend: a span's ID is derived from the
record's call_id, and its trace's from trace_id, so exporting a file again
sends the same spans, which backends keep once (by span ID). An
interrupted or failed export can simply be run again.

Every FILE is opened before anything is sent. Nothing is dropped: export
waits for the exporter rather than skip a record. A line that is not a
record (not JSON, or without the fields every record has) is reported as
FILE:LINE: reason (the first 20 of each kind) and skipped; an input with
lines of which none is a record is not a history file (reported, and the
other inputs still sent). With -f, export follows one FILE as it grows
(through truncation and rotation, as tail does), or one store as it takes
records, until interrupted.

Progress goes to standard error: a line per FILE and a summary with what
the exporter did (exported, failed, dropped); on a terminal, a line
updated in place as it goes. Export stops reading at the first export the
collector refuses or fails (after the exporter's own retries). Interrupt
(Ctrl-C) stops reading and exports what was read.

Exit status: 0 when every record read was exported; 1 when the collector
refused or failed an export, an input could not be read or was not a
history, or an export without -f was interrupted; 2 for bad flags or no
endpoint.`

func runExport(ctx context.Context, args []string, io stdio) int {
	fs := newFlags("export", "[flags] FILE|URL...", exportAbout, io)
	endpoint := fs.String("endpoint", "", "the OTLP endpoint's `URL`, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT)")
	protocol := fs.String("protocol", "", "http/protobuf or grpc (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)")
	service := fs.String("service", "", "the spans' service.name (default: OTEL_SERVICE_NAME)")
	content := fs.Bool("content", false, "send messages, system instructions and outputs, redacted (default: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)")
	metrics := fs.Bool("metrics", false, "send the GenAI client metrics too")
	var follow bool
	fs.BoolVar(&follow, "f", false, "follow the FILE as it grows, until interrupted")
	fs.BoolVar(&follow, "follow", false, "the same as -f")
	poll := fs.Duration("poll", 250*time.Millisecond, "with -f, how often to look for new records")
	if code := parseFlags(fs, args, io); code >= 0 {
		return code
	}
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(io.err, "llmhistory export: "+format+"\n", args...)
		return code
	}
	switch {
	case fs.NArg() == 0:
		fail(exitUsage, "want at least one FILE (- for standard input)")
		fs.Usage()
		return exitUsage
	case follow && (fs.NArg() != 1 || fs.Arg(0) == "-"):
		return fail(exitUsage, "-f follows exactly one FILE, not standard input")
	case *poll <= 0:
		return fail(exitUsage, "-poll must be more than 0, not %v", *poll)
	}
	contentMode := otelsink.ContentFromEnv
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "content" {
			contentMode = map[bool]otelsink.Content{true: otelsink.ContentOn, false: otelsink.ContentOff}[*content]
		}
	})
	target, err := otlpTargetFrom(*endpoint, *protocol)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if target.endpoint == "" {
		return fail(exitUsage, "no OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (a Collector on this machine: http://localhost:4318), or give -endpoint")
	}
	if !target.flags && strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")) == "none" {
		return fail(exitUsage, "OTEL_TRACES_EXPORTER=none: no spans to send; unset it, or give -endpoint")
	}

	// Every input is opened before anything is sent.
	var inputs []*tailer
	defer func() {
		for _, t := range inputs {
			t.close()
		}
	}()
	bar := newStatusLine(io.err)
	for _, name := range fs.Args() {
		t := &tailer{cmd: "export", path: name, warn: bar, poll: *poll}
		if name == "-" {
			t.path, t.r = "<stdin>", io.in
		}
		if err := t.open(); err != nil {
			return fail(exitFailure, "%v", err)
		}
		inputs = append(inputs, t)
		if t.f == nil {
			continue
		}
		if st, err := t.f.Stat(); err == nil && st.IsDir() {
			return fail(exitFailure, "%s: is a directory", name)
		}
	}

	// Reading stops at the first export that fails: the sink's goroutine
	// cancels it.
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	x := &exporter{target: target, bar: bar, follow: follow}
	x.sink, err = target.sink(ctx, otlpOptions{service: *service, content: contentMode, metrics: *metrics, onError: func(error) { stopReading() }},
		otelsink.Options{WaitWhenFull: true})
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	fmt.Fprintf(io.err, "llmhistory export: to %s\n", x.sink.about)
	return x.run(ctx, readCtx, inputs)
}

// exporter sends the records of its inputs to its sink and says how it
// goes.
type exporter struct {
	target otlpTarget
	sink   *otlpSink
	bar    *statusLine
	follow bool

	sent, skipped, files int // records handed to the sink, lines that were not records, inputs read
	flushed              int // sent when the sink was last flushed
	cur                  *tailer
}

// run reads every input while readCtx lasts (ctx is the command's: its
// end is an interrupt), then exports what was read and sums up.
func (x *exporter) run(ctx, readCtx context.Context, inputs []*tailer) int {
	// A record read is queued even when ctx ends while it waits for room:
	// the queue drains as batches are exported (or fail), each within its
	// export timeout, and what was read is exported.
	appendCtx := context.WithoutCancel(ctx)
	send := func(r record.Record) {
		if x.sink.Append(appendCtx, r) == nil {
			x.sent++
		}
		x.progress(false)
	}
	status := exitOK
	var interrupted, stopped string // where an interrupt, or a failed export, stopped the reading
	for _, t := range inputs {
		if readCtx.Err() != nil {
			break
		}
		x.cur, x.files = t, x.files+1
		before := x.sent
		err := t.consume(readCtx, send)
		switch {
		case err != nil || readCtx.Err() != nil:
		case x.follow:
			if err = t.history(); err == nil {
				err = t.follow(readCtx, send, x.polled)
			}
		case t.f != nil:
			t.flushLast(send) // the file will not grow: a last line without its newline counts
		}
		switch {
		case ctx.Err() != nil && !x.follow:
			interrupted = fmt.Sprintf("after %s:%d", t.path, t.line)
		case ctx.Err() == nil && readCtx.Err() != nil:
			stopped = fmt.Sprintf("%s:%d", t.path, t.line)
		}
		x.skipped += t.bad
		t.summarize()
		// Read and queued, not yet exported: the closing line says
		// how many the collector took.
		line := fmt.Sprintf("%s: %s read", t.path, plural(int64(x.sent-before), "record", "records"))
		if t.bad > 0 {
			line += ", " + plural(int64(t.bad), "line", "lines") + " skipped"
		}
		fmt.Fprintln(x.bar, line)
		if err == nil {
			err = t.history()
		}
		if err != nil {
			fmt.Fprintf(x.bar, "llmhistory export: %v\n", err)
			status = exitFailure
		}
	}
	x.cur = nil
	if ctx.Err() != nil && !x.follow && interrupted == "" && x.files < len(inputs) {
		interrupted = "before " + inputs[x.files].path
	}
	x.progress(true)

	// Export what was read: the queue drains within the export timeout
	// of each of its batches, so this ends.
	closeErr := x.sink.Close()
	st := x.sink.Stats()
	fmt.Fprintf(x.bar, "llmhistory export: %s from %s to %s: %s exported, %s failed, %s dropped",
		plural(int64(x.sent), "record", "records"), plural(int64(x.files), "file", "files"), x.target,
		group(int64(st.Exported)), group(int64(st.Failed)), group(int64(st.Dropped)))
	if st.Unsampled > 0 {
		// OTEL_TRACES_SAMPLER chose to leave these out: not a failure.
		fmt.Fprintf(x.bar, ", %s left out by sampling", group(int64(st.Unsampled)))
	}
	if x.skipped > 0 {
		fmt.Fprintf(x.bar, "; %s skipped", plural(int64(x.skipped), "line", "lines"))
	}
	fmt.Fprintln(x.bar)
	if msg := x.sink.trouble(closeErr); msg != "" {
		fmt.Fprintf(x.bar, "llmhistory export: %s\n", msg)
		if stopped != "" {
			fmt.Fprintf(x.bar, "llmhistory export: reading stopped after %s\n", stopped)
		}
		fmt.Fprintln(x.bar, "llmhistory export: run the export again once the collector takes the spans (they keep their IDs: what was exported is not doubled)")
		status = exitFailure
	} else if closeErr != nil {
		fmt.Fprintf(x.bar, "llmhistory export: %v\n", closeErr)
		status = exitFailure
	}
	if interrupted != "" {
		fmt.Fprintf(x.bar, "llmhistory export: interrupted %s; what was read is exported (run again to send the rest)\n", interrupted)
		status = exitFailure
	}
	return status
}

// polled, after each look at a followed file, exports what it found at
// once rather than when a batch fills or times out: a followed file's
// records reach the collector within a poll or so of being written.
func (x *exporter) polled() {
	if x.sent > x.flushed {
		x.flushed = x.sent
		_ = x.sink.Flush() // a failure is counted, and stops the reading
	}
	x.progress(false)
}

// progress redraws the status line, on a terminal, at most every
// statusEvery unless forced.
func (x *exporter) progress(force bool) {
	if !x.bar.Due(force) {
		return
	}
	st := x.sink.Stats()
	line := "llmhistory export: "
	if x.cur != nil {
		line += x.cur.path + ": "
	}
	line += "read " + group(int64(x.sent)) + ", exported " + group(int64(st.Exported))
	if st.Failed > 0 {
		line += ", failed " + group(int64(st.Failed))
	}
	if x.cur != nil && x.cur.bad > 0 {
		line += ", skipped " + group(int64(x.cur.bad))
	}
	if x.cur == nil {
		line += "; exporting the rest"
	}
	x.bar.Show(line)
}

// otlpTarget is where spans go: the endpoint and protocol that the flags,
// or else the standard OTLP variables, say.
type otlpTarget struct {
	endpoint string // "" when nothing says
	protocol string // http/protobuf or grpc
	flags    bool   // the flags said: make the exporters from them
	env      string // the variable the endpoint came from
}

// otlpTargetFrom reads the endpoint and protocol from the flags, or from
// the environment as the SDK's exporters will.
func otlpTargetFrom(endpoint, protocol string) (otlpTarget, error) {
	t := otlpTarget{endpoint: endpoint, protocol: protocol, flags: endpoint != "" || protocol != ""}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return t, fmt.Errorf("-endpoint must be a URL such as http://localhost:4318, not %q", endpoint)
		}
	}
	if t.protocol == "" {
		t.protocol = firstEnv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch t.protocol {
	case "":
		t.protocol = "http/protobuf"
	case "http/protobuf", "grpc":
	default:
		return t, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", t.protocol)
	}
	if t.endpoint == "" {
		for _, env := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
			if v := strings.TrimSpace(os.Getenv(env)); v != "" {
				t.endpoint, t.env = v, env
				break
			}
		}
	}
	return t, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

func (t otlpTarget) String() string { return t.endpoint + " (" + t.protocol + ")" }

// otlpOptions are what the command decides about a sink.
type otlpOptions struct {
	service string // service.name; "" for the environment's
	// fallback is the service.name when neither service nor the
	// environment gives one.
	fallback string
	content  otelsink.Content
	metrics  bool
	onError  func(error)
}

// otlpSink is an otelsink.Sink and what the command says of it.
type otlpSink struct {
	*otelsink.Sink
	target otlpTarget
	about  string // where it sends, as which service, with or without content

	mu       sync.Mutex
	firstErr error
}

// sink makes the sink that sends to t: through otelsink.FromEnv, which
// honours the standard variables, with exporters of its own when flags
// named the endpoint or protocol.
func (t otlpTarget) sink(ctx context.Context, o otlpOptions, opts otelsink.Options) (*otlpSink, error) {
	res, name, err := serviceResource(ctx, o.service, o.fallback)
	if err != nil {
		return nil, err
	}
	s := &otlpSink{target: t}
	opts.Resource, opts.Content = res, o.content
	opts.OnError = func(err error) {
		s.mu.Lock()
		if s.firstErr == nil {
			s.firstErr = err
		}
		s.mu.Unlock()
		if o.onError != nil {
			o.onError(err)
		}
	}
	if !o.metrics {
		opts.MeterProvider = noop.NewMeterProvider()
	}
	if t.flags {
		if opts.SpanExporter, opts.MetricReader, err = t.exporters(ctx, o.metrics); err != nil {
			return nil, err
		}
	}
	if s.Sink, err = otelsink.FromEnv(ctx, opts); err != nil {
		return nil, err
	}
	content := "no content"
	if o.content.OnSpans() {
		content = "content redacted"
	}
	if strings.HasPrefix(name, "unknown_service") {
		name += " (set OTEL_SERVICE_NAME, or -service, to name it)"
	}
	s.about = fmt.Sprintf("%s as service %s, %s", t, name, content)
	return s, nil
}

// trouble says what went wrong with the exports, or "".
func (s *otlpSink) trouble(closeErr error) string {
	st := s.Stats()
	s.mu.Lock()
	first := s.firstErr
	s.mu.Unlock()
	if st.Failed == 0 && st.Dropped == 0 {
		return ""
	}
	msg := fmt.Sprintf("the collector did not take %s", plural(int64(st.Failed+st.Dropped), "span", "spans"))
	switch {
	case first != nil:
		msg += ": " + first.Error()
	case closeErr != nil:
		msg += ": " + closeErr.Error()
	}
	return msg
}

// exporters makes the span exporter, and the metric reader when metrics
// are sent, for an endpoint or protocol given by flags. The other
// variables (headers, timeout, certificate) are still read by the SDK.
func (t otlpTarget) exporters(ctx context.Context, metrics bool) (sdktrace.SpanExporter, sdkmetric.Reader, error) {
	base := strings.TrimSuffix(t.endpoint, "/")
	var (
		se  sdktrace.SpanExporter
		me  sdkmetric.Exporter
		err error
	)
	if t.protocol == "grpc" {
		var to []otlptracegrpc.Option
		var mo []otlpmetricgrpc.Option
		if t.endpoint != "" && t.env == "" {
			to, mo = append(to, otlptracegrpc.WithEndpointURL(t.endpoint)), append(mo, otlpmetricgrpc.WithEndpointURL(t.endpoint))
		}
		if se, err = otlptracegrpc.New(ctx, to...); err == nil && metrics {
			me, err = otlpmetricgrpc.New(ctx, mo...)
		}
	} else {
		var to []otlptracehttp.Option
		var mo []otlpmetrichttp.Option
		if t.endpoint != "" && t.env == "" {
			// As OTEL_EXPORTER_OTLP_ENDPOINT: the base URL, to which
			// each signal's path is added.
			to, mo = append(to, otlptracehttp.WithEndpointURL(base+"/v1/traces")), append(mo, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
		}
		if se, err = otlptracehttp.New(ctx, to...); err == nil && metrics {
			me, err = otlpmetrichttp.New(ctx, mo...)
		}
	}
	if err != nil {
		if se != nil {
			_ = se.Shutdown(ctx)
		}
		return nil, nil, fmt.Errorf("OTLP exporter (%s): %w", t.protocol, err)
	}
	var reader sdkmetric.Reader
	if me != nil {
		reader = sdkmetric.NewPeriodicReader(me)
	}
	return se, reader, nil
}

// serviceResource is the spans' resource and its service.name: the SDK's
// default resource (the SDK, OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES) read now, with name as its service when
// given, else fallback when the environment names no service. (It is not
// resource.Default, which reads the environment once per process.)
func serviceResource(ctx context.Context, name, fallback string) (*resource.Resource, string, error) {
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, "", fmt.Errorf("resource: %w", err)
	}
	cur, ok := res.Set().Value(semconv.ServiceNameKey)
	switch {
	case name != "":
	case ok && cur.AsString() != "":
		return res, cur.AsString(), nil
	case fallback != "":
		name = fallback
	default:
		name = "unknown_service:" + filepath.Base(os.Args[0]) // as the SDK names it
	}
	res, err = resource.Merge(res, resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		return nil, "", fmt.Errorf("resource: %w", err)
	}
	return res, name, nil
}

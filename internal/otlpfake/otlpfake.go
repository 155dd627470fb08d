// Package otlpfake is a light OTLP receiver for tests: gRPC and HTTP (protobuf
// or JSON, plain or gzip) on loopback, built on the OTLP protocol's own Go
// types (go.opentelemetry.io/proto/otlp) over google.golang.org/grpc and
// net/http, which the module already links for the SDK's exporters. It
// keeps what it takes as those types, with a small read API, and answers
// what a test asks: a refusal with any gRPC code (HTTP gets the status
// the OTLP specification maps it to), or a partial success.
//
// It is the peer of the OpenTelemetry SDK's OTLP exporters in the tests
// of otelsink and of llmhistory export wherever the receiver itself is
// not the point, so that a plain go test ./... does not compile the
// OpenTelemetry Collector. The tests whose point is the Collector's own
// receiver are in the integration module (integration/), which reads
// what the Collector took through this package's [Received].
//
// Only tests import it.
package otlpfake

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the server decodes what the exporters' gzip compressor sends
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// MaxBodySize bounds an OTLP/HTTP request's body, compressed and
// decompressed, as the Collector's max_request_body_size does (its
// default is 20 MiB).
const MaxBodySize = 20 << 20

// Receiver is an OTLP receiver listening on loopback: gRPC on GRPC, HTTP
// on HTTP. What it takes is in its [Received].
type Receiver struct {
	GRPC, HTTP string // host:port
	*Received

	grpcServer *grpc.Server
	httpServer *http.Server
	served     sync.WaitGroup

	mu     sync.Mutex
	answer func(Export) Answer
}

// An Answer is what the receiver answers an export. The zero Answer takes
// it.
type Answer struct {
	// Code, when not codes.OK, refuses the export, which is not kept:
	// gRPC answers with this code, HTTP with the status the OTLP
	// specification gives it (Unavailable 503 and ResourceExhausted 429,
	// which the exporters retry; InvalidArgument 400, Unauthenticated 401,
	// PermissionDenied 403, Unimplemented 404; any other 500) and a
	// google.rpc.Status body, as the Collector's receiver does.
	Code codes.Code
	// Message is the refusal's message, or a partial success's.
	Message string
	// Rejected, on an export taken, makes the answer a partial success:
	// the receiver says it rejected that many of the export's items (it
	// keeps the export whole; the test knows what it called rejected).
	Rejected int64
}

// Listen starts a receiver on free loopback ports; Close stops it. It
// takes every export until [Receiver.AnswerWith] says otherwise.
func Listen() (*Receiver, error) {
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gl.Close()
		return nil, err
	}
	r := &Receiver{GRPC: gl.Addr().String(), HTTP: hl.Addr().String(), Received: new(Received)}

	r.grpcServer = grpc.NewServer(grpc.StatsHandler(compressionReader{}))
	coltracepb.RegisterTraceServiceServer(r.grpcServer, traceService{r: r})
	colmetricpb.RegisterMetricsServiceServer(r.grpcServer, metricsService{r: r})
	collogspb.RegisterLogsServiceServer(r.grpcServer, logsService{r: r})

	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", func(w http.ResponseWriter, req *http.Request) {
		r.serveHTTP(w, req, SignalTraces, new(coltracepb.ExportTraceServiceRequest))
	})
	mux.HandleFunc("/v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		r.serveHTTP(w, req, SignalMetrics, new(colmetricpb.ExportMetricsServiceRequest))
	})
	mux.HandleFunc("/v1/logs", func(w http.ResponseWriter, req *http.Request) {
		r.serveHTTP(w, req, SignalLogs, new(collogspb.ExportLogsServiceRequest))
	})
	r.httpServer = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	r.served.Add(2)
	go func() { defer r.served.Done(); r.grpcServer.Serve(gl) }()
	go func() { defer r.served.Done(); r.httpServer.Serve(hl) }()
	return r, nil
}

// Start starts a receiver that keeps everything it takes; the test's
// cleanup stops it.
func Start(t testing.TB) *Receiver {
	t.Helper()
	r, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// StartDiscarding starts a receiver that counts what it takes and keeps
// none of it: a real OTLP peer whose memory does not grow with a
// benchmark's b.N.
func StartDiscarding(t testing.TB) *Receiver {
	t.Helper()
	r := Start(t)
	r.Received.discard = true
	return r
}

// StartRefusing starts a receiver that refuses every export with a
// permanent error whose message is reason, as a Collector's pipeline does
// with data it will never take: gRPC Internal, HTTP 500, which the SDK's
// exporters do not retry.
func StartRefusing(t testing.TB, reason string) *Receiver {
	t.Helper()
	r := Start(t)
	r.AnswerWith(func(Export) Answer { return Answer{Code: codes.Internal, Message: reason} })
	return r
}

// AnswerWith makes f decide the answer to every later export, from the
// export as decoded; nil takes them all. f is called on the server's
// goroutines, one export at a time.
func (r *Receiver) AnswerWith(f func(Export) Answer) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

// Close stops both servers, ending the connections they hold.
func (r *Receiver) Close() error {
	r.grpcServer.Stop()
	err := r.httpServer.Close()
	r.served.Wait()
	return err
}

// take answers the export e and keeps it unless the answer refuses it.
func (r *Receiver) take(e Export) Answer {
	r.mu.Lock()
	defer r.mu.Unlock() // one export at a time: f need not be safe for concurrent use
	var a Answer
	if r.answer != nil {
		a = r.answer(e)
	}
	if a.Code == codes.OK {
		r.Received.Add(e)
	}
	return a
}

// The gRPC services.

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	a := s.r.take(grpcExport(ctx, Export{Signal: SignalTraces, Traces: req}))
	if a.Code != codes.OK {
		return nil, status.Error(a.Code, a.Message)
	}
	resp := &coltracepb.ExportTraceServiceResponse{}
	if a.Rejected != 0 || a.Message != "" {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: a.Rejected, ErrorMessage: a.Message}
	}
	return resp, nil
}

type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(ctx context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	a := s.r.take(grpcExport(ctx, Export{Signal: SignalMetrics, Metrics: req}))
	if a.Code != codes.OK {
		return nil, status.Error(a.Code, a.Message)
	}
	resp := &colmetricpb.ExportMetricsServiceResponse{}
	if a.Rejected != 0 || a.Message != "" {
		resp.PartialSuccess = &colmetricpb.ExportMetricsPartialSuccess{RejectedDataPoints: a.Rejected, ErrorMessage: a.Message}
	}
	return resp, nil
}

type logsService struct {
	collogspb.UnimplementedLogsServiceServer
	r *Receiver
}

func (s logsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	a := s.r.take(grpcExport(ctx, Export{Signal: SignalLogs, Logs: req}))
	if a.Code != codes.OK {
		return nil, status.Error(a.Code, a.Message)
	}
	resp := &collogspb.ExportLogsServiceResponse{}
	if a.Rejected != 0 || a.Message != "" {
		resp.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: a.Rejected, ErrorMessage: a.Message}
	}
	return resp, nil
}

// grpcExport fills in what the gRPC call says about the export.
func grpcExport(ctx context.Context, e Export) Export {
	e.Protocol = "grpc"
	md, _ := metadata.FromIncomingContext(ctx)
	e.Header = map[string][]string(md.Copy()) // gRPC metadata keys are lower case already
	if c, ok := ctx.Value(compressionKey{}).(*string); ok {
		e.Compression = *c
	}
	return e
}

// compressionReader is a gRPC stats handler that keeps, in each call's
// context, the compression its header names: gRPC keeps grpc-encoding
// out of the metadata a service sees.
type compressionReader struct{}

type compressionKey struct{}

func (compressionReader) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, compressionKey{}, new(string))
}

// HandleRPC sees the call's header before the service is called.
func (compressionReader) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		if c, ok := ctx.Value(compressionKey{}).(*string); ok {
			*c = h.Compression
		}
	}
}

func (compressionReader) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (compressionReader) HandleConn(context.Context, stats.ConnStats) {}

// OTLP/HTTP.

const (
	contentTypeProtobuf = "application/x-protobuf"
	contentTypeJSON     = "application/json"
)

// serveHTTP decodes an OTLP/HTTP export into msg and answers it in the
// request's own encoding, as the OTLP specification says.
func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request, signal Signal, msg proto.Message) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, req.Method+" is not allowed: OTLP/HTTP takes POST", http.StatusMethodNotAllowed)
		return
	}
	mediaType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	var decode func([]byte, proto.Message) error
	switch mediaType {
	case contentTypeProtobuf:
		decode = proto.Unmarshal
	case contentTypeJSON:
		decode = UnmarshalJSON
	default:
		http.Error(w, fmt.Sprintf("content type %q: want %s or %s", req.Header.Get("Content-Type"), contentTypeProtobuf, contentTypeJSON), http.StatusUnsupportedMediaType)
		return
	}
	e := Export{Signal: signal, Protocol: "http/protobuf", Header: lowerKeys(req.Header)}
	if mediaType == contentTypeJSON {
		e.Protocol = "http/json"
	}

	body, err := readBody(w, req)
	if err != nil {
		writeStatus(w, mediaType, status.New(codes.InvalidArgument, err.Error()))
		return
	}
	e.Compression = req.Header.Get("Content-Encoding")
	if err := decode(body, msg); err != nil {
		writeStatus(w, mediaType, status.New(codes.InvalidArgument, fmt.Sprintf("%s export: %v", signal, err)))
		return
	}
	var resp proto.Message
	switch m := msg.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		e.Traces = m
	case *colmetricpb.ExportMetricsServiceRequest:
		e.Metrics = m
	case *collogspb.ExportLogsServiceRequest:
		e.Logs = m
	}
	a := r.take(e)
	if a.Code != codes.OK {
		writeStatus(w, mediaType, status.New(a.Code, a.Message))
		return
	}
	partial := a.Rejected != 0 || a.Message != ""
	switch signal {
	case SignalTraces:
		tr := &coltracepb.ExportTraceServiceResponse{}
		if partial {
			tr.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: a.Rejected, ErrorMessage: a.Message}
		}
		resp = tr
	case SignalMetrics:
		mr := &colmetricpb.ExportMetricsServiceResponse{}
		if partial {
			mr.PartialSuccess = &colmetricpb.ExportMetricsPartialSuccess{RejectedDataPoints: a.Rejected, ErrorMessage: a.Message}
		}
		resp = mr
	default:
		lr := &collogspb.ExportLogsServiceResponse{}
		if partial {
			lr.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: a.Rejected, ErrorMessage: a.Message}
		}
		resp = lr
	}
	writeMessage(w, mediaType, http.StatusOK, resp)
}

// readBody reads the request's body, gunzipping it when it says gzip,
// within MaxBodySize both ways.
func readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	var body io.Reader = http.MaxBytesReader(w, req.Body, MaxBodySize)
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		body = zr
	default:
		return nil, fmt.Errorf("content encoding %q: want gzip or none", enc)
	}
	data, err := io.ReadAll(io.LimitReader(body, MaxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if len(data) > MaxBodySize {
		return nil, fmt.Errorf("the body is over %d bytes once decompressed", MaxBodySize)
	}
	return data, nil
}

// httpStatus is the HTTP status the OTLP specification gives a gRPC code,
// as the Collector's receiver maps it.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
		return http.StatusServiceUnavailable
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unimplemented:
		return http.StatusNotFound
	default:
		return http.StatusInternalServerError
	}
}

// writeStatus answers with a google.rpc.Status in the request's encoding.
func writeStatus(w http.ResponseWriter, mediaType string, s *status.Status) {
	writeMessage(w, mediaType, httpStatus(s.Code()), s.Proto())
}

func writeMessage(w http.ResponseWriter, mediaType string, code int, m proto.Message) {
	var data []byte
	var err error
	if mediaType == contentTypeJSON {
		data, err = protojson.Marshal(m)
	} else {
		data, err = proto.Marshal(m)
	}
	if err != nil { // a message this package built: cannot happen
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(code)
	w.Write(data)
}

// lowerKeys is an HTTP header with its keys in lower case, as gRPC
// metadata has them.
func lowerKeys(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		k = strings.ToLower(k)
		out[k] = append(out[k], v...)
	}
	return out
}

// FreeAddr returns a loopback address no one listens on now: an OTLP
// endpoint that is not there.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// WaitFor polls cond until it holds, failing the test if it does not
// within ten seconds. Exports are synchronous with the receiver, so the
// wait is normally none; the bound is for a broken run.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver never received %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

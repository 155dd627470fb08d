package otelsink

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmhistory/llmhistory/middleware"
)

// Middleware gives the sink what a record does not carry: when the
// request carries a W3C traceparent header but its context no span, the
// span that header names, as the parent of the call's span. It also reads
// the server the call was sent to (server.address and server.port, from
// the request's URL), which the recorder now puts in the record as well
// (server_address, server_port): the two agree, and the sink takes
// Middleware's first. Put it before (outside) the recorder in the chain, so that
// the recorder hands it on with the call's other context values:
//
//	client := &http.Client{Transport: middleware.Chain(base,
//		otelsink.Middleware(), rec.Middleware(), middleware.Retry(middleware.RetryPolicy{}))}
//
// It sends the request as it is: only the context the recorder sees is
// new, under a key of this package, so that nothing below it (otelhttp,
// for one) takes the header's span for a parent of its own.
func Middleware() middleware.Middleware {
	return func(next http.RoundTripper) http.RoundTripper {
		if next == nil {
			next = http.DefaultTransport
		}
		return requestInfoTransport{next}
	}
}

type requestInfoTransport struct{ next http.RoundTripper }

func (t requestInfoTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	info := readRequest(req)
	if info == nil {
		return t.next.RoundTrip(req)
	}
	return t.next.RoundTrip(req.WithContext(context.WithValue(req.Context(), requestKey{}, info)))
}

// requestInfo is what Middleware read from a request.
type requestInfo struct {
	server server
	// parent is the span of the request's traceparent header, when its
	// context has no span of its own: remote, with the caller's sampling
	// flag and trace state.
	parent trace.SpanContext
}

type requestKey struct{}

func requestFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestKey{}).(*requestInfo)
	return info
}

func readRequest(req *http.Request) *requestInfo {
	var info requestInfo
	if req.URL != nil {
		info.server = serverOfURL(req.URL)
	}
	if !trace.SpanContextFromContext(req.Context()).IsValid() && req.Header.Get("Traceparent") != "" {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(req.Header))
		info.parent = trace.SpanContextFromContext(ctx)
	}
	if info.server.host == "" && !info.parent.IsValid() {
		return nil
	}
	return &info
}

// server is a call's server.address and server.port; port 0 is unknown.
type server struct {
	host string
	port int
}

// serverOfURL reads the host and port of u; a URL without a port has its
// scheme's.
func serverOfURL(u *url.URL) server {
	s := server{host: u.Hostname()}
	if s.host == "" {
		return server{}
	}
	if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p < 1<<16 {
		s.port = p
		return s
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		s.port = 80
	case "https", "wss", "":
		s.port = 443
	}
	return s
}

// parseServer reads what Options.ServerAddress returned: a URL
// ("https://host:port/..."), "host:port", "[v6]:port" or a bare host,
// whose port is then 443: the providers' APIs are HTTPS.
func parseServer(s string) server {
	s = strings.TrimSpace(s)
	if s == "" {
		return server{}
	}
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			return serverOfURL(u)
		}
		return server{}
	}
	if host, port, err := net.SplitHostPort(s); err == nil {
		if host == "" {
			return server{}
		}
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p >= 1<<16 {
			p = 443
		}
		return server{host: host, port: p}
	}
	if strings.HasPrefix(s, "/") {
		return server{host: s} // a Unix socket: no port
	}
	if host := strings.Trim(s, "[]"); host != "" {
		return server{host: host, port: 443}
	}
	return server{}
}

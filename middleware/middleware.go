package middleware

import "net/http"

// Middleware wraps a RoundTripper with more behaviour. The result must
// obey the [http.RoundTripper] contract: safe for concurrent use, never
// modifying the request, closing the request body, and returning a nil
// error whenever a response arrived.
type Middleware func(http.RoundTripper) http.RoundTripper

// Chain returns base wrapped in mws, the first listed outermost: a request
// passes through mws[0], then mws[1], ..., then base. A nil base means
// [http.DefaultTransport]; nil middlewares are skipped.
func Chain(base http.RoundTripper, mws ...Middleware) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			base = mws[i](base)
		}
	}
	return base
}

// NewClient returns a copy of base whose transport is wrapped in mws (see
// [Chain]). A nil base means a zero http.Client, and a nil base transport
// means [http.DefaultTransport]. Timeout, redirect policy and cookie jar
// are kept.
func NewClient(base *http.Client, mws ...Middleware) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	c.Transport = Chain(c.Transport, mws...)
	return c
}

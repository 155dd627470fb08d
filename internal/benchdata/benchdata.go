// Package benchdata holds the payloads the benchmarks send: bench/ (the
// recorder on loopback against a bare transport and otelhttp) and
// middleware's BenchmarkRecorder (the recorder without the network) must
// measure the same calls for their figures to be read side by side.
//
// A 4 KiB chat request and response, and a 100-event stream. The text is
// prose, as in a real conversation (a long run of letters alone would look
// like base64 data to the recorder). [Transport] answers with them from
// memory, for the benchmarks that take the network out.
package benchdata

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
)

var prose = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 90)[:4000]

var (
	// Request is an OpenAI chat completion request with one 4,000-byte
	// user message.
	Request = []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + prose + `"}]}`)
	// Response is its answer: 3,900 bytes of text and the usage.
	Response = []byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		prose[:3900] + `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":1000,"total_tokens":2000}}`)
	// Stream is the same call answered as an SSE stream: 100 content
	// chunks, a usage chunk and [DONE].
	Stream = func() []byte {
		var b bytes.Buffer
		for i := range 100 {
			fmt.Fprintf(&b, `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"token %d "}}]}`+"\n\n", i)
		}
		b.WriteString(`data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":100,"total_tokens":110}}` + "\n\ndata: [DONE]\n\n")
		return b.Bytes()
	}()
)

// Transport answers every request with Body, having read the request's
// body as a server would. With Events the body arrives one SSE event per
// Read, as a stream flushed event by event does.
type Transport struct {
	Body        []byte
	ContentType string
	Events      bool
}

var (
	// JSON answers with Response.
	JSON = Transport{Body: Response, ContentType: "application/json"}
	// SSE answers with Stream, event by event.
	SSE = Transport{Body: Stream, ContentType: "text/event-stream", Events: true}
)

// RoundTrip implements [http.RoundTripper].
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var body io.Reader = bytes.NewReader(t.Body)
	if t.Events {
		body = &eventReader{rest: t.Body}
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {t.ContentType}},
		Body:          io.NopCloser(body),
		ContentLength: -1,
		Request:       req,
	}, nil
}

// eventReader returns one SSE event per Read.
type eventReader struct{ rest []byte }

func (e *eventReader) Read(p []byte) (int, error) {
	if len(e.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.Index(e.rest, []byte("\n\n")) + 2
	if n < 2 || n > len(p) {
		n = min(len(p), len(e.rest))
	}
	copy(p, e.rest[:n])
	e.rest = e.rest[n:]
	return n, nil
}

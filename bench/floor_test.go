package bench

import (
	"bytes"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// floorRecorder is the least a recorder that keeps what llmhistory's
// keeps can do for an OpenAI chat call, built from the library calls that
// do each step and nothing around them. It is a transport, measured in
// the same run as bare and otelhttp, so that what it adds is read beside
// what they add (docs/performance.md, "The floor").
//
// On the call's path: an ID and a timestamp, a copy of the request body
// (a body is read once, by the transport: what is recorded must be a
// copy), and a copy of the response as the caller reads it. Off the path,
// on a goroutine of its own (the caller's call is never delayed by
// recording, so its work is handed over once the body ends): a validating
// walk of each body (what makes a record JSON-safe, and a cut body an
// error), the answer and the request's message found, secrets looked for
// in the request and the answer, the message and the answer hashed
// (conversation inference), and the answer copied into memory of its own,
// held as the history holds 1,000. It parses nothing else, builds no
// record, keeps no args: every recorder that keeps the answer and finds
// the conversation does at least this.
type floorRecorder struct {
	base http.RoundTripper
	jobs chan *floorCall
	done chan struct{}
	seed maphash.Seed
	bufs sync.Pool

	// Touched by the worker only.
	held [1000][]byte
	n    int
	sum  uint64 // the hashes, kept so that they are not optimized away
}

type floorCall struct {
	f         *floorRecorder
	id, stamp []byte
	req, resp *[]byte
	stream    bool // the response is server-sent events
}

func newFloorRecorder(base http.RoundTripper) (*floorRecorder, func()) {
	f := &floorRecorder{base: base, jobs: make(chan *floorCall, 1024), done: make(chan struct{}), seed: maphash.MakeSeed()}
	f.bufs.New = func() any { b := make([]byte, 0, 16<<10); return &b }
	go f.work()
	return f, func() { close(f.jobs); <-f.done }
}

func (f *floorRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	c := &floorCall{f: f}
	now := time.Now()
	c.id = strconv.AppendUint(make([]byte, 0, 40), rand.Uint64(), 32)
	c.stamp = now.AppendFormat(make([]byte, 0, 40), time.RFC3339Nano)
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err == nil {
			c.req = f.bufs.Get().(*[]byte)
			b := bytes.NewBuffer((*c.req)[:0])
			b.ReadFrom(rc)
			*c.req = b.Bytes()
			rc.Close()
		}
	}
	resp, err := f.base.RoundTrip(req)
	if err != nil {
		f.jobs <- c
		return resp, err
	}
	c.resp = f.bufs.Get().(*[]byte)
	*c.resp = (*c.resp)[:0]
	c.stream = strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body = &floorBody{rc: resp.Body, c: c}
	return resp, nil
}

// floorBody keeps a copy of what the caller reads, and hands the call to
// the worker at its end.
type floorBody struct {
	rc   io.ReadCloser
	c    *floorCall
	sent bool
}

func (b *floorBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	*b.c.resp = append(*b.c.resp, p[:n]...)
	if err == io.EOF {
		b.end()
	}
	return n, err
}

func (b *floorBody) Close() error {
	b.end()
	return b.rc.Close()
}

func (b *floorBody) end() {
	if !b.sent {
		b.sent = true
		b.c.f.jobs <- b.c
	}
}

func (f *floorRecorder) work() {
	defer close(f.done)
	for c := range f.jobs {
		f.process(c)
	}
}

func (f *floorRecorder) process(c *floorCall) {
	if c.req == nil || c.resp == nil {
		return
	}
	req := *c.req
	if !record.ValidJSON(req) {
		panic("the request is not JSON")
	}
	// Read in place (GetBytes would copy what it finds): the answer is
	// copied once, below, into memory of its own.
	message := gjson.Get(unsafe.String(unsafe.SliceData(req), len(req)), "messages.0").Raw
	answer := floorAnswer(*c.resp, c.stream)
	redact.SecretBytes(req)
	answer = redact.SecretBytes(answer)
	f.sum += maphash.String(f.seed, message) ^ maphash.Bytes(f.seed, answer) ^ uint64(len(c.id)+len(c.stamp))
	f.held[f.n%len(f.held)] = answer
	f.n++
	f.bufs.Put(c.req)
	f.bufs.Put(c.resp)
}

// floorAnswer returns the answer's text, in memory of its own: the
// choice's message, or a stream's deltas put together, each event's JSON
// walked and validated.
func floorAnswer(resp []byte, stream bool) []byte {
	if !stream {
		if !record.ValidJSON(resp) {
			panic("the response is not JSON")
		}
		return []byte(gjson.Get(unsafe.String(unsafe.SliceData(resp), len(resp)), "choices.0.message.content").Str)
	}
	var answer []byte
	for line := range bytes.Lines(resp) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			break
		}
		if !record.ValidJSON(data) {
			panic("an event is not JSON")
		}
		answer = append(answer, gjson.Get(unsafe.String(unsafe.SliceData(data), len(data)), "choices.0.delta.content").Str...)
	}
	return answer
}

// TestFloorRecorderKeepsTheAnswer holds the floor to what it claims to
// do: the answer of a JSON call and of a stream, kept whole, through a
// real *http.Client.
func TestFloorRecorderKeepsTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		base benchdata.Transport
		want string
	}{
		{benchdata.JSON, gjson.GetBytes(benchdata.Response, "choices.0.message.content").Str},
		{benchdata.SSE, "token 0 token 1 "},
	} {
		f, done := newFloorRecorder(tc.base)
		client := &http.Client{Transport: f}
		resp, err := client.Post("http://api.example/v1/chat/completions", "application/json", bytes.NewReader(requestBody))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done()
		if f.n != 1 {
			t.Fatalf("%d calls kept, want 1", f.n)
		}
		if got := string(f.held[0]); !strings.HasPrefix(got, tc.want) {
			t.Errorf("kept %.40q, want it to begin %.40q", got, tc.want)
		}
	}
}

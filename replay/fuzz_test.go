package replay_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/replay"
)

// fuzzSeeds are cassettes of every kind of line, written by Write.
func fuzzSeeds(f *testing.F) [][]byte {
	u, _ := url.Parse("http://127.0.0.1:8080/v1/chat/completions?alt=sse")
	ms := time.Millisecond
	its := []replay.Interaction{
		{
			Request:  replay.Request{Method: "POST", URL: u, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"model":"m","messages":[{"role":"user","content":"<hi>"}]}`)},
			Response: &replay.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}, "Vary": {"a", "b"}}, ContentLength: 25, Body: []byte("{\n  \"id\": \"x\",\n  \"n\": [1]\n}\n")},
			Latency:  12 * ms,
		},
		{
			Request: replay.Request{Method: "POST", URL: u, Body: []byte(`{"stream": true}`)},
			Response: &replay.Response{Status: 200, ContentLength: -1, TransferEncoding: []string{"chunked"}, Stream: true, Frames: []replay.Frame{
				{At: ms, Data: []byte("event: delta\ndata: {\"a\":1}\n\n")},
				{At: 2 * ms, Data: []byte("data: {\"candidates\": []}\r\n\r\n")},
				{At: 3 * ms, Data: []byte{0xff, 0xfe}},
			}, End: replay.EndError, EndErr: "unexpected EOF"},
		},
		{Request: replay.Request{Method: "GET", URL: u}, Err: "dial tcp: connection refused", Latency: ms},
		{Request: replay.Request{Method: "PUT", URL: u, Body: []byte{0, 1, 0xff}}, Response: &replay.Response{Status: 204, Uncompressed: true, Stream: true, End: replay.EndClosed}},
	}
	var out [][]byte
	for i := range its {
		var b bytes.Buffer
		if err := replay.Write(&b, its[i:i+1]); err != nil {
			f.Fatal(err)
		}
		out = append(out, b.Bytes())
	}
	var all bytes.Buffer
	if err := replay.Write(&all, its); err != nil {
		f.Fatal(err)
	}
	return append(out, all.Bytes(), []byte(`{"version":2}`), []byte("{\"version\":1,\"request\":{\"method\":\"GET\",\"url\":\"/\"},\"error\":\"x\"}\n{"))
}

// FuzzRead loads arbitrary bytes as a cassette: it never panics, fails
// only with a *LineError, and whatever loads is written and loaded back
// to the same cassette.
func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		its, err := replay.Read(bytes.NewReader(data))
		if err != nil {
			var le *replay.LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("not a *LineError with a line: %#v", err)
			}
			return
		}
		var first bytes.Buffer
		if err := replay.Write(&first, its); err != nil {
			if errors.Is(err, replay.ErrSecret) {
				return // refusing to write a key-shaped string is the point
			}
			t.Fatalf("a loaded cassette cannot be written: %v", err)
		}
		again, err := replay.Read(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("a written cassette does not load: %v\n%s", err, first.Bytes())
		}
		if len(again) != len(its) {
			t.Fatalf("%d interactions, then %d", len(its), len(again))
		}
		for i := range its {
			a, b := its[i], again[i]
			if !bytes.Equal(a.Request.Body, b.Request.Body) || a.Err != b.Err || a.Latency != b.Latency || (a.Response == nil) != (b.Response == nil) {
				t.Fatalf("interaction %d changed", i)
			}
			if a.Response != nil && !bytes.Equal(body(a.Response), body(b.Response)) {
				t.Fatalf("interaction %d: response body changed", i)
			}
		}
		var second bytes.Buffer
		if err := replay.Write(&second, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("written twice, two cassettes:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}

func body(r *replay.Response) []byte {
	if !r.Stream {
		return r.Body
	}
	var b []byte
	for _, f := range r.Frames {
		b = append(b, f.Data...)
	}
	return b
}

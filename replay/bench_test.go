package replay_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmhistory/llmhistory/replay"
)

// benchRequest is a chat request of about 1 KiB.
var benchRequest = `{"model":"gpt-4o-mini","temperature":0.2,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"` + strings.Repeat("Tell me about the weather. ", 36) + `"}]}`

// BenchmarkCall compares a call replayed from a cassette with the same
// call to a loopback server: a 4 KiB JSON answer, and a stream of 100
// server-sent events flushed one by one. Each call sends the request and
// reads the answer to its end.
//
//	go test ./replay -run '^$' -bench Call -benchmem
func BenchmarkCall(b *testing.B) {
	jsonAnswer := `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("Sunny and mild. ", 250) + `"},"finish_reason":"stop"}]}`
	var stream []string
	for i := range 100 {
		stream = append(stream, fmt.Sprintf(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"token %d "}}]}`+"\n\n", i))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range stream {
				io.WriteString(w, e)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonAnswer)
	}))
	defer srv.Close()

	path := filepath.Join(b.TempDir(), "bench.jsonl")
	rec, err := replay.New(path, replay.WithMode(replay.ModeRecord))
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{"/json", "/stream"} {
		if err := call(rec.Client(), srv.URL+p); err != nil {
			b.Fatal(err)
		}
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	cassette, err := replay.New(path, replay.WithRepeatLast())
	if err != nil {
		b.Fatal(err)
	}
	bare := &http.Client{Transport: &http.Transport{}}
	defer bare.CloseIdleConnections()

	for _, body := range []string{"json", "stream100"} {
		p := map[string]string{"json": "/json", "stream100": "/stream"}[body]
		for _, via := range []struct {
			name   string
			client *http.Client
		}{{"bare", bare}, {"replay", cassette.Client()}} {
			b.Run("body="+body+"/transport="+via.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := call(via.client, srv.URL+p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func call(c *http.Client, url string) error { return postAndDrain(c, url, benchRequest) }

// postAndDrain sends body to url through c and reads the answer to its end.
func postAndDrain(c *http.Client, url, body string) error {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

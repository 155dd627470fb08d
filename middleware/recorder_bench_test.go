package middleware_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/middleware"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/redact"
)

// The recorder's own cost, without a network: a base transport that
// answers from memory, so what a call costs beyond the bare transport is
// the recorder's (its worker's too: the CPU of the whole process is
// reported as cpu-ns/op). The payloads are bench/'s (internal/benchdata):
// a 4 KiB chat request and response, and a 100-event stream.
var benchRequest = benchdata.Request

// benchCall makes BenchmarkRecorder's call through client and reads the
// answer to its end with buf.
func benchCall(client *http.Client, buf []byte) error {
	return benchCallWith(client, benchRequest, buf)
}

// benchCallWith is benchCall sending body.
func benchCallWith(client *http.Client, body, buf []byte) error {
	return benchCallKey(client, body, buf, "")
}

// benchKey is an API key as OpenAI's are now: "sk-proj-" and 156 more.
var benchKey = "sk-proj-" + strings.Repeat("Ab3dEf9hIjKlMn0pQr", 9)[:156]

// benchCallKey is benchCallWith with the key in an Authorization header,
// as every call to a hosted model carries one, when key is not "".
func benchCallKey(client *http.Client, body, buf []byte, key string) error {
	req, _ := http.NewRequest(http.MethodPost, "http://api.example/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
	return err
}

func BenchmarkRecorder(b *testing.B) {
	for _, call := range []struct {
		name string
		base benchdata.Transport
		// unrelated: every request differs from the one before in its
		// first turn, so none extends the previous record (which the
		// history then keeps whole): the calls of independent users.
		// Otherwise every call sends the same request, and the history
		// keeps only what each adds, as it does for a conversation.
		unrelated bool
		// key: the request carries an API key (benchKey), whose value
		// the recorder looks for wherever it may be echoed.
		key bool
	}{
		{"json", benchdata.JSON, false, false},
		{"json-key", benchdata.JSON, false, true},
		{"json-unrelated", benchdata.JSON, true, false},
		{"stream", benchdata.SSE, false, false},
	} {
		for _, recorded := range []bool{false, true} {
			name := "call=" + call.name + "/transport=bare"
			var rt http.RoundTripper = call.base
			var rec *middleware.Recorder
			if recorded {
				name = "call=" + call.name + "/transport=recorder"
				rec = middleware.NewRecorder()
				rt = middleware.Chain(call.base, rec.Middleware())
			}
			b.Run(name, func(b *testing.B) {
				client := &http.Client{Transport: rt}
				buf := make([]byte, 32<<10)
				body := bytes.Clone(benchRequest)
				// A counter written over the first 8 bytes of the first
				// turn's text makes each request its own.
				at := bytes.Index(body, []byte(`"content":"`)) + len(`"content":"`)
				b.ReportAllocs()
				cpu0 := cpuTime()
				for i := 0; b.Loop(); i++ {
					for k, n := 7, i; call.unrelated && k >= 0; k, n = k-1, n/10 {
						body[at+k] = '0' + byte(n%10)
					}
					key := ""
					if call.key {
						key = benchKey
					}
					if err := benchCallKey(client, body, buf, key); err != nil {
						b.Fatal(err)
					}
				}
				if rec != nil {
					rec.Flush() // the worker's share belongs to these calls
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
			if rec != nil {
				rec.Close()
			}
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkConversation is one call of a conversation of 10, 100 or 1,000
// turns through the recorder, each turn adding about 500 bytes of question
// and 500 of answer, as a chat API resends them: bare, recorded to the
// in-memory history only, and to a JSONL sink as well, writing records
// whole or with args_prefix, and with redact.PII (to the history only). The conversation starts over on a new trace
// when it ends, so the figures are means over its turns; cpu-ns/op is the
// whole process's (the worker's included), B/conv what the file takes per
// conversation.
func BenchmarkConversation(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		// Every message of the conversation, joined: the request of turn k
		// holds the first ends[k] bytes.
		var all bytes.Buffer
		ends := make([]int, turns)
		say := func(role string, i int) {
			if all.Len() > 0 {
				all.WriteByte(',')
			}
			fmt.Fprintf(&all, `{"role":%q,"content":"%s turn %d: %s"}`, role, role, i, strings.Repeat("lorem ipsum ", 40))
		}
		say("system", 0)
		for i := range turns {
			say("user", i)
			ends[i] = all.Len()
			say("assistant", i)
		}
		for _, variant := range []string{"bare", "recorder", "recorder+pii", "recorder+jsonl", "recorder+jsonl_args_prefix"} {
			b.Run(fmt.Sprintf("turns=%d/transport=%s", turns, variant), func(b *testing.B) {
				var rt http.RoundTripper = benchdata.JSON
				var rec *middleware.Recorder
				var file countingWriter
				// 1,000 turns take about 1 MiB: capture them whole.
				capture := middleware.WithMaxBody(8<<20, 0)
				switch variant {
				case "recorder":
					rec = middleware.NewRecorder(capture)
				case "recorder+pii":
					rec = middleware.NewRecorder(capture, middleware.WithRedactor(redact.PII()))
				case "recorder+jsonl", "recorder+jsonl_args_prefix":
					j := record.NewJSONLWith(&file, record.JSONLOptions{ArgsPrefix: variant == "recorder+jsonl_args_prefix"})
					rec = middleware.NewRecorder(capture, middleware.WithSink(j))
				}
				if rec != nil {
					rt = middleware.Chain(rt, rec.Middleware())
					defer rec.Close()
				}
				client := &http.Client{Transport: rt}
				body := make([]byte, 0, 64+all.Len())
				buf := make([]byte, 32<<10)
				calls := 0
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					turn := calls % turns
					body = append(append(append(body[:0], `{"model":"gpt-4o-mini","messages":[`...), all.Bytes()[:ends[turn]]...), "]}"...)
					req, _ := http.NewRequest(http.MethodPost, "http://api.example/v1/chat/completions", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					ctx := middleware.WithTrace(req.Context(), fmt.Sprintf("conversation-%d", calls/turns))
					resp, err := client.Do(req.WithContext(ctx))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.CopyBuffer(io.Discard, resp.Body, buf); err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
					calls++
				}
				if rec != nil {
					rec.Flush()
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				if file.n > 0 {
					b.ReportMetric(float64(file.n)*float64(turns)/float64(calls), "B/conv")
				}
			})
		}
	}
}

// BenchmarkConversationInference is what finding conversations costs: one
// call of a conversation of 10 or 100 turns whose answers are the
// transport's, so that each call continues the one before, made with a
// trace (WithTrace) and the inference off, with a trace and the inference
// on (which still remembers where the conversation stands), and with no
// trace, so that the recorder finds it. cpu-ns/op is the whole process's.
func BenchmarkConversationInference(b *testing.B) {
	answer := gjson.GetBytes(benchdata.Response, "choices.0.message").Raw
	for _, turns := range []int{10, 100} {
		var all bytes.Buffer
		ends := make([]int, turns)
		all.WriteString(`{"role":"system","content":"You answer questions."}`)
		for i := range turns {
			fmt.Fprintf(&all, `,{"role":"user","content":"question %d: %s"}`, i, strings.Repeat("lorem ipsum ", 40))
			ends[i] = all.Len()
			all.WriteString("," + answer)
		}
		for _, variant := range []string{"trace_given/inference=off", "trace_given/inference=on", "trace_inferred"} {
			b.Run(fmt.Sprintf("turns=%d/%s", turns, variant), func(b *testing.B) {
				opts := []middleware.Option{middleware.WithMaxBody(8<<20, 0)}
				if variant == "trace_given/inference=off" {
					opts = append(opts, middleware.WithConversations(0))
				}
				rec := middleware.NewRecorder(opts...)
				defer rec.Close()
				client := &http.Client{Transport: middleware.Chain(benchdata.JSON, rec.Middleware())}
				body := make([]byte, 0, 64+all.Len())
				buf := make([]byte, 32<<10)
				calls := 0
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					turn := calls % turns
					body = append(append(append(body[:0], `{"model":"gpt-4o-mini","messages":[`...), all.Bytes()[:ends[turn]]...), "]}"...)
					req, _ := http.NewRequest(http.MethodPost, "http://api.example/v1/chat/completions", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					ctx := req.Context()
					if variant != "trace_inferred" {
						ctx = middleware.WithTrace(ctx, fmt.Sprintf("conversation-%d", calls/turns))
					}
					resp, err := client.Do(req.WithContext(ctx))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.CopyBuffer(io.Discard, resp.Body, buf); err != nil {
						b.Fatal(err)
					}
					resp.Body.Close()
					calls++
				}
				rec.Flush()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The records the benchmarks' calls make, against golden files: work on
// the recorder's speed must leave them as they are (only the call's
// identity and timings, which differ on every run, and the history's
// size, which differs from call to call, are set aside).
func TestBenchmarkRecords(t *testing.T) {
	for _, call := range []struct {
		name string
		base benchdata.Transport
	}{
		{"json", benchdata.JSON},
		{"stream", benchdata.SSE},
	} {
		t.Run(call.name, func(t *testing.T) {
			rec := middleware.NewRecorder(middleware.WithOutput())
			defer rec.Close()
			client := &http.Client{Transport: middleware.Chain(call.base, rec.Middleware())}
			for range 3 { // the same call again: a record of its own each time, and the same
				require.NoError(t, benchCall(client, make([]byte, 32<<10)))
			}
			require.NoError(t, rec.Flush())
			rs := rec.History().Records()
			require.Len(t, rs, 3)
			var got []byte
			for i, r := range rs {
				assert.NotEmpty(t, r.CallID)
				assert.NotEmpty(t, r.Timestamp)
				// The same first message each time: three conversations.
				assert.True(t, r.TraceInferred)
				assert.Equal(t, 1, r.ConversationHistorySize)
				if i > 0 {
					assert.NotEqual(t, rs[0].TraceID, r.TraceID)
				}
				r.CallID, r.Timestamp, r.DurationMS, r.TimeToFirstChunkMS = "", "", 0, 0
				r.ConversationHistorySize, r.TraceID = 0, ""
				b, err := json.MarshalIndent(r, "", "  ")
				require.NoError(t, err)
				if i == 0 {
					got = b
				} else {
					assert.Equal(t, string(got), string(b), "record %d differs from the first", i)
				}
			}
			golden := filepath.Join("testdata", "bench_"+call.name+".golden.json")
			if *update {
				require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(string(want)), string(got))
		})
	}
}

// BenchmarkRecorderFloor is the least a recorder that keeps what this one
// keeps must do for BenchmarkRecorder's JSON call, each step at the speed
// of the library call that does it and nothing around it: read both
// bodies as JSON (a validating walk: what makes a record JSON-safe, and a
// cut body an error), look for secrets in the request and in the answer,
// hash the request's message and the answer to find the conversation,
// and copy the answer into memory of its own, held as the history holds
// it (1,000 answers, the history's default, so that collection sees
// them). "all" does the five in turn: the floor beside which the
// recorder's CPU added is read (docs/performance.md).
func BenchmarkRecorderFloor(b *testing.B) {
	answer := []byte(gjson.GetBytes(benchdata.Response, "choices.0.message.content").Str)
	message := []byte(gjson.GetBytes(benchRequest, "messages.0").Raw)
	seed := maphash.MakeSeed()
	var held [1000][]byte
	steps := []struct {
		name string
		do   func(i int)
	}{
		{"validate", func(int) {
			if !record.ValidJSON(benchRequest) || !record.ValidJSON(benchdata.Response) {
				b.Fatal("not JSON")
			}
		}},
		{"redact", func(int) {
			redact.SecretBytes(benchRequest)
			redact.SecretBytes(answer)
		}},
		{"hash", func(int) {
			maphash.Bytes(seed, message)
			maphash.Bytes(seed, answer)
		}},
		{"copy", func(i int) { held[i%len(held)] = bytes.Clone(answer) }},
	}
	run := func(name string, do func(i int)) {
		b.Run("step="+name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for i := 0; b.Loop(); i++ {
				do(i)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	for _, s := range steps {
		run(s.name, s.do)
	}
	run("all", func(i int) {
		for _, s := range steps {
			s.do(i)
		}
	})
}

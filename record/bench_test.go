package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/benchdata"
	"github.com/llmhistory/llmhistory/record"
)

// benchRecord is a typical record: a short chat of about 1 KiB of args.
func benchRecord() record.Record {
	r := fullRecord()
	msgs := make([]map[string]any, 0, 6)
	for i := range 6 {
		role := []string{"user", "assistant"}[i%2]
		msgs = append(msgs, map[string]any{"role": role, "content": strings.Repeat("Summarize the last turns. ", 6)})
	}
	r.Args = record.ArgsJSON(msgs)
	return r
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkAppendJSON(b *testing.B) {
	r := benchRecord()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = r.AppendJSON(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
	reportRate(b)
}

func BenchmarkEncodingJSONMarshal(b *testing.B) {
	// The baseline: encoding/json through the struct tags.
	type plain record.Record
	r := plain(benchRecord())
	b.ReportAllocs()
	for b.Loop() {
		_, _ = json.Marshal(r)
	}
	reportRate(b)
}

// BenchmarkAsyncAppendFull is the caller's cost when the sink has fallen
// behind: Append refuses the record at once instead of waiting.
func BenchmarkAsyncAppendFull(b *testing.B) {
	stuck, entered := make(chan struct{}), make(chan struct{}, 1)
	a := record.NewAsync(record.SinkFunc(func(context.Context, record.Record) error {
		entered <- struct{}{}
		<-stuck
		return nil
	}), &record.AsyncOptions{QueueSize: 1})
	r := benchRecord()
	ctx := context.Background()
	_ = a.Append(ctx, r)
	<-entered // the worker holds one record; the next fills the queue
	_ = a.Append(ctx, r)
	b.ReportAllocs()
	for b.Loop() {
		if !errors.Is(a.Append(ctx, r), record.ErrQueueFull) {
			b.Fatal("queue not full")
		}
	}
	close(stuck)
	_ = a.Close()
}

// BenchmarkJSONL measures the sink as the recorder uses it: many goroutines
// appending to one sink, to io.Discard and to a real file.
func BenchmarkJSONL(b *testing.B) {
	targets := []struct {
		name string
		open func(b *testing.B) io.Writer
	}{
		{"discard", func(*testing.B) io.Writer { return io.Discard }},
		{"file", func(b *testing.B) io.Writer {
			f, err := os.Create(filepath.Join(b.TempDir(), "bench.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { f.Close() })
			return f
		}},
	}
	for _, tg := range targets {
		b.Run("sync/"+tg.name, func(b *testing.B) {
			j := record.NewJSONL(tg.open(b))
			r := benchRecord()
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := j.Append(ctx, r); err != nil {
						b.Error(err)
					}
				}
			})
			if err := j.Close(); err != nil {
				b.Fatal(err)
			}
			reportRate(b)
		})
		b.Run("async/"+tg.name, func(b *testing.B) {
			a := record.NewAsync(record.NewJSONL(tg.open(b)), &record.AsyncOptions{QueueSize: 4096})
			r := benchRecord()
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					// A benchmark producer outruns any sink; wait for room
					// instead of dropping, so the figure is the throughput
					// of the whole path, every record written.
					for {
						err := a.Append(ctx, r)
						if err == nil {
							break
						}
						if !errors.Is(err, record.ErrQueueFull) {
							b.Fatal(err)
						}
						runtime.Gosched()
					}
				}
			})
			// Close drains the queue: the time includes writing every record.
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			reportRate(b)
			if st := a.Stats(); st.Written != uint64(b.N) {
				b.Fatalf("written %d of %d", st.Written, b.N)
			}
		})
	}
}

func BenchmarkReadJSONL(b *testing.B) {
	line := string(benchRecord().AppendJSON(nil)) + "\n"
	input := strings.Repeat(line, 1000)
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		rd := record.NewReader(strings.NewReader(input))
		for {
			if _, err := rd.Read(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkSafeJSON(b *testing.B) {
	v := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}, "temperature": 0.2, "n": 1}
	b.ReportAllocs()
	for b.Loop() {
		_ = record.SafeJSON(v)
	}
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkConversation is the recording work of one call of a
// conversation of 10, 100 or 1,000 turns, each adding about 500 bytes of
// question and 500 of answer: the history's Add, then the JSONL sink
// writing the record whole or with args_prefix. Each op is one call; the
// conversation starts over (a new trace) when it ends, so ns/op is the
// mean over its turns. B/conv is what the file takes per conversation.
func BenchmarkConversation(b *testing.B) {
	for _, turns := range []int{10, 100, 1000} {
		conv := chat(turns, 500)
		for _, prefix := range []bool{false, true} {
			b.Run(fmt.Sprintf("turns=%d/args_prefix=%t", turns, prefix), func(b *testing.B) {
				var w countingWriter
				j := record.NewJSONLWith(&w, record.JSONLOptions{ArgsPrefix: prefix, FlushInterval: -1})
				m := record.NewMemory(2 * turns)
				ctx := context.Background()
				calls := 0
				b.ReportAllocs()
				for b.Loop() {
					turn := calls % turns
					r := call(turn, fmt.Sprintf("t%d", calls/turns), conv[turn])
					if err := j.Append(ctx, m.Add(r)); err != nil {
						b.Fatal(err)
					}
					calls++
				}
				if err := j.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(w.n)*float64(turns)/float64(calls), "B/conv")
			})
		}
	}
}

// BenchmarkValidJSON is the validating walk every body gets on the
// recorder's goroutine, over the bench's 4 KiB chat request and response
// (long strings of plain prose, the common case), and over text with an
// escape and a non-ASCII letter in every line, which takes the scanner's
// slower path.
func BenchmarkValidJSON(b *testing.B) {
	lines := strings.Repeat(`Grüße aus Köln,\n \"quoted\" and plain text after it. `, 60)
	for _, body := range []struct {
		name string
		b    []byte
	}{
		{"request", benchdata.Request},
		{"response", benchdata.Response},
		{"escaped", []byte(`{"messages":[{"role":"user","content":"` + lines + `"}]}`)},
	} {
		b.Run(body.name, func(b *testing.B) {
			b.SetBytes(int64(len(body.b)))
			for b.Loop() {
				if !record.ValidJSON(body.b) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkAsyncBatch is the cost per record of the queue and its worker,
// feeding a sink whose every call costs a fixed price (a transaction, a
// round trip: here a 2 µs spin), record by record and in batches.
func BenchmarkAsyncBatch(b *testing.B) {
	for _, batch := range []bool{false, true} {
		b.Run(fmt.Sprint("batch=", batch), func(b *testing.B) {
			var sink record.Sink = perCallSink{}
			if batch {
				sink = perCallBatchSink{}
			}
			a := record.NewAsync(sink, &record.AsyncOptions{QueueSize: 4096})
			r := benchRecord()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				for a.Append(ctx, r) != nil {
					runtime.Gosched() // full: the benchmark measures throughput, not drops
				}
			}
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

type perCallSink struct{}

func (perCallSink) Append(context.Context, record.Record) error {
	spin(2 * time.Microsecond)
	return nil
}

type perCallBatchSink struct{ perCallSink }

func (perCallBatchSink) AppendBatch(context.Context, []record.Record) error {
	spin(2 * time.Microsecond)
	return nil
}

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

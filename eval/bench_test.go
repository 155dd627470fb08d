package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/eval"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// BenchmarkRunStore measures offline evaluation: calls scored per second
// by a code evaluator (latency_ok, which judges every call of the
// workload: it keeps no output for the others to judge) over a SQLite store of
// LLMHISTORY_BENCH_RECORDS records (default 100,000; docs/evaluation.md
// gives the figure at 1,000,000), every call judged and its score
// written. Each iteration is a whole pass, with a new version of the
// evaluator so that nothing is skipped; the store is a copy of the one
// the store's benchmarks keep in the temporary directory.
//
//	LLMHISTORY_BENCH_RECORDS=1000000 go test ./eval -run '^$' -bench RunStore -benchtime 1x -timeout 2h
func BenchmarkRunStore(b *testing.B) {
	n := storebench.Records()
	src := storebench.CachedSQLite(n)
	storebench.Fill(b, "sqlite:"+src, n)
	dst := filepath.Join(b.TempDir(), "h.db")
	copyFile(b, src, dst)
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+dst)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	var calls int64
	cpu0 := storebench.CPUTime()
	for i := range b.N {
		e := versioned{eval.Latency(2 * time.Second), fmt.Sprint("bench-", i)}
		res, err := eval.Run(ctx, st, []eval.Evaluator{e}, eval.RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Scores != int64(n) || res.Calls != int64(n) {
			b.Fatalf("%d calls, %d scores", res.Calls, res.Scores)
		}
		calls += res.Calls
	}
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	// CPU time drifts less than wall time on a shared machine.
	b.ReportMetric(float64((storebench.CPUTime()-cpu0).Microseconds())/float64(calls), "cpu-µs/call")
}

// BenchmarkRunStoreReadOnly is the same pass without judging or writing:
// what reading the records costs, the floor of the figure above.
func BenchmarkRunStoreReadOnly(b *testing.B) {
	n := storebench.Records()
	src := storebench.CachedSQLite(n)
	storebench.Fill(b, "sqlite:"+src, n)
	ctx := context.Background()
	st, err := store.OpenWith(ctx, "sqlite:"+src, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ResetTimer()
	var calls int64
	cpu0 := storebench.CPUTime()
	for range b.N {
		for _, err := range st.Records(ctx, store.Filter{}, store.ReadOptions{NoArgs: true}) {
			if err != nil {
				b.Fatal(err)
			}
			calls++
		}
	}
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64((storebench.CPUTime()-cpu0).Microseconds())/float64(calls), "cpu-µs/call")
}

func copyFile(b *testing.B, src, dst string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}

// The evaluators on one call each: what judging costs beside reading.
func BenchmarkEvaluators(b *testing.B) {
	schema, err := eval.JSONSchema("order", []byte(orderSchema))
	if err != nil {
		b.Fatal(err)
	}
	tools, err := eval.ToolArgs([]byte(`[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}}}]`))
	if err != nil {
		b.Fatal(err)
	}
	re, err := eval.Regex("id", `ORD-[0-9]+`)
	if err != nil {
		b.Fatal(err)
	}
	r := call(`{"id":"ORD-7","qty":2,"items":[{"sku":"x"},{"sku":"y"}]}`)
	r.Output.Parts = append(r.Output.Parts, record.Part{Type: record.PartToolCall, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo","unit":"c"}`)})
	s := eval.Subject{Records: []record.Record{r}}
	for _, e := range []eval.Evaluator{eval.JSONValid(), schema, tools, re, eval.Contains("x", "sku"), eval.Answer()} {
		b.Run(e.Info().Name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := eval.Score(context.Background(), e, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// versioned is an evaluator under another version.
type versioned struct {
	eval.Evaluator
	v string
}

func (e versioned) Info() eval.Info {
	i := e.Evaluator.Info()
	i.Version = e.v
	return i
}

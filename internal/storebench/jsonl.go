package storebench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
	"github.com/llmhistory/llmhistory/store"
)

// BenchJSONL measures today's JSONL file on the same workload as the
// store's benchmarks (n records): writing it (args whole, as the JSONL
// sink writes by default, and with args_prefix), its bytes per record,
// and answering from it what a store answers (the report, a trace's
// records, a page of a user's newest 50): each a scan of the file. With
// url, the report is also built from the store at url.
func BenchJSONL(b *testing.B, n int, url string) {
	ctx := context.Background()
	dir := b.TempDir()
	paths := map[bool]string{false: filepath.Join(dir, "whole.jsonl"), true: filepath.Join(dir, "prefix.jsonl")}
	var sample record.Record
	for _, prefix := range []bool{false, true} {
		name := map[bool]string{false: "write/args-whole", true: "write/args-prefix"}[prefix]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				f, err := os.Create(paths[prefix])
				if err != nil {
					b.Fatal(err)
				}
				sink := record.NewJSONLWith(f, record.JSONLOptions{ArgsPrefix: prefix})
				mem := record.NewMemory(4096)
				w := NewWorkload(42, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), MonthStep)
				var gen time.Duration
				start := time.Now()
				for i := range n {
					t0 := time.Now()
					r := w.Next()
					gen += time.Since(t0)
					if i == n/2 {
						sample = r
					}
					if err := sink.Append(ctx, mem.Add(r)); err != nil {
						b.Fatal(err)
					}
				}
				if err := sink.Close(); err != nil {
					b.Fatal(err)
				}
				el := time.Since(start) - gen
				st, _ := f.Stat()
				f.Close()
				b.ReportMetric(float64(n)/el.Seconds(), "records/s")
				b.ReportMetric(float64(st.Size())/float64(n), "bytes/record")
			}
		})
	}
	scan := func(path string, fn func(record.Record)) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		rd := record.NewReader(f)
		for {
			r, err := rd.Read()
			if err == io.EOF {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			fn(r)
		}
	}
	b.Run("report/jsonl", func(b *testing.B) {
		for b.Loop() {
			f, _ := os.Open(paths[true])
			if _, err := report.Build(ctx, report.Options{}, report.Source{Name: "prefix.jsonl", R: f}); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
	if url != "" {
		b.Run("report/store", func(b *testing.B) {
			s, err := store.OpenWith(ctx, url, store.Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				bld := report.NewBuilder(report.Options{})
				for r, err := range s.Records(ctx, store.Filter{}, store.ReadOptions{NoArgs: true}) {
					if err != nil {
						b.Fatal(err)
					}
					bld.Add(r)
				}
				bld.Report()
			}
		})
	}
	b.Run("trace/jsonl", func(b *testing.B) {
		for b.Loop() {
			got := 0
			scan(paths[true], func(r record.Record) {
				if r.TraceID == sample.TraceID {
					got++
				}
			})
			if got == 0 {
				b.Fatal("no record of the trace")
			}
		}
	})
	b.Run("page/user/jsonl", func(b *testing.B) {
		for b.Loop() {
			var page []record.Record
			scan(paths[true], func(r record.Record) {
				if r.UserID == sample.UserID {
					page = append(page, r)
					if len(page) > 100 {
						page = page[len(page)-50:]
					}
				}
			})
		}
	})
}

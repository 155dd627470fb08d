package view_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/view"
)

// Big histories. A generated file of a million records (10-call
// conversations of four providers, 40 going on at once, users, tags,
// errors, tool loops) is written once per run of the benchmarks, in the
// default format (every record's Args whole) and in the args_prefix
// format, and served as llmhistory view serves it:
//
//	go test ./view -run '^$' -bench 'FirstPage|OpenConversation' -benchtime 3x
//
// BenchmarkFirstPage times opening the files until the first page is
// served whole (every record indexed); its first-byte metric is how long
// the first page takes to arrive while indexing has just begun.
// BenchmarkOpenConversation times a transcript page of a random
// conversation on the indexed file.

var (
	bigMu    sync.Mutex
	bigFiles = map[string]string{}
	bigDir   string
)

// bigHistory returns a generated history of n records, written once per
// process.
func bigHistory(b *testing.B, n int, prefix bool) string {
	b.Helper()
	bigMu.Lock()
	defer bigMu.Unlock()
	key := fmt.Sprintf("%d-%t", n, prefix)
	if p, ok := bigFiles[key]; ok {
		return p
	}
	if bigDir == "" {
		d, err := os.MkdirTemp("", "llmhistory-view-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigDir = d
	}
	path := filepath.Join(bigDir, key+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := writeHistory(f, genOptions{Records: n, Turns: 10, Users: 5000, ArgsPrefix: prefix, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	bigFiles[key] = path
	return path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

var sizes = []int{100_000, 1_000_000}

func BenchmarkFirstPage(b *testing.B) {
	for _, n := range sizes {
		for _, prefix := range []bool{false, true} {
			b.Run(fmt.Sprintf("records=%d/args_prefix=%t", n, prefix), func(b *testing.B) {
				path := bigHistory(b, n, prefix)
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				var firstByte, heap, cpu float64
				runs := 0
				b.ResetTimer()
				for b.Loop() {
					runtime.GC()
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					cpu0 := cpuTime()
					src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{Poll: -1})
					if err != nil {
						b.Fatal(err)
					}
					h := view.NewHandler(src, view.Options{})
					firstByte += servePage(b, h, "/", "").Seconds()
					if err := src.Wait(context.Background()); err != nil {
						b.Fatal(err)
					}
					servePage(b, h, "/", `data-key="conv-`)
					cpu += (cpuTime() - cpu0).Seconds()
					b.StopTimer()
					runtime.GC()
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
					runtime.KeepAlive(src)
					src.Close()
					runs++
					b.StartTimer()
				}
				b.ReportMetric(firstByte/float64(runs)*1000, "ms-first-byte")
				b.ReportMetric(cpu/float64(runs), "cpu-s")
				b.ReportMetric(heap/float64(runs)/float64(n), "heap-B/record")
				b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
			})
		}
	}
}

func BenchmarkOpenConversation(b *testing.B) {
	for _, n := range sizes {
		for _, prefix := range []bool{false, true} {
			b.Run(fmt.Sprintf("records=%d/args_prefix=%t", n, prefix), func(b *testing.B) {
				path := bigHistory(b, n, prefix)
				src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{Poll: -1})
				if err != nil {
					b.Fatal(err)
				}
				defer src.Close()
				if err := src.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
				h := view.NewHandler(src, view.Options{})
				conversations := n / 11 // 10 calls each, one more for a tool loop
				rng := rand.New(rand.NewPCG(2, 3))
				b.ResetTimer()
				for b.Loop() {
					id := fmt.Sprintf("conv-%07d", 1+rng.IntN(conversations))
					servePage(b, h, "/c/"+id, `class="call`)
				}
			})
		}
	}
}

// BenchmarkSearch times a text search of the whole history that finds
// few conversations, the first time (the files read) and again (the
// result kept).
func BenchmarkSearch(b *testing.B) {
	path := bigHistory(b, sizes[len(sizes)-1], false)
	src, err := view.OpenJSONL([]string{path}, view.JSONLOptions{Poll: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	if err := src.Wait(context.Background()); err != nil {
		b.Fatal(err)
	}
	h := view.NewHandler(src, view.Options{})
	servePage(b, h, "/?q=41+customers+by+revenue", "") // for "again"
	i := 0
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			i++
			servePage(b, h, fmt.Sprintf("/?q=%d+customers+by+revenue", 2+i%39), "")
		}
	})
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			servePage(b, h, "/?q=41+customers+by+revenue", "")
		}
	})
}

// servePage gets path from h and checks it holds want; it returns how
// long the page took.
func servePage(b *testing.B, h http.Handler, path, want string) (took time.Duration) {
	b.Helper()
	start := time.Now()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	took = time.Since(start)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	if want != "" && !strings.Contains(rec.Body.String(), want) {
		b.Fatalf("%s: no %q in the page", path, want)
	}
	return took
}

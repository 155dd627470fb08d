package report_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/report"
)

// benchRecords is how many records one BenchmarkBuild iteration reads.
const benchRecords = 100_000

func benchData(b *testing.B) []byte {
	var buf bytes.Buffer
	require.NoError(b, writeRecords(&buf, benchRecords))
	return buf.Bytes()
}

// BenchmarkBuild measures the whole path: JSONL bytes to a report.
func BenchmarkBuild(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := report.Build(context.Background(), report.Options{}, report.Source{Name: "bench", R: bytes.NewReader(data)})
		if err != nil || r.Summary.Records != benchRecords {
			b.Fatal(err, r.Summary.Records)
		}
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkRead is the reading alone, to tell where BenchmarkBuild's time goes.
func BenchmarkRead(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rd := record.NewReader(bytes.NewReader(data))
		for {
			if _, err := rd.Read(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAdd is the builder alone.
func BenchmarkAdd(b *testing.B) {
	recs, err := record.ReadJSONL(bytes.NewReader(benchData(b)))
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		bl := report.NewBuilder(report.Options{})
		for _, r := range recs {
			bl.Add(r)
		}
		_ = bl.Report()
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// writeFile generates n records into a file, streaming.
func writeFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	require.NoError(t, writeRecords(w, n))
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return path
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// reportFile builds the report of a file and returns the heap the builder
// holds at the end (after a GC, builder alive) and the peak heap seen
// while reading (sampled by the progress callback), over the baseline.
func reportFile(t *testing.T, path string, n int) (held, peak uint64) {
	t.Helper()
	base := heapAlloc()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	b := report.NewBuilder(report.Options{Progress: func(report.Progress) {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapAlloc-min(base, m.HeapAlloc))
	}})
	start := time.Now()
	require.NoError(t, b.ReadFrom(context.Background(), report.Source{Name: path, R: f}))
	elapsed := time.Since(start)
	held = heapAlloc() - min(base, heapAlloc())
	r := b.Report()
	runtime.KeepAlive(b)
	require.Equal(t, int64(n), r.Summary.Records)
	st, _ := f.Stat()
	t.Logf("%d records (%d MiB) in %v: %.0f records/s; heap held %.1f MiB, peak %.1f MiB over baseline",
		n, st.Size()>>20, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), float64(held)/(1<<20), float64(peak)/(1<<20))
	return held, peak
}

// A report over 100,000 records holds a few MiB, most of it the set of
// call ids for the duplicate check.
func TestHeap100k(t *testing.T) {
	const n = 100_000
	held, _ := reportFile(t, writeFile(t, n), n)
	require.Less(t, held, uint64(8<<20), "heap held after 100k records")
}

// A million records (about 850 MiB of JSONL) are reported with the heap
// bounded by the caps. Set LLMHISTORY_LONG=1 to run it.
func TestHeap1M(t *testing.T) {
	if os.Getenv("LLMHISTORY_LONG") == "" || testing.Short() || raceEnabled {
		t.Skip("a million records: set LLMHISTORY_LONG=1 (and no -race, no -short) to run")
	}
	const n = 1_000_000
	held, peak := reportFile(t, writeFile(t, n), n)
	require.Less(t, held, uint64(48<<20), "heap held after 1M records")
	require.Less(t, peak, uint64(128<<20), "peak heap while reading 1M records")
}

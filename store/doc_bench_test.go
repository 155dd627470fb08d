package store_test

import (
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
)

// workloadDocs returns the documents the store keeps of n records of a
// team's workload: each record's JSON without its args and answer, which
// are kept as messages.
func workloadDocs(n int) [][]byte {
	w := storebench.NewWorkload(5, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), storebench.MonthStep)
	docs := make([][]byte, n)
	for i, r := range w.Batch(n) {
		r.Args, r.Output = nil, nil
		docs[i] = r.AppendJSON(nil)
	}
	return docs
}

// BenchmarkDocCodec measures the compression of a record's document on
// the write path, and its size, and the decompression on the read path.
func BenchmarkDocCodec(b *testing.B) {
	docs := workloadDocs(1024)
	var plain, packed int
	for _, d := range docs {
		plain += len(d)
		packed += len(store.EncodeDoc(d))
	}
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			store.EncodeDoc(docs[i%len(docs)])
		}
		b.ReportMetric(float64(packed)/float64(len(docs)), "stored-B/doc")
		b.ReportMetric(float64(plain)/float64(len(docs)), "plain-B/doc")
	})
	enc := make([][]byte, len(docs))
	for i, d := range docs {
		enc[i] = store.EncodeDoc(d)
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := store.DecodeDoc(enc[i%len(enc)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

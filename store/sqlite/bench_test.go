package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmhistory/llmhistory/internal/storebench"
)

func BenchmarkIngest(b *testing.B) {
	storebench.BenchIngest(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
}

// BenchmarkQueries runs on LLMHISTORY_BENCH_RECORDS records (default
// 100,000), kept in the temporary directory across runs.
func BenchmarkQueries(b *testing.B) {
	n := storebench.Records()
	d := storebench.Fill(b, "sqlite:"+storebench.CachedSQLite(n), n)
	storebench.BenchQueries(b, d)
}

// BenchmarkJSONL is today's JSONL file on the same workload, for
// comparison (LLMHISTORY_BENCH_RECORDS records, default 100,000).
func BenchmarkJSONL(b *testing.B) {
	n := storebench.Records()
	url := "sqlite:" + storebench.CachedSQLite(n)
	if _, err := os.Stat(storebench.CachedSQLite(n)); err != nil {
		url = "" // BenchmarkQueries makes it
	}
	storebench.BenchJSONL(b, n, url)
}

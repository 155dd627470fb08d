package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmhistory/llmhistory/store/storetest"
)

func BenchmarkIngest(b *testing.B) {
	storetest.BenchIngest(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
}

// BenchmarkQueries runs on LLMHISTORY_BENCH_RECORDS records (default
// 100,000), kept in the temporary directory across runs.
func BenchmarkQueries(b *testing.B) {
	n := storetest.BenchRecords()
	d := storetest.Fill(b, "sqlite:"+storetest.CachedSQLite(n), n)
	storetest.BenchQueries(b, d)
}

// BenchmarkJSONL is today's JSONL file on the same workload, for
// comparison (LLMHISTORY_BENCH_RECORDS records, default 100,000).
func BenchmarkJSONL(b *testing.B) {
	n := storetest.BenchRecords()
	url := "sqlite:" + storetest.CachedSQLite(n)
	if _, err := os.Stat(storetest.CachedSQLite(n)); err != nil {
		url = "" // BenchmarkQueries makes it
	}
	storetest.BenchJSONL(b, n, url)
}

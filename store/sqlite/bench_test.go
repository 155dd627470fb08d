package sqlite_test

import (
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

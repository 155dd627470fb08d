package postgres_test

import (
	"testing"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
)

// BenchmarkIngest writes into a server of its own with PostgreSQL's
// default durability (fsync on), over loopback TCP.
func BenchmarkIngest(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{Durable: true})
	storebench.BenchIngest(b, srv.NewDatabase(b))
}

// BenchmarkQueries runs on LLMHISTORY_BENCH_RECORDS records (default
// 100,000) in a server of its own.
func BenchmarkQueries(b *testing.B) {
	srv := pgtest.Start(b, pgtest.Options{Durable: true})
	n := storebench.Records()
	d := storebench.Fill(b, srv.NewDatabase(b), n)
	storebench.BenchQueries(b, d)
}

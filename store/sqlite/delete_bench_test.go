package sqlite_test

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/sqlitedsn"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
)

// BenchmarkDelete measures erasure on a store of LLMHISTORY_BENCH_RECORDS
// records (default 100,000), each run on a fresh copy of it: Delete of a
// user's history, of a conversation, of a day, scrub included (the
// deletion's transaction, secure_delete, the full-text index merged, the
// WAL checkpointed and truncated), and, beside them, what the parts and
// the alternative cost on the same store: the full-text merge alone, and
// a VACUUM.
func BenchmarkDelete(b *testing.B) {
	n := storebench.Records()
	d := storebench.SQLite(b, n)
	src := sqlitedsn.Path(d.URL)
	ctx := context.Background()
	fresh := func(b *testing.B) string {
		b.StopTimer()
		defer b.StartTimer()
		dst := filepath.Join(b.TempDir(), "copy.db")
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
		return dst
	}
	deleting := func(name string, f func(i int) store.Filter) {
		b.Run(name, func(b *testing.B) {
			var deleted int64
			for i := range b.N {
				path := fresh(b)
				b.StopTimer()
				s, err := store.Open(ctx, "sqlite:"+path)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				rc, err := s.Delete(ctx, f(i))
				b.StopTimer()
				if err != nil || !rc.Clean() {
					b.Fatal(err, rc.Checks)
				}
				deleted += rc.Records
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(deleted)/float64(b.N), "records/op")
		})
	}
	deleting("user", func(i int) store.Filter { return store.Filter{UserID: d.Users[i%len(d.Users)]} })
	deleting("trace", func(i int) store.Filter { return store.Filter{TraceID: d.Traces[i%len(d.Traces)]} })
	deleting("first-day", func(int) store.Filter { return store.Filter{Until: d.Start.Add(24 * time.Hour)} })
	raw := func(name, stmt string) {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				path := fresh(b)
				b.StopTimer()
				db, err := sql.Open("sqlite", sqlitedsn.DSN(path, 5000, false))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := db.Exec(stmt); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				db.Close()
				b.StartTimer()
			}
		})
	}
	raw("fts-optimize-alone", `INSERT INTO record_text(record_text) VALUES ('optimize')`)
	raw("vacuum-alone", `VACUUM`)
}

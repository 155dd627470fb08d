package storebench

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/record"
	"github.com/llmhistory/llmhistory/store"
)

// Records is how many records the query and page benchmarks run on:
// LLMHISTORY_BENCH_RECORDS, default 100,000 (docs/performance.md and
// docs/store.md give the figures at 1,000,000 and 10,000,000).
func Records() int {
	if n, err := strconv.Atoi(os.Getenv("LLMHISTORY_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// Dataset is a store filled with a team's workload ([Workload]), and
// samples of what is in it to ask for.
type Dataset struct {
	URL        string
	Records    int
	Start, End time.Time // of the first and the last record
	Traces     []string  // a sample of trace IDs
	LongTraces []string  // traces of WorkloadOptions.LongCalls calls
	CallIDs    []string  // a sample of call IDs
	Users      []string  // a sample of users with records
	// Built is how long writing it took, 0 when it was there already.
	// Continued is the record it was continued from, when a cut run had
	// written the records before it.
	Continued   int
	Built       time.Duration
	BuiltCPU    time.Duration
	UniqueBytes int64 // of the workload's text
}

var datasets sync.Map // url → *Dataset

// datasetStart is when the first record of a dataset of n records was
// made: 2026-10-01, or earlier for more than a million, so that every
// dataset ends in the past, its hours sealed into days and months as a
// store's are (records a million a month).
func datasetStart(n int) time.Time {
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	if early := time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC).Add(-time.Duration(n) * MonthStep); early.Before(start) {
		return early
	}
	return start
}

// Fill writes n workload records (a million a month) into the store at
// url, unless it holds them already (a SQLite file kept in the temporary
// directory, whose samples were kept beside it), and returns what a
// benchmark asks.
func Fill(tb testing.TB, url string, n int) *Dataset {
	if d, ok := datasets.Load(url); ok {
		return d.(*Dataset)
	}
	ctx := context.Background()
	// A SQLite file (whichever driver's scheme) is kept across runs,
	// with its samples beside it.
	scheme, file, _ := strings.Cut(url, ":")
	cached := !strings.HasPrefix(scheme, "postgres")
	sidecar := file + ".json"
	if cached {
		if b, err := os.ReadFile(sidecar); err == nil {
			d := &Dataset{}
			if err := json.Unmarshal(b, d); err == nil && d.Records == n {
				d.URL, d.Built, d.BuiltCPU = url, 0, 0
				datasets.Store(url, d)
				return d
			}
		}
		// No samples beside it: a run was cut while it wrote the file
		// (the samples are written last). It is continued below.
	}
	s, err := store.OpenWith(ctx, url, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	have, err := s.Count(ctx, store.Filter{})
	if err != nil {
		tb.Fatal(err)
	}
	// A kept file a cut run began holds the workload's first records:
	// batches are written in order, each transaction whole. The rest is
	// written after them, the workload made again from its seed (cheap
	// beside writing) for its samples; the last batch is written again
	// in case, as Write skips call IDs it holds. A ten-million-record
	// file takes hours, more than one sitting.
	resume := 0
	switch {
	case have > int64(n) || (have > 0 && !cached):
		tb.Fatalf("%s holds %d records, not 0", url, have)
	case have > 0:
		resume = max(0, int(have)-4096)
		tb.Logf("%s holds %d records of %d: continued from record %d", url, have, n, resume)
	}
	d := &Dataset{URL: url, Records: n, Start: datasetStart(n), Continued: resume}
	w := NewWorkload(42, d.Start, MonthStep)
	rng := rand.New(rand.NewPCG(7, 7))
	sample := func(list *[]string, v string) {
		if len(*list) < 1000 {
			*list = append(*list, v)
		} else if i := rng.IntN(n); i < 1000 {
			(*list)[i] = v
		}
	}
	start, cpu0 := time.Now(), CPUTime()
	// Made on one goroutine, written on another, 4,096 at a time (the
	// store's transactions take 1,024): the dataset is what is measured
	// here, not how it was written (BenchmarkIngest is).
	batches := make(chan []record.Record, 2)
	werr := make(chan error, 1)
	go func() {
		var err error
		for b := range batches {
			if err == nil {
				_, err = s.Write(ctx, b)
			}
		}
		werr <- err
	}()
	users := map[string]bool{}
	calls := map[string]int{}
	batch := make([]record.Record, 0, 4096)
	for i := range n {
		r := w.Next()
		sample(&d.CallIDs, r.CallID)
		if i%7 == 0 {
			sample(&d.Traces, r.TraceID)
		}
		if calls[r.TraceID]++; calls[r.TraceID] == w.opts.LongCalls && len(d.LongTraces) < 100 {
			d.LongTraces = append(d.LongTraces, r.TraceID)
		}
		if !users[r.UserID] && len(users) < 1000 {
			users[r.UserID] = true
			d.Users = append(d.Users, r.UserID)
		}
		if i == n-1 {
			d.End, _ = record.ParseTime(r.Timestamp)
		}
		if i < resume {
			continue
		}
		batch = append(batch, r)
		if len(batch) == cap(batch) || i == n-1 {
			batches <- batch
			batch = make([]record.Record, 0, 4096)
		}
		if i%(1<<20) == 0 && i > resume {
			// On stderr as it goes: a benchmark's log comes at its end,
			// and a big file takes hours.
			fmt.Fprintf(os.Stderr, "storebench: %s: %d of %d records written, %.0f/s\n", file, i, n, float64(i-resume)/time.Since(start).Seconds())
		}
	}
	close(batches)
	if err := <-werr; err != nil {
		tb.Fatal(err)
	}
	d.UniqueBytes = w.UniqueBytes
	d.Built, d.BuiltCPU = time.Since(start), CPUTime()-cpu0
	wrote := n - resume
	tb.Logf("filled %s with %d records in %v (%.0f records/s, %.1f CPU µs/record)", url, wrote, d.Built.Round(time.Second),
		float64(wrote)/d.Built.Seconds(), float64(d.BuiltCPU.Microseconds())/float64(wrote))
	if cached {
		b, _ := json.Marshal(d)
		if err := os.WriteFile(sidecar, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	datasets.Store(url, d)
	return d
}

// SQLite is the dataset of n records in a SQLite file kept in the
// temporary directory across runs (named for n, the workload and the
// schema): made once, in a few minutes at a million records.
func SQLite(tb testing.TB, n int) *Dataset {
	return Fill(tb, "sqlite:"+CachedSQLite(n), n)
}

// PostgreSQL is the dataset of n records in a database of a throwaway
// server (internal/pgtest) with PostgreSQL's default durability, made
// for the run.
func PostgreSQL(tb testing.TB, n int) *Dataset {
	srv := pgtest.Start(tb, pgtest.Options{Durable: true})
	return Fill(tb, srv.NewDatabase(tb), n)
}

// CachedSQLite is the SQLite file a dataset of n records is kept in
// across runs: in the temporary directory, named for n and the schema.
func CachedSQLite(n int) string {
	h := sha256.New()
	fmt.Fprint(h, store.SchemaVersion, schemaFingerprint)
	return fmt.Sprintf("%s/llmhistory-bench-%d-%x.db", os.TempDir(), n, h.Sum(nil)[:4])
}

// schemaFingerprint changes when the workload or what the store writes
// does, so that a kept file is not measured as a new one.
const schemaFingerprint = "workload-3 store-4"

// BenchQueries measures what a reader asks of a store of d.Records
// records: a record by call ID, a trace's records, filtered pages of 50,
// an aggregate by day and model, a page of conversations.
func BenchQueries(b *testing.B, d *Dataset) {
	ctx := context.Background()
	s, err := store.OpenWith(ctx, d.URL, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	day := d.Start.Add(15 * 24 * time.Hour)
	run := func(name string, fn func() (int, error)) {
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				got, err := fn()
				if err != nil {
					b.Fatal(err)
				}
				n += got
			}
			b.ReportMetric(float64(n)/float64(b.N), "records/op")
		})
	}
	run("get", func() (int, error) {
		_, err := s.Get(ctx, pick(d.CallIDs))
		return 1, err
	})
	run("trace", func() (int, error) {
		recs, err := s.Trace(ctx, pick(d.Traces))
		return len(recs), err
	})
	page := func(f func() store.Filter) func() (int, error) {
		return func() (int, error) {
			p, err := s.Query(ctx, store.Query{Filter: f(), Limit: 50})
			return len(p.Records), err
		}
	}
	run("page/newest", page(func() store.Filter { return store.Filter{} }))
	run("page/user", page(func() store.Filter { return store.Filter{UserID: pick(d.Users)} }))
	run("page/user+day", page(func() store.Filter {
		return store.Filter{UserID: pick(d.Users), Since: day.Add(-24 * time.Hour)}
	}))
	run("page/tag+model", page(func() store.Filter {
		return store.Filter{Tags: []string{Tags[rng.IntN(len(Tags))]}, Model: Models[rng.IntN(len(Models))]}
	}))
	run("page/metadata", page(func() store.Filter {
		return store.Filter{Metadata: map[string]string{"tenant": fmt.Sprint("tenant-", rng.IntN(50))}}
	}))
	run("page/errors", page(func() store.Filter { return store.Filter{Status: "error"} }))
	run("page/error-type+time", page(func() store.Filter {
		return store.Filter{ErrorType: record.ErrorRateLimit, Until: day}
	}))
	run("page/min-cost", page(func() store.Filter { return store.Filter{MinCostUSD: 0.0015} }))
	run("page/text", page(func() store.Filter {
		return store.Filter{Text: vocabulary[rng.IntN(len(vocabulary))] + " " + vocabulary[rng.IntN(len(vocabulary))]}
	}))
	run("traces", func() (int, error) {
		p, err := s.Traces(ctx, store.Query{Limit: 50})
		return len(p.Traces), err
	})
	run("aggregate/day+model", func() (int, error) {
		g, err := s.Aggregate(ctx, store.AggregateQuery{By: []store.GroupBy{store.ByDay, store.ByModel}})
		return len(g), err
	})
	run("aggregate/user/week", func() (int, error) {
		g, err := s.Aggregate(ctx, store.AggregateQuery{Filter: store.Filter{Since: day, Until: day.Add(7 * 24 * time.Hour)}, By: []store.GroupBy{store.ByUser}})
		return len(g), err
	})
}

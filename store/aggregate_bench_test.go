package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/pgtest"
	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
)

// BenchmarkAggregateHours asks what the viewer's overview asks (one
// Store.Aggregates: totals, by day, model, user, tag and provider) of
// stores holding the same week of a team's traffic at two densities,
// 10,000 and 100,000 records, on each backend: read from the rollups, an
// aggregate costs by the hours it covers, so both take about as long.
// The same asked with a filter no rollup knows (path=records: a minimum
// duration every record has) reads the records, and costs ten times as
// much at ten times the records. With LLMHISTORY_BENCH_RECORDS at
// 1,000,000 or more, a third store holds the week at 1,000,000 records,
// where the team's combinations an hour are all taken: from the rollups
// it costs what the store of 100,000 costs. window=day asks the same of
// the week's last day alone: a seventh of the hours, a seventh of the
// rollup rows.
//
//	go test ./store -run '^$' -bench AggregateHours -count 3
//	LLMHISTORY_BENCH_RECORDS=1000000 go test ./store -run '^$' -bench AggregateHours -benchtime 3x -timeout 2h
func BenchmarkAggregateHours(b *testing.B) {
	ctx := context.Background()
	start := time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC)
	const week = 7 * 24 * time.Hour
	overview := []store.Grouping{
		{NoLatency: true}, {By: []store.GroupBy{store.ByDay}, NoLatency: true},
		{By: []store.GroupBy{store.ByModel}}, {By: []store.GroupBy{store.ByUser}, NoLatency: true},
		{By: []store.GroupBy{store.ByTag}, NoLatency: true}, {By: []store.GroupBy{store.ByProvider}},
	}
	sizes := []int{10_000, 100_000}
	if storebench.Records() >= 1_000_000 {
		sizes = append(sizes, 1_000_000)
	}
	// A store is filled inside the sub-benchmark that measures it, so
	// that -bench 'AggregateHours/backend=sqlite' fills no PostgreSQL.
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run("backend="+backend, func(b *testing.B) {
			var srv *pgtest.Server
			for _, n := range sizes {
				b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
					var url string
					if backend == "postgres" {
						if srv == nil {
							srv = pgtest.Start(b, pgtest.Options{Durable: true})
						}
						url = srv.NewDatabase(b)
					} else {
						url = "sqlite:" + filepath.Join(b.TempDir(), "h.db")
					}
					s, err := store.Open(ctx, url)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					w := storebench.NewWorkload(3, start, week/time.Duration(n))
					for i := 0; i < n; i += 4096 {
						if _, err := s.Write(ctx, w.Batch(min(4096, n-i))); err != nil {
							b.Fatal(err)
						}
					}
					aggregateHours(b, s, start, week, overview)
				})
			}
		})
	}
}

// aggregateHours measures the overview of s's week, from the rollups and
// from the records.
func aggregateHours(b *testing.B, s *store.Store, start time.Time, week time.Duration, overview []store.Grouping) {
	ctx := context.Background()
	for _, path := range []string{"rollups", "records"} {
		for _, f := range []struct {
			name   string
			filter store.Filter
			day    bool // the week's last day only
		}{
			{"all", store.Filter{}, false},
			{"all/window=day", store.Filter{}, true},
			{"user", store.Filter{UserID: storebench.User(7)}, false},
			{"tag", store.Filter{Tags: []string{storebench.Tags[1]}}, false},
		} {
			if f.day && path == "records" {
				continue
			}
			filter := f.filter
			filter.Since, filter.Until = start, start.Add(week)
			if f.day {
				filter.Since = filter.Until.Add(-24 * time.Hour)
			}
			if path == "records" {
				filter.MinDuration = time.Nanosecond
			}
			b.Run(fmt.Sprintf("path=%s/filter=%s", path, f.name), func(b *testing.B) {
				for b.Loop() {
					gs, err := s.Aggregates(ctx, filter, overview...)
					if err != nil {
						b.Fatal(err)
					}
					if len(gs[0]) == 0 || gs[0][0].Calls == 0 {
						b.Fatal("no calls")
					}
				}
			})
		}
	}
}

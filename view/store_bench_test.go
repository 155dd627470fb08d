package view_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/llmhistory/llmhistory/internal/storebench"
	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/view"
)

// BenchmarkStorePages serves the viewer's pages from a store of
// LLMHISTORY_BENCH_RECORDS records (default 100,000) of a team's
// workload, SQLite (the file kept in the temporary directory across runs)
// and PostgreSQL (a throwaway server, filled for the run): the list of
// conversations and the overview, unfiltered and filtered by user, tag,
// model, a time range and text, a conversation of 100 calls and a call,
// each asked of the store as the page is drawn. docs/performance.md has
// the figures, and the commands:
//
//	LLMHISTORY_BENCH_RECORDS=1000000 go test ./view -run '^$' -bench StorePages -count 3 -timeout 2h
func BenchmarkStorePages(b *testing.B) {
	n := storebench.Records()
	for _, backend := range []struct {
		name string
		data func(testing.TB, int) *storebench.Dataset
	}{{"sqlite", storebench.SQLite}, {"postgres", storebench.PostgreSQL}} {
		b.Run("backend="+backend.name, func(b *testing.B) {
			benchPages(b, backend.data(b, n))
		})
	}
}

func benchPages(b *testing.B, d *storebench.Dataset) {
	ctx := context.Background()
	s, err := store.OpenWith(ctx, d.URL, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := view.NewHandler(view.FromStore(s, 0), view.Options{})
	mid := d.Start.Add(d.End.Sub(d.Start) / 2)
	filters := []struct{ name, query string }{
		{"", ""},
		{"user", "user=" + d.Users[len(d.Users)/2]},
		{"tag", "tag=" + storebench.Tags[1]},
		{"model", "model=" + storebench.Models[2]},
		// A day and a bit, on no hour's edge.
		{"time", "from=" + mid.Format("2006-01-02T15:04") + "&to=" + mid.Add(26*time.Hour+17*time.Minute).Format("2006-01-02T15:04")},
		{"text", "q=refund"},
	}
	serve := func(path func(i int) string) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			cpu0, n := storebench.CPUTime(), 0
			for i := 0; b.Loop(); i++ {
				if w := fetch(b, h, http.MethodGet, path(i), nil); w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path(i), w.Code, w.Body.String())
				}
				n++
			}
			// This process's CPU: steadier than the wall clock on a
			// shared machine, and on SQLite all of a page's work
			// (PostgreSQL's server works beside it).
			b.ReportMetric(float64((storebench.CPUTime()-cpu0).Microseconds())/1e3/float64(n), "cpu-ms/op")
		}
	}
	for _, page := range []string{"conversations", "overview"} {
		for _, f := range filters {
			name := "page=" + page
			if f.name != "" {
				name += "/" + f.name
			}
			path := map[string]string{"conversations": "/", "overview": "/overview"}[page]
			if f.query != "" {
				path += "?" + f.query
			}
			b.Run(name, serve(func(int) string { return path }))
		}
	}
	b.Run("page=conversation/calls=100", serve(func(i int) string {
		return "/c/" + url.PathEscape(d.LongTraces[i%len(d.LongTraces)])
	}))
	b.Run("page=call", serve(func(i int) string { return "/call/" + url.PathEscape(d.CallIDs[i%len(d.CallIDs)]) }))
}

package view_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/llmhistory/llmhistory/store"
	"github.com/llmhistory/llmhistory/store/storetest"
	"github.com/llmhistory/llmhistory/view"
)

// BenchmarkStorePages serves the viewer's pages from a SQLite store of
// LLMHISTORY_BENCH_RECORDS records (default 100,000; the store's own
// benchmarks use the same workload and keep the file in the temporary
// directory across runs): the first page of conversations, a
// conversation, a call and the overview, each asked of the store as the
// page is drawn.
func BenchmarkStorePages(b *testing.B) {
	n := storetest.BenchRecords()
	d := storetest.Fill(b, "sqlite:"+storetest.CachedSQLite(n), n)
	ctx := context.Background()
	s, err := store.OpenWith(ctx, d.URL, store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := view.NewHandler(view.FromStore(s, 0), view.Options{})
	serve := func(b *testing.B, path func(i int) string) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if w := fetch(b, h, http.MethodGet, path(i), nil); w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path(i), w.Code, w.Body.String())
			}
		}
	}
	b.Run("page=conversations", func(b *testing.B) { serve(b, func(int) string { return "/" }) })
	b.Run("page=conversation", func(b *testing.B) {
		serve(b, func(i int) string { return "/c/" + d.Traces[i%len(d.Traces)] })
	})
	b.Run("page=call", func(b *testing.B) {
		serve(b, func(i int) string { return "/call/" + d.CallIDs[i%len(d.CallIDs)] })
	})
	b.Run("page=overview", func(b *testing.B) { serve(b, func(int) string { return "/overview" }) })
}

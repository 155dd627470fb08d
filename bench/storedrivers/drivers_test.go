package storedrivers

import (
	"path/filepath"
	"testing"

	"github.com/llmhistory/llmhistory/store/storetest"
)

var drivers = []struct{ name, scheme string }{
	{"modernc", "sqlite:"},
	{"ncruces", "ncruces:"},
}

// Both drivers pass the store's conformance suite.
func TestConformance(t *testing.T) {
	for _, d := range drivers {
		t.Run("driver="+d.name, func(t *testing.T) {
			storetest.Run(t, storetest.Harness{
				NewURL: func(t *testing.T) string { return d.scheme + filepath.Join(t.TempDir(), "h.db") },
				Exec: func(t *testing.T, url, query string) {
					t.Skip("the suite's raw SQL runs against store/sqlite's driver only")
				},
			})
		})
	}
}

func BenchmarkIngest(b *testing.B) {
	for _, d := range drivers {
		b.Run("driver="+d.name, func(b *testing.B) {
			storetest.BenchIngest(b, d.scheme+filepath.Join(b.TempDir(), "bench.db"))
		})
	}
}

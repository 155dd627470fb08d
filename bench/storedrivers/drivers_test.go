package storedrivers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	_ "github.com/llmhistory/llmhistory/bench/storedrivers/ncruces"
	"github.com/llmhistory/llmhistory/internal/storebench"
	_ "github.com/llmhistory/llmhistory/store/sqlite"
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
			storebench.BenchIngest(b, d.scheme+filepath.Join(b.TempDir(), "bench.db"))
		})
	}
}

// TestBinarySize builds a program that records into a store with each
// driver, and one that only records, and logs their sizes.
func TestBinarySize(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	dir := t.TempDir()
	size := map[string]int64{}
	for _, prog := range []string{"recorder", "modernc", "ncruces"} {
		bin := filepath.Join(dir, prog)
		out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/size/"+prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, out)
		}
		st, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		size[prog] = st.Size()
	}
	t.Logf("recorder only: %.1f MB; with store/sqlite (modernc): %.1f MB (+%.1f); with ncruces: %.1f MB (+%.1f)",
		mb(size["recorder"]), mb(size["modernc"]), mb(size["modernc"]-size["recorder"]), mb(size["ncruces"]), mb(size["ncruces"]-size["recorder"]))
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// BenchmarkQueries fills a store of LLMHISTORY_BENCH_RECORDS records
// (default 10,000 here, for CI's one pass) with each driver, the same
// records, kept in the temporary directory across runs, and asks both
// the same questions.
func BenchmarkQueries(b *testing.B) {
	n := 10_000
	if os.Getenv("LLMHISTORY_BENCH_RECORDS") != "" {
		n = storebench.Records()
	}
	for _, d := range drivers {
		b.Run("driver="+d.name, func(b *testing.B) {
			file := filepath.Join(os.TempDir(), d.name+"-"+filepath.Base(storebench.CachedSQLite(n)))
			storebench.BenchQueries(b, storebench.Fill(b, d.scheme+file, n))
		})
	}
}

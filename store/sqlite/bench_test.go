package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/llmhistory/llmhistory/store/storetest"
)

func BenchmarkIngest(b *testing.B) {
	storetest.BenchIngest(b, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
}

package quantile_test

import (
	"fmt"

	"github.com/llmhistory/llmhistory/internal/quantile"
)

// Durations go in; the p50 and p95 come out within 1% of the exact
// nearest-rank values (500 and 950), the same wherever the sketch is
// kept.
func Example() {
	var s quantile.Sketch
	for ms := 1; ms <= 1000; ms++ {
		s.Add(float64(ms))
	}
	enc := s.AppendBinary(nil) // what a store keeps

	var kept quantile.Sketch
	if err := kept.MergeBinary(enc); err != nil {
		panic(err)
	}
	fmt.Printf("p50 %.0f ms, p95 %.0f ms, %d calls\n", kept.Quantile(0.5), kept.Quantile(0.95), kept.Count())
	// Output:
	// p50 498 ms, p95 944 ms, 1000 calls
}

package storebench_test

import (
	"fmt"
	"time"

	"github.com/llmhistory/llmhistory/internal/storebench"
)

// A team's workload: conversations of its users interleaved, each call
// sending the conversation so far.
func Example() {
	w := storebench.NewWorkload(1, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), storebench.MonthStep)
	recs := w.Batch(1000)
	traces, users := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		traces[r.TraceID], users[r.UserID] = true, true
	}
	fmt.Printf("%d records, %d conversations, %d users, over %s\n", len(recs), len(traces), len(users),
		1000*storebench.MonthStep)
	// Output:
	// 1000 records, 71 conversations, 67 users, over 43m12s
}

// Command teamhistory writes a team's generated history as JSON Lines:
// the records the store's and the viewer's benchmarks are made of
// (internal/storebench's Workload), to import into a store and look at.
//
//	go run ./internal/storebench/teamhistory -records 20000 -calls 9 > team.jsonl
//	llmhistory import team.jsonl --into sqlite:team.db
//	llmhistory view sqlite:team.db
//
// The defaults are a team's day at the scale of docs/store.md's figures:
// 500 users, each on a tag or two and a tenant, conversations of 5 to 50
// calls (one in 200 of 100), 64 at a time, over 30 days.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llmhistory/llmhistory/internal/storebench"
)

func main() {
	records := flag.Int("records", 20000, "how many records")
	calls := flag.Int("calls", 0, "calls per conversation (0: 5 to 50)")
	users := flag.Int("users", 500, "distinct users")
	days := flag.Float64("days", 30, "the days the records spread over")
	seed := flag.Uint64("seed", 1, "the generator's seed")
	flag.Parse()
	end := time.Now().UTC().Truncate(time.Hour)
	if err := write(os.Stdout, *records, *calls, *users, *days, *seed, end); err != nil {
		fmt.Fprintln(os.Stderr, "teamhistory:", err)
		os.Exit(1)
	}
}

// write writes records records of a team's workload ending at end.
func write(w io.Writer, records, calls, users int, days float64, seed uint64, end time.Time) error {
	o := storebench.WorkloadOptions{Users: users}
	if calls > 0 {
		o.MinCalls, o.MaxCalls, o.LongEvery = calls, calls, 1<<30
	}
	step := time.Duration(days * float64(24*time.Hour) / float64(max(records, 1)))
	wl := storebench.NewWorkloadWith(seed, end.Add(-time.Duration(records)*step), step, o)
	out := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	for range records {
		r := wl.Next()
		buf = append(r.AppendJSON(buf[:0]), '\n')
		if _, err := out.Write(buf); err != nil {
			return err
		}
	}
	return out.Flush()
}

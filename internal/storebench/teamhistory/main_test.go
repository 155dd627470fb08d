package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/llmhistory/llmhistory/record"
)

// Twenty records of conversations of 9 calls, ending now: JSON Lines that
// record's reader takes.
func Example() {
	var b bytes.Buffer
	if err := write(&b, 20, 9, 500, 30, 1, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		panic(err)
	}
	recs, err := record.ReadJSONL(&b)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(recs), "records, the first at", recs[0].Timestamp)
	// Output:
	// 20 records, the first at 2026-10-02T00:00:00.000000Z
}

package proof

import "fmt"

// The soak's fault script is a pure function of the seed, the call and
// the attempt: a failing run is replayed exactly with
// LLMHISTORY_SOAK_SEED, and the same call meets the same faults with and
// without the recorder.
func Example_faultScript() {
	const seed = 42
	for call := range 4 {
		fmt.Printf("call %d:", call)
		for attempt := range 3 {
			fmt.Printf(" %v", faultFor(seed, call, attempt))
		}
		fmt.Println()
	}
	first, again := faultFor(seed, 2, 1), faultFor(seed, 2, 1)
	fmt.Println("again:", first == again)
	// Output:
	// call 0: end-mid-event ok ok
	// call 1: garbage 429 ok
	// call 2: ok echo-key long-crlf
	// call 3: 503 503 long-crlf
	// again: true
}

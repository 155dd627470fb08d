//go:build race

package cost_test

// raceEnabled: the race detector changes allocation counts, so tests that
// assert them are skipped under -race.
const raceEnabled = true

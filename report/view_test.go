package report

import "testing"

func TestHuman(t *testing.T) {
	for ms, want := range map[float64]string{
		0: "0 s", 0.0004: "0.4 µs", 0.2: "200 µs", 0.99951: "1 ms", 40.93: "40.9 ms", 100.495: "100 ms",
		999.7: "1 s", 2400: "2.4 s", 5598.409: "5.6 s", 59_990: "1 min 0 s", 125_000: "2 min 5 s",
		3_700_000: "1 h 2 min", -1: "–",
	} {
		if got := human(ms); got != want {
			t.Errorf("human(%v) = %q, want %q", ms, got, want)
		}
	}
}

//go:build !race

package storebench

// Race is true in a binary built with the race detector.
const Race = false

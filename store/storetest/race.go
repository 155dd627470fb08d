//go:build race

package storetest

// Race is true in a binary built with the race detector.
const Race = true

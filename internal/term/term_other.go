//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package term

// Elsewhere (Windows, Plan 9, wasm) the command does not look for a
// terminal: no colour by default, no progress line, and the demo writes
// its report where it always does off a terminal.
func isTTY(uintptr) bool   { return false }
func ttyWidth(uintptr) int { return 0 }

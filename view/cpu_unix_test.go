//go:build unix

package view_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used: on a
// machine shared with other work, a benchmark's CPU time says what it
// costs when its wall-clock time says how busy the machine was.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

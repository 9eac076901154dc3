//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) this process has used so far: on
// a machine shared with other work, a benchmark's CPU time per operation is
// steadier than its wall time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

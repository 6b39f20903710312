//go:build unix

package procstat

import (
	"syscall"
	"time"
)

// SelfCPU is the user + system CPU time of the calling process, all its
// threads, from getrusage(RUSAGE_SELF) (microsecond resolution, where CPU
// reads /proc in 10 ms ticks); 0 when it cannot be read.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package runtime_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process used so far (user and system):
// benchmarks report it per event beside wall time, since it suffers less
// from other processes sharing the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package benchmarks

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process used so far (user and system).
// BenchmarkDispatch reports it per event beside wall time: on a machine
// shared with other work it moves less than wall time, and it shows what a
// peer costs in all, its submitters and its workers together.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package workload

import (
	"time"
)

// Spin is a calibrated busy loop: CPU work without sleeping or touching
// memory.
type Spin struct {
	iters int
}

// spinStep is one iteration of the loop: a step of a 64-bit LCG, which the
// compiler cannot fold away because each step depends on the one before.
func spinStep(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

// spin runs n iterations from x and returns the result.
func spin(x uint64, n int) uint64 {
	for range n {
		x = spinStep(x)
	}
	return x
}

// Calibrate returns a Spin whose Run takes about d of CPU time on this
// machine. It measures for a few milliseconds and keeps the fastest of
// several rounds, so a preempted round does not inflate the result.
// d <= 0 gives a Spin that does nothing.
func Calibrate(d time.Duration) Spin {
	if d <= 0 {
		return Spin{}
	}
	const n = 1 << 20
	best := time.Duration(1<<63 - 1)
	var sink uint64
	for range 5 {
		start := time.Now()
		sink += spin(sink, n)
		if el := time.Since(start); el < best {
			best = el
		}
	}
	iters := max(1, int(float64(n)*float64(d)/float64(max(best, 1))))
	if sink == 0 { // practically never; keeps sink alive
		iters++
	}
	return Spin{iters: iters}
}

// Iterations returns the loop's length.
func (s Spin) Iterations() int { return s.iters }

// Run does the calibrated work, seeded by x, and returns a value that
// depends on it.
func (s Spin) Run(x uint64) uint64 { return spin(x, s.iters) }

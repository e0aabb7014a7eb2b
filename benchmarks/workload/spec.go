package workload

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// NumKeys is the number of distinct keys of every workload.
const NumKeys = 10000

// HotKey is the index of the key that skewed workloads favour.
const HotKey = 0

// seqLen is the length of a key sequence; a power of two, so the producer
// wraps around it with a mask.
const seqLen = 1 << 20

// Spec is one workload of the suite.
type Spec struct {
	// Name is the workload's name in benchmark names.
	Name string
	// Skewed gives HotKey half of the events; the other half is uniform
	// over all keys.
	Skewed bool
	// Work is the CPU time the handler spends per event (0: none).
	Work time.Duration
	// Submitters is the number of goroutines that submit the events, each
	// with its own keys (0 means 1): a consumer fed by several partitions
	// submits from several goroutines.
	Submitters int
}

// Dispatch returns the workloads of BenchmarkDispatch, in report order.
func Dispatch() []Spec {
	return []Spec{
		{Name: "uniform-noop"},
		{Name: "uniform-1us", Work: time.Microsecond},
		{Name: "skewed-noop", Skewed: true},
		{Name: "skewed-1us", Skewed: true, Work: time.Microsecond},
		{Name: "uniform-noop-4sub", Submitters: 4},
	}
}

// Keys returns the names of the NumKeys keys, index i named "key-i".
func Keys() []string {
	keys := make([]string, NumKeys)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	return keys
}

// Sequence returns the key indices the producer submits, in order: a
// fixed pseudo-random draw, the same for every peer and every run.
func (s Spec) Sequence() []uint32 {
	rng := rand.New(rand.NewPCG(1, 2))
	seq := make([]uint32, seqLen)
	for i := range seq {
		if s.Skewed && rng.IntN(2) == 0 {
			seq[i] = HotKey
		} else {
			seq[i] = uint32(rng.IntN(NumKeys))
		}
	}
	return seq
}

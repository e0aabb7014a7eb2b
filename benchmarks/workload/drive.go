package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// Run is one run of a workload against one peer: n events drawn from a
// key sequence, submitted by Drive and verified by Verify.
type Run struct {
	keys      []string
	seq       []uint32
	n         int
	submitted []uint32 // per key: events submitted, the last one's Seq
	check     *Check
}

// NewRun prepares a run of n events over keys (from Keys), drawn in the
// order of seq (from Spec.Sequence), with spin's work per event. ordered
// turns on the per-key order check; track records completion times for
// LastCold.
func NewRun(keys []string, seq []uint32, n int, spin Spin, ordered, track bool) *Run {
	return &Run{
		keys:      keys,
		seq:       seq,
		n:         n,
		submitted: make([]uint32, len(keys)),
		check:     NewCheck(n, ordered, track, spin),
	}
}

// Handler returns the handler to build the peer with.
func (r *Run) Handler() peers.Handler { return r.check.Handler() }

// Drive submits the run's events to p from the calling goroutine, then
// drains p. It is the part of a run that benchmarks time.
func (r *Run) Drive(ctx context.Context, p peers.Peer) error {
	mask := len(r.seq) - 1
	r.check.start = time.Now()
	for i := range r.n {
		k := r.seq[i&mask]
		s := r.submitted[k] + 1
		r.submitted[k] = s
		if err := p.Submit(ctx, r.keys[k], peers.Event{Key: k, Seq: s, Index: uint32(i)}); err != nil {
			return fmt.Errorf("submit event %d: %w", i, err)
		}
	}
	if err := p.Drain(ctx); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	return nil
}

// Verify returns an error unless every event was handled exactly once
// and, for an ordered peer, in per-key order. Call it after Drive.
func (r *Run) Verify() error { return r.check.Verify(r.submitted) }

// LastCold returns how long after the first submit the last event of a
// key other than HotKey completed. The run must track completion times.
func (r *Run) LastCold() time.Duration {
	mask := len(r.seq) - 1
	var last int64
	for i, at := range r.check.doneAt {
		if r.seq[i&mask] != HotKey && at > last {
			last = at
		}
	}
	return time.Duration(last)
}

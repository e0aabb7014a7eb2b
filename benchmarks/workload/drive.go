package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// Run is one run of a workload against one peer: n events drawn from a
// key sequence, split over its submitters, submitted by Drive and verified
// by Verify.
type Run struct {
	keys      []string
	seq       []uint32
	parts     [][]peers.Event // per submitter, its events in submission order
	submitted []uint32        // per key: events submitted, the last one's Seq
	check     *Check
}

// Options are the settings of a Run besides its events.
type Options struct {
	// Submitters is the number of goroutines that submit the events (0
	// means 1). Key k belongs to submitter k % Submitters, which submits
	// all of its events: a key's order is its submitter's.
	Submitters int
	// Spin is the handler's CPU work per event.
	Spin Spin
	// Ordered turns on the per-key order check: say whether the peer
	// promises per-key order.
	Ordered bool
	// Track records each event's completion time, for LastCold.
	Track bool
}

// NewRun prepares a run of n events over keys (from Keys), drawn in the
// order of seq (from Spec.Sequence). It builds every event before the run,
// so that Drive only submits them.
func NewRun(keys []string, seq []uint32, n int, o Options) *Run {
	subs := max(1, o.Submitters)
	r := &Run{
		keys:      keys,
		seq:       seq,
		parts:     make([][]peers.Event, subs),
		submitted: make([]uint32, len(keys)),
		check:     NewCheck(n, o.Ordered, o.Track, o.Spin),
	}
	for i := range r.parts {
		r.parts[i] = make([]peers.Event, 0, n/subs+1)
	}
	mask := len(seq) - 1
	for i := range n {
		k := seq[i&mask]
		s := r.submitted[k] + 1
		r.submitted[k] = s
		part := &r.parts[int(k)%subs]
		*part = append(*part, peers.Event{Key: k, Seq: s, Index: uint32(i)})
	}
	return r
}

// Handler returns the handler to build the peer with.
func (r *Run) Handler() peers.Handler { return r.check.Handler() }

// Drive submits the run's events to p, from the calling goroutine or, with
// several submitters, from one goroutine each, then drains p. It is the
// part of a run that benchmarks time.
func (r *Run) Drive(ctx context.Context, p peers.Peer) error {
	r.check.start = time.Now()
	if len(r.parts) == 1 {
		if err := r.submit(ctx, p, r.parts[0]); err != nil {
			return err
		}
	} else if err := r.submitAll(ctx, p); err != nil {
		return err
	}
	if err := p.Drain(ctx); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	return nil
}

// submitAll runs one goroutine per submitter and returns the first error;
// an error stops the other submitters too.
func (r *Run) submitAll(ctx context.Context, p peers.Peer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(r.parts))
	var wg sync.WaitGroup
	for i, part := range r.parts {
		wg.Go(func() {
			if errs[i] = r.submit(ctx, p, part); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("submitter %d: %w", i, err)
		}
	}
	return nil
}

// submit hands events to p in order.
func (r *Run) submit(ctx context.Context, p peers.Peer, events []peers.Event) error {
	for _, ev := range events {
		if err := p.Submit(ctx, r.keys[ev.Key], ev); err != nil {
			return fmt.Errorf("submit event %d: %w", ev.Index, err)
		}
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

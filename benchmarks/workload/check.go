package workload

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// Check wraps the handler of one run and verifies what a peer did with
// the run's events. Its per-event cost is O(1), without atomics or locks,
// and the same for every peer of a kind: an ordered peer's events are
// checked against the last sequence number handled for their key; an
// unordered peer's events are counted in a slot of their own.
type Check struct {
	ordered bool
	spin    Spin
	last    []uint32 // ordered: seq of the last event handled, per key
	seen    []uint8  // unordered: times each event was handled
	doneAt  []int64  // when tracking: completion time of each event, ns since start
	start   time.Time

	bad   atomic.Bool
	mu    sync.Mutex
	first error // the first violation, under mu
}

// NewCheck returns a check for a run of n events. ordered says whether the
// peer promises per-key order; track records each event's completion time
// for LastCold.
func NewCheck(n int, ordered, track bool, spin Spin) *Check {
	c := &Check{ordered: ordered, spin: spin}
	if ordered {
		c.last = make([]uint32, NumKeys)
	} else {
		c.seen = make([]uint8, n)
	}
	if track {
		c.doneAt = make([]int64, n)
	}
	return c
}

// Handler returns the handler to give the peer: it does the workload's
// CPU work, then checks the event.
func (c *Check) Handler() peers.Handler {
	return func(_ string, ev peers.Event) {
		if c.spin.iters > 0 && c.spin.Run(uint64(ev.Index)) == 0 {
			// Practically never; using the result keeps the work.
			c.fail(fmt.Errorf("spin of event %d reached zero", ev.Index))
		}
		if c.ordered {
			if c.last[ev.Key]+1 != ev.Seq {
				c.fail(fmt.Errorf("key %d: event %d handled after event %d", ev.Key, ev.Seq, c.last[ev.Key]))
			}
			c.last[ev.Key] = ev.Seq
		} else {
			c.seen[ev.Index]++
		}
		if c.doneAt != nil {
			c.doneAt[ev.Index] = int64(time.Since(c.start))
		}
	}
}

// fail records a violation; only the first one is kept.
func (c *Check) fail(err error) {
	if c.bad.Swap(true) {
		return
	}
	c.mu.Lock()
	c.first = err
	c.mu.Unlock()
}

// Verify returns an error unless every submitted event was handled exactly
// once and, for an ordered peer, in per-key order. submitted is the
// producer's count of events per key; call Verify after the peer drained.
func (c *Check) Verify(submitted []uint32) error {
	if c.bad.Load() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return fmt.Errorf("order violated: %w", c.first)
	}
	if c.ordered {
		for k, want := range submitted {
			if got := c.last[k]; got != want {
				return fmt.Errorf("key %d: last event handled is %d of %d submitted", k, got, want)
			}
		}
		return nil
	}
	for i, n := range c.seen {
		if n != 1 {
			return fmt.Errorf("event %d handled %d times", i, n)
		}
	}
	return nil
}

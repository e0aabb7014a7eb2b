package console

import (
	"context"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// The last hour. Every Config.Sample the console takes a sample of each
// subscriber (its handled and failed counters, its backlog, the age of its
// oldest pending event, its parked events) into a ring of its own, which
// holds the last hour of samples and no more: an operator who opens the
// page during an incident sees whether the backlog grows or drains, and
// since when.
//
// Memory: a sample is 48 bytes (sampleBytes), and a subscriber's ring holds
// historySize(Sample) of them: an hour's worth, at most maxSamples. At the
// default interval of 5 seconds that is 720 samples, 34,560 bytes per
// subscriber, allocated at its first sample. A ring whose subscriber is
// gone (a store's view whose namespace has no parked key left) is dropped
// once its newest sample is an hour old.

// historySpan is how far back the charts look.
const historySpan = time.Hour

// maxSamples bounds a ring: with a Sample under a second, the ring holds
// the last maxSamples samples, less than an hour.
const maxSamples = 3600

// sampleBytes is the size of a sample (a test keeps it so).
const sampleBytes = 48

// sample is one look at a subscriber. handled and failed are counters
// (their differences are the rates the charts draw); the others are gauges.
type sample struct {
	at      int64  // Unix nanoseconds
	handled uint64 // Stats.Handled
	failed  uint64 // Stats.Retried + Stats.DeadLettered
	pending int64  // Stats.Pending; -1 for a subscriber seen through a store
	oldest  int64  // the age of the oldest pending event, nanoseconds
	parked  int64  // parked events
}

// ring holds a subscriber's latest samples, oldest first from start.
type ring struct {
	buf   []sample // its capacity is fixed when the ring is made
	start int
	n     int
}

func newRing(size int) *ring { return &ring{buf: make([]sample, size)} }

// add appends s, replacing the oldest sample when the ring is full.
func (r *ring) add(s sample) {
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = s
		r.n++
		return
	}
	r.buf[r.start] = s
	r.start = (r.start + 1) % len(r.buf)
}

// samples returns a copy of the samples, oldest first.
func (r *ring) samples() []sample {
	out := make([]sample, r.n)
	for i := range out {
		out[i] = r.buf[(r.start+i)%len(r.buf)]
	}
	return out
}

// newest returns the newest sample, if there is one.
func (r *ring) newest() (sample, bool) {
	if r.n == 0 {
		return sample{}, false
	}
	return r.buf[(r.start+r.n-1)%len(r.buf)], true
}

// historySize is how many samples a ring keeps at interval every: an
// hour's worth, at most maxSamples.
func historySize(every time.Duration) int {
	n := int((historySpan + every - 1) / every)
	return min(max(n, 2), maxSamples)
}

// subscriberID names a subscriber of an entity.
type subscriberID struct{ entity, subscriber string }

// history is the rings of every subscriber sampled.
type history struct {
	every time.Duration
	size  int
	// mu guards rings.
	mu    sync.Mutex
	rings map[subscriberID]*ring
}

func newHistory(every time.Duration) *history {
	return &history{every: every, size: historySize(every), rings: make(map[subscriberID]*ring)}
}

// record adds the samples of one round, taken at now, and drops the rings
// that have had no sample for an hour.
func (h *history) record(now time.Time, taken map[subscriberID]sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range taken {
		r := h.rings[id]
		if r == nil {
			r = newRing(h.size)
			h.rings[id] = r
		}
		r.add(s)
	}
	for id, r := range h.rings {
		if s, ok := r.newest(); ok && now.UnixNano()-s.at > int64(historySpan) {
			delete(h.rings, id)
		}
	}
}

// of returns a copy of id's samples, oldest first.
func (h *history) of(id subscriberID) []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.rings[id]; r != nil {
		return r.samples()
	}
	return nil
}

// sampleOf is a subscriber's sample at now.
func sampleOf(now time.Time, s inspect.Subscriber) sample {
	sm := sample{at: now.UnixNano(), pending: -1, parked: int64(s.ParkedEvents)}
	if s.Live {
		st := s.Stats
		sm.handled, sm.failed = st.Handled, st.Retried+st.DeadLettered
		sm.pending, sm.oldest, sm.parked = st.Pending, int64(s.OldestAge), st.Parked
	}
	return sm
}

// Sample takes a sample of every subscriber now, for the last-hour charts.
// The console calls it every Config.Sample; with a negative Sample it
// never does, and a service (or a test) may call it when it chooses. An
// entity that cannot be read is left out of the round.
func (c *Console) Sample(ctx context.Context) {
	ins, err := c.inspectors(ctx)
	if err != nil {
		c.logger.Warn("ordergen console: sample: the entities cannot be read", "error", err)
		return
	}
	taken := make(map[subscriberID]sample)
	for _, in := range ins {
		subs, err := in.Subscribers(ctx, inspect.Query{Oldest: true})
		if err != nil {
			continue
		}
		now := time.Now()
		for _, s := range subs {
			taken[subscriberID{in.Entity(), s.Name}] = sampleOf(now, s)
		}
	}
	c.history.record(time.Now(), taken)
	if c.sampled != nil {
		c.sampled()
	}
}

// sampleLoop samples every interval until ctx ends (Close). A round that
// a slow store holds up ends at the next tick, or at Close.
func (c *Console) sampleLoop(ctx context.Context, every time.Duration) {
	defer close(c.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			round, end := context.WithTimeout(ctx, max(every, time.Second))
			c.Sample(round)
			end()
		}
	}
}

// Close stops the sampling of the last-hour charts; the console goes on
// serving. It returns once the sampler has stopped; calling it again does
// nothing.
func (c *Console) Close() {
	c.closeOnce.Do(func() {
		if c.stop != nil {
			c.stop()
			<-c.stopped
		}
	})
}

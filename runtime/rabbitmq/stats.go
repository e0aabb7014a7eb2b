package rabbitmq

import (
	"sync"
	"sync/atomic"
	"time"
)

// Stats are a Consumer's counters since it started, and its state now.
type Stats struct {
	// Delivered is the number of messages the broker delivered.
	Delivered uint64
	// Submitted is the number of messages handed to every subscriber.
	Submitted uint64
	// Acked is the number of acknowledgements sent (a multiple one counts
	// once).
	Acked uint64
	// Rejected is the number of bad messages rejected to the dead-letter
	// exchange.
	Rejected uint64
	// Unfinished is the number of messages given up without finishing, to
	// be delivered again: withdrawn or running when their subscription
	// ended.
	Unfinished uint64
	// Reconnects is the number of times the connection was lost (or could
	// not be made) and dialled again.
	Reconnects uint64
	// QueueLosses is the number of times a queue's channel was lost
	// while the connection lived (a consumer_timeout, a deleted queue).
	QueueLosses uint64
	// InFlight is the number of messages taken and not settled now, parked
	// ones included.
	InFlight int
	// Parked is the number of those parked in memory: they are settled when
	// their parks are resolved (Replay or Discard).
	Parked int
	// Subscribed is the number of queues subscribed now.
	Subscribed int
	// Blocked is the number of queues whose prefetch is full now;
	// BlockedByParks of them are held by messages parked in memory.
	Blocked, BlockedByParks int
}

// QueueStatus is the state of one queue the consumer subscribes to.
type QueueStatus struct {
	// Queue names it.
	Queue string
	// Subscribed reports whether a channel consumes it now. With a single
	// active consumer, a subscribed queue delivers only while this
	// consumer is its active one.
	Subscribed bool
	// Unsettled is the number of its messages delivered and not
	// acknowledged or rejected: what its prefetch counts.
	Unsettled int
	// Parked is the number of those parked in memory.
	Parked int
	// Consumed is the number of its messages delivered to this consumer.
	Consumed uint64
	// Blocked says why its deliveries stopped: "in_flight" (the prefetch
	// is full), "parked" (the prefetch filled with messages parked in
	// memory holding half of it or more, and they still do); "" when they
	// did not.
	Blocked string
}

// counters are the consumer's running counts.
type counters struct {
	delivered, submitted, acks, rejected, unfinished, reconnects, queueLosses atomic.Uint64

	mu    sync.Mutex
	byWhy map[Reason]uint64
}

func (s *counters) deadLetter(r Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byWhy == nil {
		s.byWhy = map[Reason]uint64{}
	}
	s.byWhy[r]++
}

func (s *counters) reasons() map[Reason]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Reason]uint64, len(s.byWhy))
	for r, n := range s.byWhy {
		out[r] = n
	}
	return out
}

// Stats returns a snapshot of the consumer's counters.
func (c *Consumer[K, E]) Stats() Stats {
	s := Stats{
		Delivered: c.stats.delivered.Load(), Submitted: c.stats.submitted.Load(), Acked: c.stats.acks.Load(),
		Rejected: c.stats.rejected.Load(), Unfinished: c.stats.unfinished.Load(), Reconnects: c.stats.reconnects.Load(),
		QueueLosses: c.stats.queueLosses.Load(),
	}
	if src := c.source(); src != nil {
		s.InFlight = src.Unsettled()
	}
	for _, q := range c.Queues() {
		s.Parked += q.Parked
		if q.Subscribed {
			s.Subscribed++
		}
		if q.Blocked != "" {
			s.Blocked++
		}
		if q.Blocked == blockedParked.String() {
			s.BlockedByParks++
		}
	}
	return s
}

// Queues returns the state of the queues the consumer subscribes to, in
// the order of Config.Queues.
func (c *Consumer[K, E]) Queues() []QueueStatus {
	parked := map[int]int{}
	if src := c.source(); src != nil {
		for _, sb := range c.current() {
			_, parked[sb.index] = src.UnsettledOf(sb.own)
		}
	}
	out := make([]QueueStatus, 0, len(c.cfg.Queues))
	for _, q := range c.cfg.Queues {
		st := c.queue[q]
		st.mu.Lock()
		out = append(out, QueueStatus{Queue: st.name, Subscribed: st.subscribed, Unsettled: st.unsettled,
			Parked: parked[q], Consumed: st.consumed, Blocked: st.blocked.String()})
		st.mu.Unlock()
	}
	return out
}

// sleepOr waits d, or until stop is closed (then it returns false).
func sleepOr(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

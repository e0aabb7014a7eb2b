package keyed

import (
	"fmt"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Why taking messages stops for every key (Stats.Blocked).
const (
	// BlockedInFlight: MaxInFlight messages are unsettled; taking resumes
	// as they finish.
	BlockedInFlight = "in-flight"
	// BlockedParked: MaxInFlight is reached and messages parked in memory
	// hold half of it or more: taking resumes when their parks are
	// resolved.
	BlockedParked = "parked"
)

// Stats are a core's counters since it started, and its state now.
type Stats struct {
	// Received is the number of messages received.
	Received uint64
	// Finished and Unfinished count the messages settled so.
	Finished, Unfinished uint64
	// DeadLettered is the number of bad messages written to the
	// dead-letter destination; DeadLetterErrors the failed writes.
	DeadLettered, DeadLetterErrors uint64
	// Fenced is the number of stale messages given back behind a fence.
	Fenced uint64
	// Refused is the number of messages given back because the consumer
	// was stopping.
	Refused uint64
	// Ended counts the ownerships that ended before their messages did.
	Ended Ended
	// Unsettled is the number of messages taken and not settled now, and
	// Parked of them parked in memory.
	Unsettled, Parked int
	// Waiting is the number of messages waiting for their key's ownership
	// to end.
	Waiting int
	// Keys is the number of keys held now; Stashed of them wait for room.
	Keys, Stashed int
	// OldestUnsettledAge is how long ago the oldest unsettled message was
	// taken.
	OldestUnsettledAge time.Duration
	// Blocked says why no message is taken for any key ("" when they are):
	// BlockedInFlight or BlockedParked, as of the last look (every
	// Config.SweepEvery).
	Blocked string
}

// Ended counts ownerships ended, by reason.
type Ended struct {
	// Unfinished: a message of the key was settled Unfinished.
	Unfinished uint64
	// Lease: a message's lease was about to end for good.
	Lease uint64
	// LeaseLost: the broker refused to extend a lease.
	LeaseLost uint64
	// LeaseLapsed: the lease the broker last confirmed was about to end.
	LeaseLapsed uint64
}

// Stats returns a snapshot of the core's counters.
func (c *Core[K, E, M]) Stats() Stats {
	c.mu.Lock()
	s := c.stats
	s.Waiting = c.waiting
	s.Keys = len(c.keys)
	s.Stashed = c.stashed
	owners := make([]*transport.Ownership, 0, len(c.keys))
	var oldest time.Time
	for _, h := range c.keys {
		owners = append(owners, h.own)
		for _, e := range h.live {
			if e.st == 0 {
				if oldest.IsZero() || e.taken.Before(oldest) {
					oldest = e.taken
				}
				break
			}
		}
	}
	c.mu.Unlock()
	// The source's lock comes before c.mu: asked without it.
	s.Unsettled = c.src.Unsettled()
	for _, o := range owners {
		_, p := c.src.UnsettledOf(o)
		s.Parked += p
	}
	if !oldest.IsZero() {
		s.OldestUnsettledAge = time.Since(oldest)
	}
	return s
}

// DeadLetteredBy returns the dead-lettered messages by reason.
func (c *Core[K, E, M]) DeadLetteredBy() map[string]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]uint64, len(c.deadByWhy))
	for r, n := range c.deadByWhy {
		out[r] = n
	}
	return out
}

// Metric names, with the system ("pubsub", "sqs") in place of %s.
const (
	// MetricConsumed counts the messages received.
	MetricConsumed = "messaging.client.consumed.messages"
	// MetricUnsettled is the messages taken and not settled.
	MetricUnsettled = "ordergen.%s.unsettled"
	// MetricUnsettledAge is the age of the oldest unsettled message, in
	// seconds.
	MetricUnsettledAge = "ordergen.%s.unsettled.oldest_age"
	// MetricParked is the unsettled messages parked in memory.
	MetricParked = "ordergen.%s.parked"
	// MetricKeys is the keys held.
	MetricKeys = "ordergen.%s.keys"
	// MetricBlocked is 1 while no message is taken for any key, with the
	// reason in AttrBlockedReason.
	MetricBlocked = "ordergen.%s.blocked"
	// MetricDeadLettered counts the bad messages dead-lettered, by
	// AttrDeadLetterReason; failed writes have error.type "write".
	MetricDeadLettered = "ordergen.%s.dead_lettered"
	// MetricEnded counts the ownerships of keys that ended before their
	// messages did, by AttrEndReason.
	MetricEnded = "ordergen.%s.ownerships.ended"
)

// Attribute keys, with the system in place of %s.
const (
	AttrBlockedReason    = "ordergen.%s.blocked.reason"
	AttrDeadLetterReason = "ordergen.%s.dead_letter.reason"
	AttrEndReason        = "ordergen.%s.end.reason"
)

// metrics are the core's instruments; nil records nothing.
type metrics struct {
	unregister func() error
}

func (m *metrics) stop() {
	if m != nil && m.unregister != nil {
		_ = m.unregister()
	}
}

// startMetrics registers the core's instruments with Config.Meter.
func (c *Core[K, E, M]) startMetrics() error {
	mp := c.cfg.Meter
	if mp == nil {
		return nil
	}
	m := mp.Meter(c.cfg.Scope)
	if m == nil {
		return fmt.Errorf("metrics: the MeterProvider gave no meter")
	}
	sys := c.cfg.System
	with := func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append(append([]meter.Attribute(nil), c.cfg.Attributes...), more...)...)
	}
	base := with()
	gauge := func(name, unit, desc string) meter.Instrument {
		return meter.Instrument{Name: fmt.Sprintf(name, sys), Kind: meter.KindGauge, Unit: unit, Description: desc}
	}
	consumed := meter.Instrument{Name: MetricConsumed, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Messages received."}
	unsettled := gauge(MetricUnsettled, "{message}", "Messages taken and not settled.")
	age := meter.Instrument{Name: fmt.Sprintf(MetricUnsettledAge, sys), Kind: meter.KindFloatGauge, Unit: "s", Description: "Age of the oldest unsettled message."}
	parked := gauge(MetricParked, "{message}", "Unsettled messages parked in memory.")
	keys := gauge(MetricKeys, "{key}", "Keys held.")
	blocked := gauge(MetricBlocked, "1", "1 while no message is taken for any key.")
	dead := meter.Instrument{Name: fmt.Sprintf(MetricDeadLettered, sys), Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Bad messages dead-lettered, by reason."}
	ended := meter.Instrument{Name: fmt.Sprintf(MetricEnded, sys), Kind: meter.KindObservedCounter, Unit: "{ownership}", Description: "Ownerships of keys ended before their messages did, by reason."}
	byBlocked := map[string]meter.AttributeSet{}
	for _, r := range []string{BlockedInFlight, BlockedParked} {
		byBlocked[r] = with(meter.Attribute{Key: fmt.Sprintf(AttrBlockedReason, sys), Value: r})
	}
	byEnd := map[string]meter.AttributeSet{}
	for _, r := range []string{EndUnfinished, EndLease, EndLeaseLost, EndLeaseLapsed} {
		byEnd[r] = with(meter.Attribute{Key: fmt.Sprintf(AttrEndReason, sys), Value: r})
	}
	dlFailed := with(meter.Attribute{Key: meter.AttrErrorType, Value: "write"})
	var reasonsMu sync.Mutex // callbacks may run at once
	byReason := map[string]meter.AttributeSet{}
	unregister, err := m.Observe(func(o meter.Observer) {
		s := c.Stats()
		o.ObserveInt64(consumed, int64(s.Received), base)
		o.ObserveInt64(unsettled, int64(s.Unsettled), base)
		o.ObserveFloat64(age, s.OldestUnsettledAge.Seconds(), base)
		o.ObserveInt64(parked, int64(s.Parked), base)
		o.ObserveInt64(keys, int64(s.Keys), base)
		for r, set := range byBlocked {
			v := int64(0)
			if s.Blocked == r {
				v = 1
			}
			o.ObserveInt64(blocked, v, set)
		}
		o.ObserveInt64(ended, int64(s.Ended.Unfinished), byEnd[EndUnfinished])
		o.ObserveInt64(ended, int64(s.Ended.Lease), byEnd[EndLease])
		o.ObserveInt64(ended, int64(s.Ended.LeaseLost), byEnd[EndLeaseLost])
		o.ObserveInt64(ended, int64(s.Ended.LeaseLapsed), byEnd[EndLeaseLapsed])
		o.ObserveInt64(dead, int64(s.DeadLetterErrors), dlFailed)
		for r, n := range c.DeadLetteredBy() {
			reasonsMu.Lock()
			set, ok := byReason[r]
			if !ok {
				set = with(meter.Attribute{Key: fmt.Sprintf(AttrDeadLetterReason, sys), Value: r})
				byReason[r] = set
			}
			reasonsMu.Unlock()
			o.ObserveInt64(dead, int64(n), set)
		}
	}, consumed, unsettled, age, parked, keys, blocked, dead, ended)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	c.metrics = &metrics{unregister: unregister}
	return nil
}

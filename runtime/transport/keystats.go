package transport

import (
	"fmt"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/meter"
)

// KeyStats are a KeyIntake's counters since it started, and its state now.
type KeyStats struct {
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
	Ended KeyEnded
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
	// Blocked says why no message is taken for any key, as of the last
	// look (every KeyConfig.SweepEvery).
	Blocked Blocked
}

// KeyEnded counts the ownerships of keys ended before their messages did,
// by reason.
type KeyEnded struct {
	// Unfinished: a message of the key was settled Unfinished.
	Unfinished uint64
	// Lease: a message's lease was about to end for good.
	Lease uint64
	// LeaseLost: the broker refused to extend a lease.
	LeaseLost uint64
	// LeaseLapsed: the lease the broker last confirmed was about to end.
	LeaseLapsed uint64
}

// Stats returns a snapshot of the intake's counters.
func (c *KeyIntake[K, E, M]) Stats() KeyStats {
	c.mu.Lock()
	s := c.stats
	s.Waiting = c.waiting
	s.Keys = len(c.keys)
	s.Stashed = c.stashed
	s.Blocked = c.watch.Now() // the watch's, recorded before it logs
	owners := make([]*Ownership, 0, len(c.keys))
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
	if src := c.src.Load(); src != nil {
		s.Unsettled = src.Unsettled()
		for _, o := range owners {
			_, p := src.UnsettledOf(o)
			s.Parked += p
		}
	}
	if !oldest.IsZero() {
		s.OldestUnsettledAge = time.Since(oldest)
	}
	return s
}

// DeadLetteredBy returns the dead-lettered messages by reason.
func (c *KeyIntake[K, E, M]) DeadLetteredBy() map[Reason]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Reason]uint64, len(c.deadByWhy))
	for r, n := range c.deadByWhy {
		out[r] = n
	}
	return out
}

// The metrics of a KeyIntake besides those of unitstats.go, with the
// system ("pubsub", "sqs") in place of %s.
const (
	// keyMetricUnsettledAge is the age of the oldest unsettled message, in
	// seconds.
	keyMetricUnsettledAge = "ordergen.%s.unsettled.oldest_age"
	// keyMetricKeys is the keys held.
	keyMetricKeys = "ordergen.%s.keys"
	// keyMetricEnded counts the ownerships of keys that ended before their
	// messages did, by keyAttrEndReason.
	keyMetricEnded   = "ordergen.%s.ownerships.ended"
	keyAttrEndReason = "ordergen.%s.end.reason"
)

// keyMetrics are a KeyIntake's instruments; nil records nothing.
type keyMetrics struct {
	unregister func() error
}

func (m *keyMetrics) stop() {
	if m != nil && m.unregister != nil {
		_ = m.unregister()
	}
}

// startMetrics registers the intake's instruments with Config.Meter.
func (c *KeyIntake[K, E, M]) startMetrics() error {
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
	consumed := meter.Instrument{Name: metricConsumed, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Messages received."}
	unsettled := gauge(metricUnsettled, "{message}", "Messages taken and not settled.")
	age := meter.Instrument{Name: fmt.Sprintf(keyMetricUnsettledAge, sys), Kind: meter.KindFloatGauge, Unit: "s", Description: "Age of the oldest unsettled message."}
	parked := gauge(metricParked, "{message}", "Unsettled messages parked in memory.")
	keys := gauge(keyMetricKeys, "{key}", "Keys held.")
	blocked := gauge(metricBlocked, "1", "1 while no message is taken for any key.")
	dead := meter.Instrument{Name: fmt.Sprintf(metricDeadLettered, sys), Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Bad messages dead-lettered, by reason."}
	ended := meter.Instrument{Name: fmt.Sprintf(keyMetricEnded, sys), Kind: meter.KindObservedCounter, Unit: "{ownership}", Description: "Ownerships of keys ended before their messages did, by reason."}
	byBlocked := map[Blocked]meter.AttributeSet{}
	for _, r := range []Blocked{BlockedInFlight, BlockedParked} {
		byBlocked[r] = with(meter.Attribute{Key: fmt.Sprintf(attrBlockedReason, sys), Value: r.String()})
	}
	byEnd := map[string]meter.AttributeSet{}
	for _, r := range []string{endUnfinished, endLease, endLeaseLost, endLeaseLapsed} {
		byEnd[r] = with(meter.Attribute{Key: fmt.Sprintf(keyAttrEndReason, sys), Value: r})
	}
	dlFailed := with(meter.Attribute{Key: meter.AttrErrorType, Value: "write"})
	var reasonsMu sync.Mutex // callbacks may run at once
	byReason := map[Reason]meter.AttributeSet{}
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
		o.ObserveInt64(ended, int64(s.Ended.Unfinished), byEnd[endUnfinished])
		o.ObserveInt64(ended, int64(s.Ended.Lease), byEnd[endLease])
		o.ObserveInt64(ended, int64(s.Ended.LeaseLost), byEnd[endLeaseLost])
		o.ObserveInt64(ended, int64(s.Ended.LeaseLapsed), byEnd[endLeaseLapsed])
		o.ObserveInt64(dead, int64(s.DeadLetterErrors), dlFailed)
		for r, n := range c.DeadLetteredBy() {
			reasonsMu.Lock()
			set, ok := byReason[r]
			if !ok {
				set = with(meter.Attribute{Key: fmt.Sprintf(attrDeadLetterReason, sys), Value: string(r)})
				byReason[r] = set
			}
			reasonsMu.Unlock()
			o.ObserveInt64(dead, int64(n), set)
		}
	}, consumed, unsettled, age, parked, keys, blocked, dead, ended)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	c.metrics = &keyMetrics{unregister: unregister}
	return nil
}

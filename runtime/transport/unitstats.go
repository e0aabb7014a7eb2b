package transport

import (
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/runtime/meter"
)

// unitState is what a UnitConsumer knows of one unit over its
// subscriptions.
type unitState struct {
	name string

	// mu guards what follows.
	mu         sync.Mutex
	subscribed bool
	received   uint64
	unsettled  int
	parked     int
	blocked    Blocked
}

// UnitStatus is the state of one unit a UnitConsumer subscribes to.
type UnitStatus struct {
	// Name names it.
	Name string
	// Subscribed reports whether the consumer subscribes to it now. A
	// subscribed unit delivers only while this consumer is its active one.
	Subscribed bool
	// Received is the number of its messages delivered to this consumer.
	Received uint64
	// Unsettled is the number of its messages taken and not settled, and
	// Parked of those the number parked in memory, as of the last look.
	Unsettled, Parked int
	// Blocked says why its deliveries stopped: its room at the broker is
	// full (BlockedInFlight), and parked messages hold half of it or more
	// (BlockedParked, until they hold less than half).
	Blocked Blocked
}

// UnitStats are a UnitConsumer's counters since it started, and its state
// now.
type UnitStats struct {
	// Received is the number of messages the broker delivered.
	Received uint64
	// Submitted is the number of messages handed to every subscriber.
	Submitted uint64
	// Finished and Unfinished count the messages settled so; Unfinished
	// ones go back to the broker (withdrawn or running when their
	// subscription ended).
	Finished, Unfinished uint64
	// DeadLettered is the number of bad messages given to the dead-letter
	// destination; DeadLetterErrors the failed writes.
	DeadLettered, DeadLetterErrors uint64
	// Reconnects is the number of times the connection was lost (or could
	// not be made) and made again; UnitLosses the number of times a unit's
	// subscription was lost while the connection lived.
	Reconnects, UnitLosses uint64
	// InFlight is the number of messages taken and not settled now,
	// parked ones included; Parked of them are parked in memory (settled
	// when their parks are resolved, Replay or Discard).
	InFlight, Parked int
	// Subscribed is the number of units subscribed now; Blocked of them
	// have a full room, BlockedByParks of those held by parked messages.
	Subscribed, Blocked, BlockedByParks int
}

// Units returns the state of the units, in the order of UnitConfig.Units.
func (u *UnitConsumer[K, E, M, D]) Units() []UnitStatus {
	out := make([]UnitStatus, len(u.units))
	for i, st := range u.units {
		st.mu.Lock()
		out[i] = UnitStatus{Name: st.name, Subscribed: st.subscribed, Received: st.received, Unsettled: st.unsettled, Parked: st.parked, Blocked: st.blocked}
		st.mu.Unlock()
	}
	return out
}

// Stats returns a snapshot of the consumer's counters.
func (u *UnitConsumer[K, E, M, D]) Stats() UnitStats {
	in := u.in.Stats()
	s := UnitStats{Received: u.received.Load(), Submitted: in.Submitted, Finished: in.Finished, Unfinished: in.Unfinished,
		DeadLettered: in.DeadLettered, DeadLetterErrors: in.DeadLetterErrors, Reconnects: u.reconnects.Load(), UnitLosses: u.losses.Load(),
		InFlight: u.in.Unsettled(), Parked: u.in.Parked()}
	for _, st := range u.Units() {
		if st.Subscribed {
			s.Subscribed++
		}
		if st.Blocked != NotBlocked {
			s.Blocked++
		}
		if st.Blocked == BlockedParked {
			s.BlockedByParks++
		}
	}
	return s
}

// The metrics of the intakes' consumers, with the system ("rabbitmq",
// "pubsub") in place of %s. Every measurement carries UnitConfig's (or
// KeyConfig's) Attributes.
const (
	// metricConsumed counts the messages received (per unit: with
	// messaging.destination.name).
	metricConsumed = "messaging.client.consumed.messages"
	// metricUnsettled is the messages taken and not settled (per unit).
	metricUnsettled = "ordergen.%s.unsettled"
	// metricParked is the unsettled messages parked in memory (per unit).
	metricParked = "ordergen.%s.parked"
	// metricBlocked is 1 while no message is taken (for a unit), by
	// attrBlockedReason.
	metricBlocked = "ordergen.%s.blocked"
	// metricDeadLettered counts the bad messages dead-lettered, by
	// attrDeadLetterReason.
	metricDeadLettered = "ordergen.%s.dead_lettered"
	// metricReconnects counts the losses of the connection and of a unit's
	// subscription, by attrLost ("connection", or UnitConfig.Unit).
	metricReconnects = "ordergen.%s.reconnects"

	attrBlockedReason    = "ordergen.%s.blocked.reason"
	attrDeadLetterReason = "ordergen.%s.dead_letter.reason"
	attrLost             = "ordergen.%s.lost"
)

// startMetrics registers the consumer's instruments with UnitConfig.Meter;
// the function it returns unregisters them.
func (u *UnitConsumer[K, E, M, D]) startMetrics() (func(), error) {
	mp := u.cfg.Meter
	if mp == nil {
		return func() {}, nil
	}
	m := mp.Meter(u.cfg.Scope)
	if m == nil {
		return nil, fmt.Errorf("%s: metrics: the MeterProvider gave no meter", u.cfg.System)
	}
	sys := u.cfg.System
	with := func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append(append([]meter.Attribute(nil), u.cfg.Attributes...), more...)...)
	}
	inst := func(name string, kind meter.Kind, unit, desc string) meter.Instrument {
		return meter.Instrument{Name: fmt.Sprintf(name, sys), Kind: kind, Unit: unit, Description: desc}
	}
	consumed := inst(metricConsumed, meter.KindObservedCounter, "{message}", "Messages delivered, per "+u.cfg.Unit+".")
	unsettled := inst(metricUnsettled, meter.KindGauge, "{message}", "Messages delivered and not settled, per "+u.cfg.Unit+".")
	parked := inst(metricParked, meter.KindGauge, "{message}", "Unsettled messages parked in memory, per "+u.cfg.Unit+".")
	blocked := inst(metricBlocked, meter.KindGauge, "{"+u.cfg.Unit+"}", "1 while the "+u.cfg.Unit+"'s room is full, by reason.")
	dead := inst(metricDeadLettered, meter.KindObservedCounter, "{message}", "Bad messages dead-lettered, by reason.")
	reconnects := inst(metricReconnects, meter.KindObservedCounter, "{event}", "Losses of the connection and of subscriptions.")
	type unitSets struct{ plain, inFlight, parked meter.AttributeSet }
	byUnit := map[string]unitSets{}
	for _, name := range u.cfg.Units {
		dest := meter.Attribute{Key: meter.AttrDestination, Value: name}
		reason := func(b Blocked) meter.Attribute {
			return meter.Attribute{Key: fmt.Sprintf(attrBlockedReason, sys), Value: b.String()}
		}
		byUnit[name] = unitSets{with(dest), with(dest, reason(BlockedInFlight)), with(dest, reason(BlockedParked))}
	}
	byReason := map[Reason]meter.AttributeSet{}
	for _, r := range Reasons() {
		byReason[r] = with(meter.Attribute{Key: fmt.Sprintf(attrDeadLetterReason, sys), Value: string(r)})
	}
	lostConn := with(meter.Attribute{Key: fmt.Sprintf(attrLost, sys), Value: "connection"})
	lostUnit := with(meter.Attribute{Key: fmt.Sprintf(attrLost, sys), Value: u.cfg.Unit})
	unregister, err := m.Observe(func(o meter.Observer) {
		for _, st := range u.Units() {
			sets := byUnit[st.Name]
			o.ObserveInt64(consumed, int64(st.Received), sets.plain)
			o.ObserveInt64(unsettled, int64(st.Unsettled), sets.plain)
			o.ObserveInt64(parked, int64(st.Parked), sets.plain)
			o.ObserveInt64(blocked, b2i(st.Blocked == BlockedInFlight), sets.inFlight)
			o.ObserveInt64(blocked, b2i(st.Blocked == BlockedParked), sets.parked)
		}
		byWhy := u.in.Stats().DeadLetteredBy
		for r, set := range byReason {
			o.ObserveInt64(dead, int64(byWhy[r]), set)
		}
		o.ObserveInt64(reconnects, int64(u.reconnects.Load()), lostConn)
		o.ObserveInt64(reconnects, int64(u.losses.Load()), lostUnit)
	}, consumed, unsettled, parked, blocked, dead, reconnects)
	if err != nil {
		return nil, fmt.Errorf("%s: metrics: %w", u.cfg.System, err)
	}
	return func() { _ = unregister() }, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

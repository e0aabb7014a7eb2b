package rabbitmq

import (
	"fmt"

	"github.com/ordergen/ordergen/runtime/meter"
)

// meterName is the instrumentation scope of the consumer's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/rabbitmq"

// The consumer's instruments, recorded through Config.MeterProvider. Every
// measurement carries messaging.system ("rabbitmq") and
// messaging.consumer.group.name (Config.Name); the per-queue ones add
// messaging.destination.name (the queue).
const (
	// MetricConsumed counts the messages delivered, per queue.
	MetricConsumed = "messaging.client.consumed.messages"
	// MetricUnsettled is, per queue, the messages delivered and not
	// acknowledged or rejected: what its prefetch counts.
	MetricUnsettled = "ordergen.rabbitmq.unsettled"
	// MetricParked is, per queue, the unsettled messages parked in memory:
	// they hold their room in the prefetch until their parks are resolved.
	MetricParked = "ordergen.rabbitmq.parked"
	// MetricBlocked is, per queue, 1 while it is blocked, by
	// ordergen.rabbitmq.blocked.reason: "in_flight" while its prefetch is
	// full, or "parked" from the moment its prefetch fills with messages
	// parked in memory holding half of it or more until they hold less
	// than half (the queue waits for an operator); 0 otherwise.
	MetricBlocked = "ordergen.rabbitmq.blocked"
	// MetricDeadLettered counts the bad messages rejected to the
	// dead-letter exchange, by ordergen.rabbitmq.dead_letter.reason (a
	// Reason).
	MetricDeadLettered = "ordergen.rabbitmq.dead_lettered"
	// MetricReconnects counts the losses of the connection ("connection")
	// and of a queue's channel ("queue"), by ordergen.rabbitmq.lost.
	MetricReconnects = "ordergen.rabbitmq.reconnects"
)

// Attribute keys of the consumer's measurements, besides the runtime's.
const (
	// AttrBlockReason is why a queue is blocked, on MetricBlocked.
	AttrBlockReason = "ordergen.rabbitmq.blocked.reason"
	// AttrDeadLetterReason is the Reason of MetricDeadLettered.
	AttrDeadLetterReason = "ordergen.rabbitmq.dead_letter.reason"
	// AttrLost is what was lost, on MetricReconnects.
	AttrLost = "ordergen.rabbitmq.lost"
)

// metrics are the consumer's instruments; nil records nothing.
type metrics struct {
	unregister func() error
}

func (c *Consumer[K, E]) startMetrics() error {
	mp := c.cfg.MeterProvider
	if mp == nil {
		return nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return fmt.Errorf("%w: metrics: the MeterProvider gave no meter", ErrInvalidConfig)
	}
	base := []meter.Attribute{{Key: meter.AttrSystem, Value: "rabbitmq"}, {Key: meter.AttrConsumerGroup, Value: c.cfg.Name}}
	with := func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append(append([]meter.Attribute(nil), base...), more...)...)
	}
	i := instruments()
	type queueSets struct{ plain, inFlight, parked meter.AttributeSet }
	byQueue := map[string]queueSets{}
	for _, q := range c.cfg.Queues {
		name := c.cfg.Topology.Queue(q)
		dest := meter.Attribute{Key: meter.AttrDestination, Value: name}
		byQueue[name] = queueSets{
			plain:    with(dest),
			inFlight: with(dest, meter.Attribute{Key: AttrBlockReason, Value: blockedInFlight.String()}),
			parked:   with(dest, meter.Attribute{Key: AttrBlockReason, Value: blockedParked.String()}),
		}
	}
	byReason := map[Reason]meter.AttributeSet{}
	for _, r := range allReasons {
		byReason[r] = with(meter.Attribute{Key: AttrDeadLetterReason, Value: string(r)})
	}
	lostConn := with(meter.Attribute{Key: AttrLost, Value: "connection"})
	lostQueue := with(meter.Attribute{Key: AttrLost, Value: "queue"})
	unregister, err := m.Observe(func(o meter.Observer) {
		for _, q := range c.Queues() {
			sets := byQueue[q.Queue]
			o.ObserveInt64(i.consumed, int64(q.Consumed), sets.plain)
			o.ObserveInt64(i.unsettled, int64(q.Unsettled), sets.plain)
			o.ObserveInt64(i.parked, int64(q.Parked), sets.plain)
			var inFlight, parked int64
			switch q.Blocked {
			case blockedInFlight.String():
				inFlight = 1
			case blockedParked.String():
				parked = 1
			}
			o.ObserveInt64(i.blocked, inFlight, sets.inFlight)
			o.ObserveInt64(i.blocked, parked, sets.parked)
		}
		dead := c.stats.reasons()
		for r, set := range byReason {
			o.ObserveInt64(i.deadLettered, int64(dead[r]), set)
		}
		o.ObserveInt64(i.reconnects, int64(c.stats.reconnects.Load()), lostConn)
		o.ObserveInt64(i.reconnects, int64(c.stats.queueLosses.Load()), lostQueue)
	}, i.consumed, i.unsettled, i.parked, i.blocked, i.deadLettered, i.reconnects)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	c.metrics = &metrics{unregister: unregister}
	return nil
}

func (m *metrics) stop() {
	if m.unregister != nil {
		_ = m.unregister()
	}
}

// catalogue is the consumer's instruments.
type catalogue struct {
	consumed, unsettled, parked, blocked, deadLettered, reconnects meter.Instrument
}

func instruments() catalogue {
	return catalogue{
		consumed:     meter.Instrument{Name: MetricConsumed, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Messages delivered, per queue."},
		unsettled:    meter.Instrument{Name: MetricUnsettled, Kind: meter.KindGauge, Unit: "{message}", Description: "Messages delivered and not settled, per queue."},
		parked:       meter.Instrument{Name: MetricParked, Kind: meter.KindGauge, Unit: "{message}", Description: "Unsettled messages parked in memory, per queue."},
		blocked:      meter.Instrument{Name: MetricBlocked, Kind: meter.KindGauge, Unit: "{queue}", Description: "1 while the queue's prefetch is full, by reason."},
		deadLettered: meter.Instrument{Name: MetricDeadLettered, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Bad messages rejected to the dead-letter exchange, by reason."},
		reconnects:   meter.Instrument{Name: MetricReconnects, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Losses of the connection and of queue channels."},
	}
}

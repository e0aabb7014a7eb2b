package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/transport"
)

// meterName is the instrumentation scope of the consumer's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/kafka"

// The consumer's instruments, recorded through Config.MeterProvider. The
// names of OpenTelemetry's messaging conventions are used where they
// exist; the rest are ordergen's own. Every measurement carries
// messaging.system ("kafka") and messaging.consumer.group.name; the
// per-partition ones add messaging.destination.name and
// messaging.destination.partition.id.
const (
	// MetricConsumed counts the records polled, by topic.
	MetricConsumed = "messaging.client.consumed.messages"
	// MetricOperationDuration is a histogram of the commits (attribute
	// messaging.operation.name "commit"), in seconds; a failed commit has
	// error.type (the Kafka error's name, or "request" when the request
	// itself failed). Its count is the number of commits.
	MetricOperationDuration = "messaging.client.operation.duration"
	// MetricLag is, per partition, the high watermark of its last fetch
	// minus its committed offset: the records the group has not finished.
	MetricLag = "ordergen.kafka.lag"
	// MetricUnfinished is, per partition, the records taken and not
	// finished (running, queued, waiting for room, parked in memory).
	MetricUnfinished = "ordergen.kafka.unfinished"
	// MetricUnfinishedAge is, per partition, how long ago its oldest
	// unfinished record was taken, in seconds (0 when none).
	MetricUnfinishedAge = "ordergen.kafka.unfinished.oldest_age"
	// MetricParked is, per partition, the unfinished records parked in
	// memory: they hold the commit until their parks are resolved.
	MetricParked = "ordergen.kafka.parked"
	// MetricPaused is the number of partitions paused, by
	// ordergen.kafka.pause.reason ("backlog", "metadata"; see PauseReason).
	MetricPaused = "ordergen.kafka.paused"
	// MetricIntakeBlocked is 1 while the consumer takes no records because
	// Config.MaxInFlight records are unfinished, by
	// ordergen.kafka.intake.reason: "in_flight", or "parked" when records
	// parked in memory hold half of MaxInFlight or more (see
	// transport.Blocked); 0 otherwise.
	MetricIntakeBlocked = "ordergen.kafka.intake.blocked"
	// MetricMetadataSize is, per partition, the size of its last committed
	// metadata, in bytes.
	MetricMetadataSize = "ordergen.kafka.commit.metadata.size"
	// MetricDeadLettered counts the records written to the dead-letter
	// topic, by ordergen.kafka.dead_letter.reason (a transport.Reason);
	// failed writes
	// have error.type "write".
	MetricDeadLettered = "ordergen.kafka.dead_lettered"
	// MetricRebalances counts the rebalance events, by
	// ordergen.kafka.rebalance.kind: "assigned", "revoked", "lost".
	MetricRebalances = "ordergen.kafka.rebalances"
)

// Attribute keys of the consumer's measurements, besides the runtime's.
const (
	// AttrPartition is the partition, in decimal.
	AttrPartition = "messaging.destination.partition.id"
	// AttrOperation names the operation of MetricOperationDuration.
	AttrOperation = "messaging.operation.name"
	// AttrPauseReason is why partitions are paused, on MetricPaused.
	AttrPauseReason = "ordergen.kafka.pause.reason"
	// AttrIntakeReason is why the intake is blocked, on
	// MetricIntakeBlocked.
	AttrIntakeReason = "ordergen.kafka.intake.reason"
	// AttrDeadLetterReason is the transport.Reason of MetricDeadLettered.
	AttrDeadLetterReason = "ordergen.kafka.dead_letter.reason"
	// AttrRebalanceKind is the kind of MetricRebalances.
	AttrRebalanceKind = "ordergen.kafka.rebalance.kind"
)

// metrics are the consumer's instruments; nil records nothing.
type metrics struct {
	meter      meter.Meter
	base       []meter.Attribute
	duration   meter.Histogram
	ok         meter.AttributeSet
	unregister func() error
}

func (c *Consumer[K, E]) startMetrics() error {
	mp := c.cfg.MeterProvider
	if mp == nil {
		return nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return fmt.Errorf("kafka: %w: metrics: the MeterProvider gave no meter", runtime.ErrInvalidConfig)
	}
	ms := &metrics{meter: m, base: []meter.Attribute{
		{Key: meter.AttrSystem, Value: "kafka"},
		{Key: meter.AttrConsumerGroup, Value: c.cfg.Group},
	}}
	ms.ok = ms.with(meter.Attribute{Key: AttrOperation, Value: "commit"})
	i := instruments()
	var err error
	if ms.duration, err = m.Histogram(i.duration); err != nil {
		return fmt.Errorf("kafka: %w: metrics: %w", runtime.ErrInvalidConfig, err)
	}
	byTopic := map[string]meter.AttributeSet{}
	for _, t := range c.cfg.Topics {
		byTopic[t] = ms.with(meter.Attribute{Key: meter.AttrDestination, Value: t})
	}
	byPause := map[PauseReason]meter.AttributeSet{}
	for _, r := range []PauseReason{PausedBacklog, PausedMetadata} {
		byPause[r] = ms.with(meter.Attribute{Key: AttrPauseReason, Value: r.String()})
	}
	byIntake := map[transport.Blocked]meter.AttributeSet{}
	for _, r := range []transport.Blocked{transport.BlockedInFlight, transport.BlockedParked} {
		byIntake[r] = ms.with(meter.Attribute{Key: AttrIntakeReason, Value: r.String()})
	}
	kinds := [3]meter.AttributeSet{}
	for k, name := range []string{"assigned", "revoked", "lost"} {
		kinds[k] = ms.with(meter.Attribute{Key: AttrRebalanceKind, Value: name})
	}
	dlFailed := ms.with(meter.Attribute{Key: meter.AttrErrorType, Value: "write"})
	byReason := map[transport.Reason]meter.AttributeSet{}
	for _, r := range transport.Reasons() {
		byReason[r] = ms.with(meter.Attribute{Key: AttrDeadLetterReason, Value: string(r)})
	}
	ms.unregister, err = m.Observe(func(o meter.Observer) {
		s := c.Stats()
		parts := c.Partitions()
		dead := c.in.Stats().DeadLetteredBy
		c.mu.Lock()
		consumed := make(map[string]uint64, len(c.consumed))
		for t, n := range c.consumed {
			consumed[t] = n
		}
		attrs := make(map[tp]meter.AttributeSet, len(c.parts))
		for t, p := range c.parts {
			attrs[t] = p.attrs
		}
		c.mu.Unlock()
		for t, set := range byTopic {
			o.ObserveInt64(i.consumed, int64(consumed[t]), set)
		}
		o.ObserveInt64(i.rebalances, int64(s.Rebalances.Assigned), kinds[0])
		o.ObserveInt64(i.rebalances, int64(s.Rebalances.Revoked), kinds[1])
		o.ObserveInt64(i.rebalances, int64(s.Rebalances.Lost), kinds[2])
		for r, set := range byReason {
			o.ObserveInt64(i.deadLettered, int64(dead[r]), set)
		}
		o.ObserveInt64(i.deadLettered, int64(s.DeadLetterErrors), dlFailed)
		paused := map[PauseReason]int64{}
		for _, ps := range parts {
			set := attrs[tp{ps.Topic, ps.Partition}]
			if set == nil {
				continue // revoked since
			}
			paused[ps.Paused]++
			if ps.Lag >= 0 {
				o.ObserveInt64(i.lag, ps.Lag, set)
			}
			o.ObserveInt64(i.unfinished, int64(ps.Unfinished), set)
			o.ObserveFloat64(i.age, ps.OldestUnfinishedAge.Seconds(), set)
			o.ObserveInt64(i.parked, int64(ps.Parked), set)
			o.ObserveInt64(i.metadata, int64(ps.MetadataBytes), set)
		}
		for r, set := range byPause {
			o.ObserveInt64(i.paused, paused[r], set)
		}
		for r, set := range byIntake {
			var v int64
			if s.Intake == r {
				v = 1
			}
			o.ObserveInt64(i.intake, v, set)
		}
	}, i.consumed, i.lag, i.unfinished, i.age, i.parked, i.paused, i.intake, i.metadata, i.deadLettered, i.rebalances)
	if err != nil {
		return fmt.Errorf("kafka: %w: metrics: %w", runtime.ErrInvalidConfig, err)
	}
	c.metrics = ms
	return nil
}

// with returns the base attributes and more, prepared.
func (m *metrics) with(more ...meter.Attribute) meter.AttributeSet {
	return m.meter.Attributes(append(append([]meter.Attribute(nil), m.base...), more...)...)
}

// partitionAttrs prepares the attributes of a partition's measurements,
// once, when it is assigned.
func (m *metrics) partitionAttrs(t tp) meter.AttributeSet {
	return m.with(meter.Attribute{Key: meter.AttrDestination, Value: t.topic},
		meter.Attribute{Key: AttrPartition, Value: strconv.Itoa(int(t.partition))})
}

// commitDone records a commit request that took d and failed with err (nil:
// it succeeded).
func (m *metrics) commitDone(d time.Duration, err error) {
	if m == nil {
		return
	}
	set := m.ok
	if err != nil {
		kind := "request"
		var ke *kerr.Error
		if errors.As(err, &ke) {
			kind = ke.Message
		}
		set = m.with(meter.Attribute{Key: AttrOperation, Value: "commit"}, meter.Attribute{Key: meter.AttrErrorType, Value: kind})
	}
	m.duration.Record(d.Seconds(), set)
}

func (m *metrics) stop() {
	if m.unregister != nil {
		_ = m.unregister()
	}
}

// catalogue is the consumer's instruments.
type catalogue struct {
	consumed, duration, lag, unfinished, age, parked, paused, intake, metadata, deadLettered, rebalances meter.Instrument
}

func instruments() catalogue {
	return catalogue{
		consumed:     meter.Instrument{Name: MetricConsumed, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Records polled."},
		duration:     meter.Instrument{Name: MetricOperationDuration, Kind: meter.KindHistogram, Unit: "s", Description: "Duration of the commits."},
		lag:          meter.Instrument{Name: MetricLag, Kind: meter.KindGauge, Unit: "{message}", Description: "High watermark minus committed offset, per partition."},
		unfinished:   meter.Instrument{Name: MetricUnfinished, Kind: meter.KindGauge, Unit: "{message}", Description: "Records taken and not finished, per partition."},
		age:          meter.Instrument{Name: MetricUnfinishedAge, Kind: meter.KindFloatGauge, Unit: "s", Description: "Age of the oldest unfinished record, per partition."},
		parked:       meter.Instrument{Name: MetricParked, Kind: meter.KindGauge, Unit: "{message}", Description: "Unfinished records parked in memory, per partition."},
		paused:       meter.Instrument{Name: MetricPaused, Kind: meter.KindGauge, Unit: "{partition}", Description: "Partitions paused, by reason."},
		intake:       meter.Instrument{Name: MetricIntakeBlocked, Kind: meter.KindGauge, Unit: "{consumer}", Description: "1 while the consumer takes no records for lack of MaxInFlight room, by reason."},
		metadata:     meter.Instrument{Name: MetricMetadataSize, Kind: meter.KindGauge, Unit: "By", Description: "Size of the last committed metadata, per partition."},
		deadLettered: meter.Instrument{Name: MetricDeadLettered, Kind: meter.KindObservedCounter, Unit: "{message}", Description: "Records written to the dead-letter topic, by reason."},
		rebalances:   meter.Instrument{Name: MetricRebalances, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Rebalance events, by kind."},
	}
}

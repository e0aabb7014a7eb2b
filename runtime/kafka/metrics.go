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
	with       func(...meter.Attribute) meter.AttributeSet // the base attributes and more
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
	base := []meter.Attribute{{Key: meter.AttrSystem, Value: "kafka"}, {Key: meter.AttrConsumerGroup, Value: c.cfg.Group}}
	ms := &metrics{with: func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append(append([]meter.Attribute(nil), base...), more...)...)
	}}
	// by prepares the attribute sets of key's values.
	by := func(key string, values ...string) map[string]meter.AttributeSet {
		out := map[string]meter.AttributeSet{}
		for _, v := range values {
			out[v] = ms.with(meter.Attribute{Key: key, Value: v})
		}
		return out
	}
	inst := func(name string, kind meter.Kind, unit, desc string) meter.Instrument {
		return meter.Instrument{Name: name, Kind: kind, Unit: unit, Description: desc}
	}
	duration := inst(MetricOperationDuration, meter.KindHistogram, "s", "Duration of the commits.")
	consumed := inst(MetricConsumed, meter.KindObservedCounter, "{message}", "Records polled.")
	lag := inst(MetricLag, meter.KindGauge, "{message}", "High watermark minus committed offset, per partition.")
	unfinished := inst(MetricUnfinished, meter.KindGauge, "{message}", "Records taken and not finished, per partition.")
	age := inst(MetricUnfinishedAge, meter.KindFloatGauge, "s", "Age of the oldest unfinished record, per partition.")
	parked := inst(MetricParked, meter.KindGauge, "{message}", "Unfinished records parked in memory, per partition.")
	paused := inst(MetricPaused, meter.KindGauge, "{partition}", "Partitions paused, by reason.")
	intake := inst(MetricIntakeBlocked, meter.KindGauge, "{consumer}", "1 while the consumer takes no records for lack of MaxInFlight room, by reason.")
	metadata := inst(MetricMetadataSize, meter.KindGauge, "By", "Size of the last committed metadata, per partition.")
	dead := inst(MetricDeadLettered, meter.KindObservedCounter, "{message}", "Records written to the dead-letter topic, by reason.")
	rebalances := inst(MetricRebalances, meter.KindObservedCounter, "{event}", "Rebalance events, by kind.")
	var err error
	if ms.duration, err = m.Histogram(duration); err != nil {
		return fmt.Errorf("kafka: %w: metrics: %w", runtime.ErrInvalidConfig, err)
	}
	ms.ok = ms.with(meter.Attribute{Key: AttrOperation, Value: "commit"})
	byTopic := by(meter.AttrDestination, c.cfg.Topics...)
	byPause := by(AttrPauseReason, PausedBacklog.String(), PausedMetadata.String())
	byIntake := by(AttrIntakeReason, transport.BlockedInFlight.String(), transport.BlockedParked.String())
	kinds := by(AttrRebalanceKind, "assigned", "revoked", "lost")
	byReason := map[string]meter.AttributeSet{}
	for _, r := range transport.Reasons() {
		byReason[string(r)] = ms.with(meter.Attribute{Key: AttrDeadLetterReason, Value: string(r)})
	}
	dlFailed := ms.with(meter.Attribute{Key: meter.AttrErrorType, Value: "write"})
	ms.unregister, err = m.Observe(func(o meter.Observer) {
		s := c.Stats()
		parts := c.Partitions()
		c.mu.Lock()
		polled := make(map[string]int64, len(c.consumed))
		for t, n := range c.consumed {
			polled[t] = int64(n)
		}
		attrs := make(map[tp]meter.AttributeSet, len(c.parts))
		for t, p := range c.parts {
			attrs[t] = p.attrs
		}
		c.mu.Unlock()
		for t, set := range byTopic {
			o.ObserveInt64(consumed, polled[t], set)
		}
		o.ObserveInt64(rebalances, int64(s.Rebalances.Assigned), kinds["assigned"])
		o.ObserveInt64(rebalances, int64(s.Rebalances.Revoked), kinds["revoked"])
		o.ObserveInt64(rebalances, int64(s.Rebalances.Lost), kinds["lost"])
		for r, set := range byReason {
			o.ObserveInt64(dead, int64(s.DeadLetteredBy[transport.Reason(r)]), set)
		}
		o.ObserveInt64(dead, int64(s.DeadLetterErrors), dlFailed)
		n := map[string]int64{}
		for _, ps := range parts {
			set := attrs[tp{ps.Topic, ps.Partition}]
			if set == nil {
				continue // revoked since
			}
			n[ps.Paused.String()]++
			if ps.Lag >= 0 {
				o.ObserveInt64(lag, ps.Lag, set)
			}
			o.ObserveInt64(unfinished, int64(ps.Unfinished), set)
			o.ObserveFloat64(age, ps.OldestUnfinishedAge.Seconds(), set)
			o.ObserveInt64(parked, int64(ps.Parked), set)
			o.ObserveInt64(metadata, int64(ps.MetadataBytes), set)
		}
		for r, set := range byPause {
			o.ObserveInt64(paused, n[r], set)
		}
		for r, set := range byIntake {
			o.ObserveInt64(intake, b2i(s.Intake.String() == r), set)
		}
	}, consumed, lag, unfinished, age, parked, paused, intake, metadata, dead, rebalances)
	if err != nil {
		return fmt.Errorf("kafka: %w: metrics: %w", runtime.ErrInvalidConfig, err)
	}
	c.metrics = ms
	return nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
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

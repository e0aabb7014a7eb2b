package outbox

import (
	"fmt"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
)

// meterName is the instrumentation scope of the relay's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/outbox"

// The relay's instruments, recorded through Config.MeterProvider and read
// at collection time. Every measurement carries messaging.system
// ("ordergen") and the entity as messaging.destination.name. The backlog
// gauges are the outbox's as last read (Config.StatsEvery), which every
// relay of the entity reads alike; the counters are this relay's.
const (
	// MetricBacklog is the number of unsent events.
	MetricBacklog = "ordergen.outbox.backlog"
	// MetricOldestAge is the age of the first unsent event (in insertion
	// order), in seconds: a rising age on steady traffic is a key that does
	// not flow, or a relay that does not keep up.
	MetricOldestAge = "ordergen.outbox.oldest_age"
	// MetricSent counts the events this relay marked sent.
	MetricSent = "ordergen.outbox.sent"
	// MetricRetries counts the failed sends this relay left for a retry.
	MetricRetries = "ordergen.outbox.retries"
	// MetricParkedKeys is the number of parked keys.
	MetricParkedKeys = "ordergen.outbox.parked.keys"
	// MetricRetryingKeys is the number of keys waiting to retry a failed
	// send.
	MetricRetryingKeys = "ordergen.outbox.retrying.keys"
	// MetricPruned counts the sent events this relay deleted past
	// Config.Retention.
	MetricPruned = "ordergen.outbox.pruned"
)

// metrics are a relay's registration; nil records nothing.
type metrics struct {
	unregister func() error
	once       sync.Once
}

func (m *metrics) stop() {
	if m == nil {
		return
	}
	m.once.Do(func() { _ = m.unregister() })
}

func startMetrics[K comparable, E any](r *Relay[K, E]) (*metrics, error) {
	mp := r.cfg.MeterProvider
	if mp == nil {
		return nil, nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return nil, fmt.Errorf("%w: outbox relay metrics: the MeterProvider gave no meter", runtime.ErrInvalidConfig)
	}
	attrs := m.Attributes(
		meter.Attribute{Key: meter.AttrSystem, Value: "ordergen"},
		meter.Attribute{Key: meter.AttrDestination, Value: r.cfg.Entity},
	)
	i := instruments()
	unregister, err := m.Observe(func(o meter.Observer) {
		s := r.Stats()
		o.ObserveInt64(i.backlog, int64(s.Backlog), attrs)
		age := s.OldestAge
		if s.Backlog > 0 && !s.ReadAt.IsZero() {
			age += time.Since(s.ReadAt) // it kept ageing since it was read
		}
		o.ObserveFloat64(i.age, age.Seconds(), attrs)
		o.ObserveInt64(i.sent, int64(s.Sent), attrs)
		o.ObserveInt64(i.retries, int64(s.Retries), attrs)
		o.ObserveInt64(i.parked, int64(s.ParkedKeys), attrs)
		o.ObserveInt64(i.retrying, int64(s.RetryingKeys), attrs)
		o.ObserveInt64(i.pruned, int64(s.Pruned), attrs)
	}, i.backlog, i.age, i.sent, i.retries, i.parked, i.retrying, i.pruned)
	if err != nil {
		return nil, fmt.Errorf("%w: outbox relay metrics: %w", runtime.ErrInvalidConfig, err)
	}
	return &metrics{unregister: unregister}, nil
}

// catalogue is the relay's instruments.
type catalogue struct {
	backlog, age, sent, retries, parked, retrying, pruned meter.Instrument
}

func instruments() catalogue {
	return catalogue{
		backlog:  meter.Instrument{Name: MetricBacklog, Kind: meter.KindGauge, Unit: "{event}", Description: "Events in the outbox not sent yet."},
		age:      meter.Instrument{Name: MetricOldestAge, Kind: meter.KindFloatGauge, Unit: "s", Description: "Age of the oldest unsent event of the outbox."},
		sent:     meter.Instrument{Name: MetricSent, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Events the relay sent and marked sent."},
		retries:  meter.Instrument{Name: MetricRetries, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Failed sends left for a retry."},
		parked:   meter.Instrument{Name: MetricParkedKeys, Kind: meter.KindGauge, Unit: "{key}", Description: "Keys parked in the outbox."},
		retrying: meter.Instrument{Name: MetricRetryingKeys, Kind: meter.KindGauge, Unit: "{key}", Description: "Keys waiting to retry a failed send."},
		pruned:   meter.Instrument{Name: MetricPruned, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Sent events deleted past the retention."},
	}
}

package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// meterName is the instrumentation scope of the engine's instruments.
const meterName = "github.com/ordergen/ordergen/runtime"

// Instrument names. Durations follow OpenTelemetry's semantic conventions
// for messaging (messaging.process.duration); the rest are ordergen's own.
const (
	// MetricProcessDuration is a histogram of handler attempts, in seconds.
	MetricProcessDuration = "messaging.process.duration"
	// MetricEvents counts events by outcome (attribute ordergen.outcome):
	// accepted, handled, skipped (with ordergen.skip.reason), parked,
	// dead_lettered, dropped, conflated, withdrawn, rejected, retried,
	// replayed.
	MetricEvents = "ordergen.events"
	// MetricBacklog is the number of pending events.
	MetricBacklog = "ordergen.backlog"
	// MetricBacklogKey is the pending events of the keys with the largest
	// backlog (attribute ordergen.key; at most Config.TopKeys keys).
	MetricBacklogKey = "ordergen.backlog.key"
	// MetricOldestAge is the age of the oldest pending event, in seconds;
	// with attribute ordergen.key, of each of the top keys.
	MetricOldestAge = "ordergen.backlog.oldest_age"
	// MetricHeld is the number of events held back on a version gap.
	MetricHeld = "ordergen.held"
	// MetricParkedKeys is the number of parked keys.
	MetricParkedKeys = "ordergen.parked.keys"
	// MetricParkedEvents is the number of parked events.
	MetricParkedEvents = "ordergen.parked.events"
	// MetricLanes is the number of keys with a lane.
	MetricLanes = "ordergen.lanes.active"
)

// Attribute keys of the engine's measurements.
const (
	// AttrOutcome is an event's outcome on MetricEvents.
	AttrOutcome = "ordergen.outcome"
	// AttrSkipReason is why an event was skipped, on MetricEvents.
	AttrSkipReason = "ordergen.skip.reason"
	// AttrKey is the key of the per-key backlog gauges.
	AttrKey = "ordergen.key"
	// AttrErrorType is the kind of failure of a handler attempt (error,
	// permanent, panic, timeout) on MetricProcessDuration.
	AttrErrorType = "error.type"
	// AttrSystem is on every measurement, as "ordergen".
	AttrSystem = "messaging.system"
	// AttrDestination names the entity; generated dispatchers set it
	// through Config.MetricAttributes.
	AttrDestination = "messaging.destination.name"
	// AttrConsumerGroup names the subscriber; generated dispatchers set it
	// through Config.MetricAttributes.
	AttrConsumerGroup = "messaging.consumer.group.name"
)

// sampleEvery is how often the duration of a fast handler is measured:
// reading the clock twice costs more than a no-op handler, so while the last
// measured attempt took under slowAttempt, one attempt in sampleEvery is
// timed. Slower handlers are timed on every attempt.
const (
	sampleEvery = 64
	slowAttempt = 50 * time.Microsecond
	maxReasons  = 64 // distinct skip reasons counted; more go under "other"
)

// instruments are the engine's instruments: the duration histogram,
// recorded per attempt, and the rest, observed at collection time.
type instruments struct {
	duration, events, backlog, byKey, age, held, parkedKeys, parkedEvents, lanes Instrument
}

func engineInstruments() instruments {
	return instruments{
		duration: Instrument{Name: MetricProcessDuration, Kind: KindHistogram, Unit: "s",
			Description: "Duration of handler attempts (one in 64 sampled while handlers take under 50µs)."},
		events:       Instrument{Name: MetricEvents, Kind: KindObservedCounter, Unit: "{event}", Description: "Events by outcome."},
		backlog:      Instrument{Name: MetricBacklog, Kind: KindGauge, Unit: "{event}", Description: "Pending events."},
		byKey:        Instrument{Name: MetricBacklogKey, Kind: KindGauge, Unit: "{event}", Description: "Pending events of the keys with the largest backlog."},
		age:          Instrument{Name: MetricOldestAge, Kind: KindFloatGauge, Unit: "s", Description: "Age of the oldest pending event, overall and per top key."},
		held:         Instrument{Name: MetricHeld, Kind: KindGauge, Unit: "{event}", Description: "Events held back on a version gap."},
		parkedKeys:   Instrument{Name: MetricParkedKeys, Kind: KindGauge, Unit: "{key}", Description: "Parked keys."},
		parkedEvents: Instrument{Name: MetricParkedEvents, Kind: KindGauge, Unit: "{event}", Description: "Parked events."},
		lanes:        Instrument{Name: MetricLanes, Kind: KindGauge, Unit: "{lane}", Description: "Keys with a lane."},
	}
}

// metrics is an engine's instruments. A nil *metrics records nothing.
type metrics struct {
	duration Histogram
	// attribute sets of the duration records, by result, prepared once so
	// that recording allocates nothing.
	ok, failed, failedPermanent, failedPanic, failedTimeout AttributeSet
	unregister                                              func() error
}

func (e *Engine[K, E]) startMetrics() error {
	mp := e.cfg.MeterProvider
	if mp == nil {
		return nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return fmt.Errorf("%w: metrics: the MeterProvider gave no meter", ErrInvalidConfig)
	}
	base := append([]Attribute{{Key: AttrSystem, Value: "ordergen"}}, e.cfg.MetricAttributes...)
	with := func(more ...Attribute) AttributeSet {
		return m.Attributes(append(slices.Clip(base), more...)...)
	}
	all := m.Attributes(base...)
	ins := engineInstruments()
	duration, err := m.Histogram(ins.duration)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	ms := &metrics{duration: duration, ok: all,
		failed:          with(Attribute{Key: AttrErrorType, Value: "error"}),
		failedPermanent: with(Attribute{Key: AttrErrorType, Value: "permanent"}),
		failedPanic:     with(Attribute{Key: AttrErrorType, Value: "panic"}),
		failedTimeout:   with(Attribute{Key: AttrErrorType, Value: "timeout"})}
	outcomes := [...]string{"accepted", "handled", "dead_lettered", "dropped", "conflated", "withdrawn", "rejected", "retried", "replayed", "parked"}
	var byOutcome [len(outcomes)]AttributeSet
	for i, o := range outcomes {
		byOutcome[i] = with(Attribute{Key: AttrOutcome, Value: o})
	}
	// Skip reasons and top keys vary, so their sets are made at collection
	// time, never per event; the few skip reasons' sets are kept. Two
	// readers may collect at once.
	var mu sync.Mutex
	skipped := map[string]AttributeSet{}
	skipSet := func(reason string) AttributeSet {
		mu.Lock()
		defer mu.Unlock()
		set, ok := skipped[reason]
		if !ok {
			set = with(Attribute{Key: AttrOutcome, Value: "skipped"}, Attribute{Key: AttrSkipReason, Value: reason})
			skipped[reason] = set
		}
		return set
	}
	ms.unregister, err = m.Observe(func(o Observer) {
		s := e.Stats()
		counts := [len(outcomes)]uint64{s.Accepted, s.Handled, s.DeadLettered, s.Dropped, s.Conflated, s.Withdrawn, s.Rejected, s.Retried, s.Replayed, e.parkedTotal.Load()}
		for i, n := range counts {
			o.ObserveInt64(ins.events, int64(n), byOutcome[i])
		}
		for reason, n := range e.skipReasons() {
			o.ObserveInt64(ins.events, int64(n), skipSet(reason))
		}
		o.ObserveInt64(ins.backlog, s.Pending, all)
		o.ObserveInt64(ins.held, s.Held, all)
		o.ObserveInt64(ins.parkedKeys, s.ParkedKeys, all)
		o.ObserveInt64(ins.parkedEvents, s.Parked, all)
		o.ObserveInt64(ins.lanes, s.Active, all)
		top, oldest := e.topAndOldest(e.cfg.TopKeys)
		o.ObserveFloat64(ins.age, oldest.Seconds(), all)
		for _, kb := range top {
			set := with(Attribute{Key: AttrKey, Value: fmt.Sprint(kb.Key)})
			o.ObserveInt64(ins.byKey, int64(kb.Pending), set)
			o.ObserveFloat64(ins.age, kb.OldestAge.Seconds(), set)
		}
	}, ins.events, ins.backlog, ins.byKey, ins.age, ins.held, ins.parkedKeys, ins.parkedEvents, ins.lanes)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	e.metrics = ms
	return nil
}

// stopMetrics unregisters the engine's callback; Close calls it.
func (e *Engine[K, E]) stopMetrics() {
	if e.metrics != nil && e.metrics.unregister != nil {
		_ = e.metrics.unregister()
	}
}

// timing decides whether a worker times its next attempt.
type timing struct {
	n    uint32
	slow bool
}

func (t *timing) sample() bool {
	t.n++
	return t.slow || t.n%sampleEvery == 1 // the first attempt, then one in sampleEvery
}

// recordAttempt records one timed attempt.
func (w *worker[K, E]) recordAttempt(d time.Duration, err error, timedOut bool) {
	m := w.e.metrics
	w.timing.slow = d >= slowAttempt
	opt := m.ok
	if err != nil {
		var p *PanicError
		switch {
		case timedOut:
			opt = m.failedTimeout
		case errors.As(err, &p):
			opt = m.failedPanic
		case IsPermanent(err):
			opt = m.failedPermanent
		default:
			if _, skip := IsSkip(err); !skip {
				if _, hold := IsHold(err); !hold {
					opt = m.failed
				}
			}
		}
	}
	m.duration.Record(d.Seconds(), opt)
}

// skipCounter counts skips by reason, up to maxReasons distinct ones.
type skipCounter struct {
	mu      sync.Mutex
	reasons map[string]uint64
}

func (c *skipCounter) add(reason string) {
	c.mu.Lock()
	if c.reasons == nil {
		c.reasons = make(map[string]uint64)
	}
	if _, ok := c.reasons[reason]; !ok && len(c.reasons) >= maxReasons {
		reason = "other"
	}
	c.reasons[reason]++
	c.mu.Unlock()
}

// skipReasons sums the workers' skip counts by reason.
func (e *Engine[K, E]) skipReasons() map[string]uint64 {
	out := make(map[string]uint64)
	ws := e.workerList()
	for _, w := range ws {
		w.skips.mu.Lock()
		for r, n := range w.skips.reasons {
			out[r] += n
		}
		w.skips.mu.Unlock()
	}
	return out
}

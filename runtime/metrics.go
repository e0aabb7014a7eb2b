package runtime

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/meter"
)

// meterName is the instrumentation scope of the engine's instruments.
const meterName = "github.com/ordergen/ordergen/runtime"

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
	duration, events, backlog, byKey, age, held, resyncs, parkedKeys, parkedEvents, lanes meter.Instrument
}

func engineInstruments() instruments {
	return instruments{
		duration: meter.Instrument{Name: meter.MetricProcessDuration, Kind: meter.KindHistogram, Unit: "s",
			Description: "Duration of handler attempts (one in 64 sampled while handlers take under 50µs)."},
		events:       meter.Instrument{Name: meter.MetricEvents, Kind: meter.KindObservedCounter, Unit: "{event}", Description: "Events by outcome."},
		backlog:      meter.Instrument{Name: meter.MetricBacklog, Kind: meter.KindGauge, Unit: "{event}", Description: "Pending events."},
		byKey:        meter.Instrument{Name: meter.MetricBacklogKey, Kind: meter.KindGauge, Unit: "{event}", Description: "Pending events of the keys with the largest backlog."},
		age:          meter.Instrument{Name: meter.MetricOldestAge, Kind: meter.KindFloatGauge, Unit: "s", Description: "Age of the oldest pending event, overall and per top key."},
		held:         meter.Instrument{Name: meter.MetricHeld, Kind: meter.KindGauge, Unit: "{event}", Description: "Events held back on a version gap."},
		resyncs:      meter.Instrument{Name: meter.MetricResyncs, Kind: meter.KindObservedCounter, Unit: "{resync}", Description: "Keys resynced from the source of truth when their resequencer bound was hit."},
		parkedKeys:   meter.Instrument{Name: meter.MetricParkedKeys, Kind: meter.KindGauge, Unit: "{key}", Description: "Parked keys."},
		parkedEvents: meter.Instrument{Name: meter.MetricParkedEvents, Kind: meter.KindGauge, Unit: "{event}", Description: "Parked events."},
		lanes:        meter.Instrument{Name: meter.MetricLanes, Kind: meter.KindGauge, Unit: "{lane}", Description: "Keys with a lane."},
	}
}

// metrics is an engine's instruments. A nil *metrics records nothing.
type metrics struct {
	duration meter.Histogram
	// attribute sets of the duration records, by result, prepared once so
	// that recording allocates nothing.
	ok, failed, failedPermanent, failedPanic, failedTimeout meter.AttributeSet
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
	base := append([]meter.Attribute{{Key: meter.AttrSystem, Value: "ordergen"}}, e.cfg.MetricAttributes...)
	with := func(more ...meter.Attribute) meter.AttributeSet {
		return m.Attributes(append(slices.Clip(base), more...)...)
	}
	all := m.Attributes(base...)
	ins := engineInstruments()
	duration, err := m.Histogram(ins.duration)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	ms := &metrics{duration: duration, ok: all,
		failed:          with(meter.Attribute{Key: meter.AttrErrorType, Value: "error"}),
		failedPermanent: with(meter.Attribute{Key: meter.AttrErrorType, Value: "permanent"}),
		failedPanic:     with(meter.Attribute{Key: meter.AttrErrorType, Value: "panic"}),
		failedTimeout:   with(meter.Attribute{Key: meter.AttrErrorType, Value: "timeout"})}
	outcomes := [...]string{"accepted", "handled", "dead_lettered", "dropped", "discarded", "conflated", "withdrawn", "rejected", "retried", "replayed", "parked"}
	var byOutcome [len(outcomes)]meter.AttributeSet
	for i, o := range outcomes {
		byOutcome[i] = with(meter.Attribute{Key: meter.AttrOutcome, Value: o})
	}
	// Skip reasons and top keys vary, so their sets are made at collection
	// time, never per event; the few skip reasons' sets are kept. Two
	// readers may collect at once.
	var mu sync.Mutex
	skipped := map[string]meter.AttributeSet{}
	skipSet := func(reason string) meter.AttributeSet {
		mu.Lock()
		defer mu.Unlock()
		set, ok := skipped[reason]
		if !ok {
			set = with(meter.Attribute{Key: meter.AttrOutcome, Value: "skipped"}, meter.Attribute{Key: meter.AttrSkipReason, Value: reason})
			skipped[reason] = set
		}
		return set
	}
	ms.unregister, err = m.Observe(func(o meter.Observer) {
		s := e.Stats()
		counts := [len(outcomes)]uint64{s.Accepted, s.Handled, s.DeadLettered, s.Dropped, s.Discarded, s.Conflated, s.Withdrawn, s.Rejected, s.Retried, s.Replayed, e.parkedTotal.Load()}
		for i, n := range counts {
			o.ObserveInt64(ins.events, int64(n), byOutcome[i])
		}
		for reason, n := range e.skipReasons() {
			o.ObserveInt64(ins.events, int64(n), skipSet(reason))
		}
		o.ObserveInt64(ins.backlog, s.Pending, all)
		o.ObserveInt64(ins.held, s.Held, all)
		o.ObserveInt64(ins.resyncs, int64(s.Resynced), all)
		o.ObserveInt64(ins.parkedKeys, s.ParkedKeys, all)
		o.ObserveInt64(ins.parkedEvents, s.Parked, all)
		o.ObserveInt64(ins.lanes, s.Lanes, all)
		top, oldest := e.topAndOldest(e.cfg.TopKeys)
		o.ObserveFloat64(ins.age, oldest.Seconds(), all)
		for _, kb := range top {
			set := with(meter.Attribute{Key: meter.AttrKey, Value: fmt.Sprint(kb.Key)})
			o.ObserveInt64(ins.byKey, int64(kb.Pending), set)
			o.ObserveFloat64(ins.age, kb.OldestAge.Seconds(), set)
		}
	}, ins.events, ins.backlog, ins.byKey, ins.age, ins.held, ins.resyncs, ins.parkedKeys, ins.parkedEvents, ins.lanes)
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
	// mu guards reasons: the worker adds, a collection reads.
	mu      sync.Mutex
	reasons map[string]uint64
}

func (c *skipCounter) add(reason string, n uint64) {
	c.mu.Lock()
	if c.reasons == nil {
		c.reasons = make(map[string]uint64)
	}
	if _, ok := c.reasons[reason]; !ok && len(c.reasons) >= maxReasons {
		reason = "other"
	}
	c.reasons[reason] += n
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

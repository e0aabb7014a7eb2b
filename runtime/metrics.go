package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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
	// dead_lettered, dropped, conflated, rejected, retried, replayed.
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

// Attribute keys the engine sets.
const (
	AttrOutcome    = attribute.Key("ordergen.outcome")
	AttrSkipReason = attribute.Key("ordergen.skip.reason")
	AttrKey        = attribute.Key("ordergen.key")
	AttrErrorType  = attribute.Key("error.type")
	AttrSystem     = attribute.Key("messaging.system")
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

// metrics is an engine's instruments. A nil *metrics records nothing.
type metrics struct {
	duration metric.Float64Histogram
	attrs    attribute.Set
	// options of the duration records, by result, made once so that
	// recording allocates nothing.
	failed, failedPermanent, failedPanic, failedTimeout []metric.RecordOption
	ok                                                  []metric.RecordOption
	reg                                                 metric.Registration
}

func (e *Engine[K, E]) startMetrics() error {
	mp := e.cfg.MeterProvider
	if mp == nil {
		return nil
	}
	m := mp.Meter(meterName)
	attrs := append([]attribute.KeyValue{AttrSystem.String("ordergen")}, e.cfg.MetricAttributes...)
	set := attribute.NewSet(attrs...)
	withErr := func(t string) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(attrs, AttrErrorType.String(t))...))}
	}
	var err error
	ms := &metrics{attrs: set, ok: []metric.RecordOption{metric.WithAttributeSet(set)},
		failed: withErr("error"), failedPermanent: withErr("permanent"), failedPanic: withErr("panic"), failedTimeout: withErr("timeout")}
	ms.duration, err = m.Float64Histogram(MetricProcessDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of handler attempts (one in 64 sampled while handlers take under 50µs)."))
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	events, err1 := m.Int64ObservableCounter(MetricEvents, metric.WithUnit("{event}"), metric.WithDescription("Events by outcome."))
	backlog, err2 := m.Int64ObservableGauge(MetricBacklog, metric.WithUnit("{event}"), metric.WithDescription("Pending events."))
	byKey, err3 := m.Int64ObservableGauge(MetricBacklogKey, metric.WithUnit("{event}"), metric.WithDescription("Pending events of the keys with the largest backlog."))
	age, err4 := m.Float64ObservableGauge(MetricOldestAge, metric.WithUnit("s"), metric.WithDescription("Age of the oldest pending event, overall and per top key."))
	held, err5 := m.Int64ObservableGauge(MetricHeld, metric.WithUnit("{event}"), metric.WithDescription("Events held back on a version gap."))
	pkeys, err6 := m.Int64ObservableGauge(MetricParkedKeys, metric.WithUnit("{key}"), metric.WithDescription("Parked keys."))
	pevents, err7 := m.Int64ObservableGauge(MetricParkedEvents, metric.WithUnit("{event}"), metric.WithDescription("Parked events."))
	lanes, err8 := m.Int64ObservableGauge(MetricLanes, metric.WithUnit("{lane}"), metric.WithDescription("Keys with a lane."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7, err8); err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	outcome := func(name string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(attrs, AttrOutcome.String(name))...))
	}
	outcomes := map[string]metric.ObserveOption{}
	for _, o := range []string{"accepted", "handled", "skipped", "parked", "dead_lettered", "dropped", "conflated", "rejected", "retried", "replayed"} {
		outcomes[o] = outcome(o)
	}
	all := metric.WithAttributeSet(set)
	ms.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := e.Stats()
		o.ObserveInt64(events, int64(s.Accepted), outcomes["accepted"])
		o.ObserveInt64(events, int64(s.Handled), outcomes["handled"])
		o.ObserveInt64(events, int64(s.DeadLettered), outcomes["dead_lettered"])
		o.ObserveInt64(events, int64(s.Dropped), outcomes["dropped"])
		o.ObserveInt64(events, int64(s.Conflated), outcomes["conflated"])
		o.ObserveInt64(events, int64(s.Rejected), outcomes["rejected"])
		o.ObserveInt64(events, int64(s.Retried), outcomes["retried"])
		o.ObserveInt64(events, int64(s.Replayed), outcomes["replayed"])
		o.ObserveInt64(events, int64(e.parkedTotal.Load()), outcomes["parked"])
		for reason, n := range e.skipReasons() {
			o.ObserveInt64(events, int64(n), metric.WithAttributeSet(attribute.NewSet(append(attrs, AttrOutcome.String("skipped"), AttrSkipReason.String(reason))...)))
		}
		o.ObserveInt64(backlog, s.Pending, all)
		o.ObserveInt64(held, s.Held, all)
		o.ObserveInt64(pkeys, s.ParkedKeys, all)
		o.ObserveInt64(pevents, s.Parked, all)
		o.ObserveInt64(lanes, s.Active, all)
		top, oldest := e.topAndOldest(e.cfg.TopKeys)
		o.ObserveFloat64(age, oldest.Seconds(), all)
		for _, kb := range top {
			keyAttrs := metric.WithAttributeSet(attribute.NewSet(append(attrs, AttrKey.String(fmt.Sprint(kb.Key)))...))
			o.ObserveInt64(byKey, int64(kb.Pending), keyAttrs)
			o.ObserveFloat64(age, kb.OldestAge.Seconds(), keyAttrs)
		}
		return nil
	}, events, backlog, byKey, age, held, pkeys, pevents, lanes)
	if err != nil {
		return fmt.Errorf("%w: metrics: %w", ErrInvalidConfig, err)
	}
	e.metrics = ms
	return nil
}

// stopMetrics unregisters the engine's callback; Close calls it.
func (e *Engine[K, E]) stopMetrics() {
	if e.metrics != nil {
		_ = e.metrics.reg.Unregister()
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
	m.duration.Record(context.Background(), d.Seconds(), opt...)
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
	e.wmu.Lock()
	ws := e.ws
	e.wmu.Unlock()
	for _, w := range ws {
		w.skips.mu.Lock()
		for r, n := range w.skips.reasons {
			out[r] += n
		}
		w.skips.mu.Unlock()
	}
	return out
}

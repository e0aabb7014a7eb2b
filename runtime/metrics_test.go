package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

// attr is a meter.Attribute, shorter.
func attr(k, v string) meter.Attribute { return meter.Attribute{Key: k, Value: v} }

// sum returns the sum of the points of name with attrs, or -1 when there
// is none.
func sum(m metricstest.Metrics, name string, attrs ...meter.Attribute) int64 {
	v, ok := m.Sum(name, attrs...)
	if !ok {
		return -1
	}
	return int64(v)
}

func TestMetricsCountWhatTheScriptCaused(t *testing.T) {
	mp := metricstest.New()
	v := newVersioned()
	h := func(ctx context.Context, key string, x ev) error {
		if x.Fail > 0 && x.Seq == 99 {
			return runtime.Permanent(errors.New("poison"))
		}
		return v.handle(ctx, key, x)
	}
	entity := attr(meter.AttrDestination, "Account")
	e := mustNew(t, h, runtime.Config[string, ev]{
		MeterProvider:    mp,
		MetricAttributes: []meter.Attribute{entity},
	})
	ctx := context.Background()
	// a: 1, 2 handled, 2 again skipped (duplicate), 4 held (gap).
	// b: 99 permanent failure parks b; 100 joins the park.
	for _, s := range []struct {
		key string
		x   ev
	}{{"a", ev{Seq: 1}}, {"a", ev{Seq: 2}}, {"a", ev{Seq: 2}}, {"a", ev{Seq: 4}}, {"b", ev{Seq: 99, Fail: 1}}, {"b", ev{Seq: 100}}} {
		if err := e.Submit(ctx, s.key, s.x); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	m := mp.Collect()
	if scopes := mp.Scopes(); len(scopes) != 1 || scopes[0] != "github.com/ordergen/ordergen/runtime" {
		t.Errorf("scopes %v, want the runtime's import path", scopes)
	}
	for outcome, want := range map[string]int64{"accepted": 6, "handled": 2, "skipped": 1, "parked": 2, "dead_lettered": 0, "retried": 0} {
		if got := sum(m, meter.MetricEvents, attr(meter.AttrOutcome, outcome), entity, attr(meter.AttrSystem, "ordergen")); got != want {
			t.Errorf("events{outcome=%s} = %d, want %d", outcome, got, want)
		}
	}
	if got := sum(m, meter.MetricEvents, attr(meter.AttrSkipReason, "duplicate or stale version")); got != 1 {
		t.Errorf("skips with their reason = %d, want 1", got)
	}
	for name, want := range map[string]int64{meter.MetricBacklog: 1, meter.MetricHeld: 1, meter.MetricParkedKeys: 1, meter.MetricParkedEvents: 2, meter.MetricLanes: 2} {
		if got := sum(m, name, entity); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if got := sum(m, meter.MetricBacklogKey, attr(meter.AttrKey, "a")); got != 1 {
		t.Errorf("backlog of key a = %d, want 1 (the held event)", got)
	}
	if pts := m.Points(meter.MetricOldestAge, attr(meter.AttrKey, "a")); len(pts) != 1 || pts[0].Instrument.Kind != meter.KindFloatGauge {
		t.Errorf("oldest age of key a: %+v", pts)
	}
	if pts := m.Points(meter.MetricProcessDuration); len(pts) == 0 || pts[0].Instrument.Kind != meter.KindHistogram || pts[0].Instrument.Unit != "s" {
		t.Errorf("no duration histogram: %+v", pts)
	}
}

func TestMetricsRetriesAndDurations(t *testing.T) {
	mp := metricstest.New()
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{MeterProvider: mp, Retry: fastRetry})
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		fail := 0
		if i == 0 {
			fail = 2
		}
		if err := e.Submit(ctx, "k", ev{Seq: i, Fail: fail}); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	m := mp.Collect()
	if got := sum(m, meter.MetricEvents, attr(meter.AttrOutcome, "retried")); got != 2 {
		t.Errorf("retried = %d, want 2", got)
	}
	if got := sum(m, meter.MetricEvents, attr(meter.AttrOutcome, "handled")); got != 40 {
		t.Errorf("handled = %d, want 40", got)
	}
	n, failed := 0, 0
	for _, p := range m.Points(meter.MetricProcessDuration) {
		n += p.Count
		if p.Attributes[meter.AttrErrorType] == "error" {
			failed += p.Count
		}
	}
	// 42 attempts, fast ones sampled one in 64 (and the first, which failed).
	if n == 0 || n > 42 || failed == 0 {
		t.Errorf("duration samples = %d (%d failed), want between 1 and 42, the first failed", n, failed)
	}
}

func TestMetricsStopAtClose(t *testing.T) {
	mp := metricstest.New()
	r := newRecorder()
	e, err := runtime.New(r.handle, runtime.Config[string, ev]{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mp.Collect().Sum(meter.MetricBacklog); !ok {
		t.Fatal("no backlog gauge while running")
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := mp.Collect().Sum(meter.MetricBacklog); ok {
		t.Error("the engine's callback is still registered after Close")
	}
}

func TestNoMetricsWithoutProvider(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{})
	if err := e.Submit(context.Background(), "k", ev{}); err != nil {
		t.Fatal(err)
	}
	flush(t, e) // nothing to read: the point is that nothing breaks or leaks
}

func TestHealthReportsStuckKeys(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{})
	ctx := context.Background()
	if err := e.Health(time.Hour); err != nil {
		t.Fatalf("idle engine unhealthy: %v", err)
	}
	if err := e.Submit(ctx, "stuck-key", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started
	err := e.Health(0) // any pending event is older than zero
	var se *runtime.StuckError
	if !errors.As(err, &se) || se.Keys != 1 || se.Sample[0] != "stuck-key" || !strings.Contains(err.Error(), "stuck-key") {
		t.Fatalf("Health: %v", err)
	}
	if err := e.Health(time.Hour); err != nil {
		t.Fatalf("a young event is not stuck: %v", err)
	}
	r.release(1)
	flush(t, e)
	if err := e.Health(0); err != nil {
		t.Fatalf("after draining: %v", err)
	}
}

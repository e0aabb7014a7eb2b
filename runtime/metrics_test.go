package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ordergen/ordergen/runtime"
)

// collect reads every instrument once through the SDK's manual reader.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sumWith returns the value of the counter's point whose attributes include
// every one of want.
func sumWith(t *testing.T, data metricdata.Aggregation, want ...attribute.KeyValue) int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("not an int64 sum: %T", data)
	}
	var total int64
	found := false
	for _, p := range sum.DataPoints {
		match := true
		for _, kv := range want {
			if v, ok := p.Attributes.Value(kv.Key); !ok || v != kv.Value {
				match = false
			}
		}
		if match {
			total += p.Value
			found = true
		}
	}
	if !found {
		return -1
	}
	return total
}

func gauge(t *testing.T, data metricdata.Aggregation, want ...attribute.KeyValue) int64 {
	t.Helper()
	g, ok := data.(metricdata.Gauge[int64])
	if !ok {
		t.Fatalf("not an int64 gauge: %T", data)
	}
	for _, p := range g.DataPoints {
		match := true
		for _, kv := range want {
			if v, ok := p.Attributes.Value(kv.Key); !ok || v != kv.Value {
				match = false
			}
		}
		if match {
			return p.Value
		}
	}
	return -1
}

func TestMetricsCountWhatTheScriptCaused(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	v := newVersioned()
	h := func(ctx context.Context, key string, x ev) error {
		if x.Fail > 0 && x.Seq == 99 {
			return runtime.Permanent(errors.New("poison"))
		}
		return v.handle(ctx, key, x)
	}
	entity := attribute.String("messaging.destination.name", "Account")
	e := mustNew(t, h, runtime.Config[string, ev]{
		MeterProvider:    mp,
		MetricAttributes: []attribute.KeyValue{entity},
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
	m := collect(t, reader)
	events := m[runtime.MetricEvents]
	for outcome, want := range map[string]int64{"accepted": 6, "handled": 2, "skipped": 1, "parked": 2, "dead_lettered": 0, "retried": 0} {
		if got := sumWith(t, events, runtime.AttrOutcome.String(outcome), entity); got != want {
			t.Errorf("events{outcome=%s} = %d, want %d", outcome, got, want)
		}
	}
	if got := sumWith(t, events, runtime.AttrSkipReason.String("duplicate or stale version")); got != 1 {
		t.Errorf("skips with their reason = %d, want 1", got)
	}
	for name, want := range map[string]int64{runtime.MetricBacklog: 1, runtime.MetricHeld: 1, runtime.MetricParkedKeys: 1, runtime.MetricParkedEvents: 2, runtime.MetricLanes: 2} {
		if got := gauge(t, m[name], entity); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	if got := gauge(t, m[runtime.MetricBacklogKey], runtime.AttrKey.String("a")); got != 1 {
		t.Errorf("backlog of key a = %d, want 1 (the held event)", got)
	}
	if _, ok := m[runtime.MetricProcessDuration].(metricdata.Histogram[float64]); !ok {
		t.Errorf("no duration histogram: %T", m[runtime.MetricProcessDuration])
	}
}

func TestMetricsRetriesAndDurations(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
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
	m := collect(t, reader)
	if got := sumWith(t, m[runtime.MetricEvents], runtime.AttrOutcome.String("retried")); got != 2 {
		t.Errorf("retried = %d, want 2", got)
	}
	if got := sumWith(t, m[runtime.MetricEvents], runtime.AttrOutcome.String("handled")); got != 40 {
		t.Errorf("handled = %d, want 40", got)
	}
	hist := m[runtime.MetricProcessDuration].(metricdata.Histogram[float64])
	var n uint64
	for _, p := range hist.DataPoints {
		n += p.Count
	}
	// 42 attempts, fast ones sampled one in 64 (and the first).
	if n == 0 || n > 42 {
		t.Errorf("duration samples = %d, want between 1 and 42", n)
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

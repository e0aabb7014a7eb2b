package otelmetrics_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/otelmetrics"
)

// collect reads every instrument once through the SDK's manual reader, by
// scope and name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[sm.Scope.Name+" "+m.Name] = m
		}
	}
	return out
}

// points returns the int64 values of a sum or gauge whose attributes
// include want.
func points(t *testing.T, m metricdata.Metrics, want ...attribute.KeyValue) []int64 {
	t.Helper()
	var dps []metricdata.DataPoint[int64]
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		if !d.IsMonotonic {
			t.Errorf("%s is not monotonic", m.Name)
		}
		dps = d.DataPoints
	case metricdata.Gauge[int64]:
		dps = d.DataPoints
	default:
		t.Fatalf("%s: not an int64 sum or gauge: %T", m.Name, m.Data)
	}
	var out []int64
	for _, p := range dps {
		if has(p.Attributes, want) {
			out = append(out, p.Value)
		}
	}
	return out
}

func has(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

const scope = "github.com/ordergen/ordergen/runtime "

// TestEngineInstrumentsThroughOpenTelemetry runs an engine on the SDK and
// checks the instruments by their documented names, kinds, units and
// attributes: the metrics table of docs/operating.md.
func TestEngineInstrumentsThroughOpenTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer sdk.Shutdown(context.Background())
	ctx := context.Background()
	poison := errors.New("poison")
	e, err := runtime.New(func(_ context.Context, key string, v int) error {
		switch {
		case v < 0:
			return runtime.Permanent(poison)
		case v == 0:
			return runtime.Skip("zero")
		}
		return nil
	}, runtime.Config[string, int]{
		MeterProvider:    otelmetrics.NewMeterProvider(sdk),
		MetricAttributes: []meter.Attribute{{Key: meter.AttrDestination, Value: "Account"}},
		Logger:           slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	// The permanent failure goes first, alone: a worker times its first
	// attempt (then one in 64 while handlers are fast), so its duration is
	// sampled whichever worker runs it.
	for _, s := range []struct {
		key string
		v   int
	}{{"b", -1}, {"b", 2}, {"a", 1}, {"a", 0}} {
		if err := e.Submit(ctx, s.key, s.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m := collect(t, reader)
	entity := attribute.String(meter.AttrDestination, "Account")
	system := attribute.String(meter.AttrSystem, "ordergen")
	events := m[scope+meter.MetricEvents]
	if events.Unit != "{event}" {
		t.Errorf("%s unit %q", meter.MetricEvents, events.Unit)
	}
	for outcome, want := range map[string]int64{"accepted": 4, "handled": 1, "parked": 2} {
		if got := points(t, events, attribute.String(meter.AttrOutcome, outcome), entity, system); len(got) != 1 || got[0] != want {
			t.Errorf("events{outcome=%s} = %v, want %d", outcome, got, want)
		}
	}
	if got := points(t, events, attribute.String(meter.AttrOutcome, "skipped"), attribute.String(meter.AttrSkipReason, "zero")); len(got) != 1 || got[0] != 1 {
		t.Errorf("skipped{reason=zero} = %v, want 1", got)
	}
	for name, want := range map[string]int64{meter.MetricParkedKeys: 1, meter.MetricParkedEvents: 2, meter.MetricBacklog: 0, meter.MetricHeld: 0, meter.MetricLanes: 1} {
		if got := points(t, m[scope+name], entity); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %d", name, got, want)
		}
	}
	age, ok := m[scope+meter.MetricOldestAge].Data.(metricdata.Gauge[float64])
	if !ok || m[scope+meter.MetricOldestAge].Unit != "s" || len(age.DataPoints) == 0 {
		t.Errorf("oldest age: %+v", m[scope+meter.MetricOldestAge])
	}
	hist, ok := m[scope+meter.MetricProcessDuration].Data.(metricdata.Histogram[float64])
	if !ok || m[scope+meter.MetricProcessDuration].Unit != "s" {
		t.Fatalf("no duration histogram in seconds: %+v", m[scope+meter.MetricProcessDuration])
	}
	permanent := false
	for _, p := range hist.DataPoints {
		if v, ok := p.Attributes.Value(meter.AttrErrorType); ok && v.AsString() == "permanent" {
			permanent = true
		}
	}
	if !permanent {
		t.Error("no duration sample with error.type=permanent")
	}
}

func TestCountersAndNilProvider(t *testing.T) {
	if otelmetrics.NewMeterProvider(nil) != nil {
		t.Fatal("a nil OpenTelemetry provider must give a nil meter.Provider")
	}
	reader := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer sdk.Shutdown(context.Background())
	m := otelmetrics.NewMeterProvider(sdk).Meter("github.com/ordergen/ordergen/runtime/kafka")
	c, err := m.Counter(meter.Instrument{Name: "ordergen.kafka.records", Kind: meter.KindCounter, Unit: "{record}"})
	if err != nil {
		t.Fatal(err)
	}
	set := m.Attributes(meter.Attribute{Key: "partition", Value: "3"})
	c.Add(2, set)
	c.Add(5, set)
	if _, err := m.Observe(func(meter.Observer) {}, meter.Instrument{Name: "x", Kind: meter.KindHistogram}); err == nil {
		t.Error("a histogram was accepted for observation")
	}
	got := collect(t, reader)["github.com/ordergen/ordergen/runtime/kafka ordergen.kafka.records"]
	if v := points(t, got, attribute.String("partition", "3")); len(v) != 1 || v[0] != 7 {
		t.Errorf("counter = %v, want 7", v)
	}
}

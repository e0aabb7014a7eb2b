package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/otelmetrics"
)

// metricsSDK is the example's OpenTelemetry SDK with a manual reader: a service
// would plug in the exporter of its choice (Prometheus, OTLP) instead; the
// generated dispatcher only needs the meter.Provider that
// runtime/otelmetrics makes of the SDK's.
type metricsSDK struct {
	reader   *sdkmetric.ManualReader
	sdk      *sdkmetric.MeterProvider
	provider meter.Provider
}

func newMeter() *metricsSDK {
	r := sdkmetric.NewManualReader()
	sdk := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	return &metricsSDK{reader: r, sdk: sdk, provider: otelmetrics.NewMeterProvider(sdk)}
}

func (m *metricsSDK) close() { _ = m.sdk.Shutdown(context.Background()) }

// Attribute keys as OpenTelemetry spells them.
const (
	attrOutcome    = attribute.Key(meter.AttrOutcome)
	attrSkipReason = attribute.Key(meter.AttrSkipReason)
	attrKey        = attribute.Key(meter.AttrKey)
	attrErrorType  = attribute.Key(meter.AttrErrorType)
)

// snapshot reads every instrument once and renders the ones an operator
// watches: events by outcome, backlog, the top keys and the oldest age,
// parked keys and handler durations.
func (m *metricsSDK) snapshot(ctx context.Context) (string, error) {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(ctx, &rm); err != nil {
		return "", err
	}
	var parts []string
	for _, sm := range rm.ScopeMetrics {
		for _, metric := range sm.Metrics {
			switch data := metric.Data.(type) {
			case metricdata.Sum[int64]:
				if metric.Name != meter.MetricEvents {
					// A plain counter (ordergen.resyncs): its total.
					total := int64(0)
					for _, p := range data.DataPoints {
						total += p.Value
					}
					parts = append(parts, fmt.Sprintf("%s=%d", metric.Name, total))
					continue
				}
				var outcomes []string
				for _, p := range data.DataPoints {
					if o, ok := p.Attributes.Value(attrOutcome); ok && p.Value > 0 {
						name := o.AsString()
						if r, ok := p.Attributes.Value(attrSkipReason); ok {
							name += "(" + r.AsString() + ")"
						}
						outcomes = append(outcomes, fmt.Sprintf("%s=%d", name, p.Value))
					}
				}
				sort.Strings(outcomes)
				parts = append(parts, metric.Name+"{"+strings.Join(outcomes, " ")+"}")
			case metricdata.Gauge[int64]:
				parts = append(parts, gaugeText(metric.Name, data.DataPoints, func(v int64) string { return fmt.Sprint(v) }))
			case metricdata.Gauge[float64]:
				parts = append(parts, gaugeText(metric.Name, data.DataPoints, func(v float64) string { return fmt.Sprintf("%.3fs", v) }))
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					if _, failed := p.Attributes.Value(attrErrorType); !failed && p.Count > 0 {
						parts = append(parts, fmt.Sprintf("%s{samples=%d mean=%.2fms}", metric.Name, p.Count, p.Sum/float64(p.Count)*1000))
					}
				}
			}
		}
	}
	return strings.Join(parts, "\n         "), nil
}

// gaugeText renders a gauge: its overall point, then its two largest
// per-key points.
func gaugeText[N int64 | float64](name string, points []metricdata.DataPoint[N], format func(N) string) string {
	var all []string
	var keys []metricdata.DataPoint[N]
	for _, p := range points {
		if _, ok := p.Attributes.Value(attrKey); ok {
			keys = append(keys, p)
			continue
		}
		all = append(all, format(p.Value))
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Value > keys[j].Value })
	var top []string
	for _, p := range keys[:min(len(keys), 2)] {
		k, _ := p.Attributes.Value(attrKey)
		top = append(top, k.AsString()+"="+format(p.Value))
	}
	text := name
	if len(all) > 0 {
		text += "=" + strings.Join(all, ",")
	}
	if len(top) > 0 {
		text += " {top keys: " + strings.Join(top, " ") + "}"
	}
	return text
}

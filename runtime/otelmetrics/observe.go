package otelmetrics

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/ordergen/ordergen/runtime/meter"
)

// Observe implements meter.Meter: it makes an OpenTelemetry observable
// instrument for each of instruments and registers one callback for them.
func (m scopeMeter) Observe(callback func(meter.Observer), instruments ...meter.Instrument) (func() error, error) {
	ints := make(map[meter.Instrument]metric.Int64Observable)
	floats := make(map[meter.Instrument]metric.Float64Observable)
	all := make([]metric.Observable, 0, len(instruments))
	for _, i := range instruments {
		var err error
		switch i.Kind {
		case meter.KindObservedCounter:
			var c metric.Int64ObservableCounter
			c, err = m.m.Int64ObservableCounter(i.Name, metric.WithUnit(i.Unit), metric.WithDescription(i.Description))
			ints[i], all = c, append(all, c)
		case meter.KindGauge:
			var g metric.Int64ObservableGauge
			g, err = m.m.Int64ObservableGauge(i.Name, metric.WithUnit(i.Unit), metric.WithDescription(i.Description))
			ints[i], all = g, append(all, g)
		case meter.KindFloatGauge:
			var g metric.Float64ObservableGauge
			g, err = m.m.Float64ObservableGauge(i.Name, metric.WithUnit(i.Unit), metric.WithDescription(i.Description))
			floats[i], all = g, append(all, g)
		default:
			return nil, fmt.Errorf("instrument %s: a %v cannot be observed", i.Name, i.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("instrument %s: %w", i.Name, err)
		}
	}
	reg, err := m.m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		callback(observer{o: o, ints: ints, floats: floats})
		return nil
	}, all...)
	if err != nil {
		return nil, fmt.Errorf("register callback: %w", err)
	}
	return reg.Unregister, nil
}

// observer hands the runtime's observations to OpenTelemetry's observer
// of the running callback. Observations of instruments the callback was
// not registered for are dropped, as OpenTelemetry drops them.
type observer struct {
	o      metric.Observer
	ints   map[meter.Instrument]metric.Int64Observable
	floats map[meter.Instrument]metric.Float64Observable
}

func (ob observer) ObserveInt64(i meter.Instrument, v int64, s meter.AttributeSet) {
	if inst, ok := ob.ints[i]; ok {
		ob.o.ObserveInt64(inst, v, options(s).observe...)
	}
}

func (ob observer) ObserveFloat64(i meter.Instrument, v float64, s meter.AttributeSet) {
	if inst, ok := ob.floats[i]; ok {
		ob.o.ObserveFloat64(inst, v, options(s).observe...)
	}
}

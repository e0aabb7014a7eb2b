package otelmetrics

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ordergen/ordergen/runtime/meter"
)

// NewMeterProvider returns a meter.Provider that records through mp.
// A nil mp gives nil: nothing is recorded.
func NewMeterProvider(mp metric.MeterProvider) meter.Provider {
	if mp == nil {
		return nil
	}
	return provider{mp: mp}
}

type provider struct{ mp metric.MeterProvider }

// Meter returns the meter of scope.
func (p provider) Meter(scope string) meter.Meter { return scopeMeter{m: p.mp.Meter(scope)} }

// meter implements meter.Meter over an OpenTelemetry meter.
type scopeMeter struct{ m metric.Meter }

// attrSet is a prepared attribute set: the options of each kind of
// measurement, made once, passed as they are (a variadic call with a slice
// allocates nothing).
type attrSet struct {
	attrs   []meter.Attribute
	record  []metric.RecordOption
	add     []metric.AddOption
	observe []metric.ObserveOption
}

func (s *attrSet) Attributes() []meter.Attribute { return s.attrs }

// Attributes implements meter.Meter.
func (scopeMeter) Attributes(attrs ...meter.Attribute) meter.AttributeSet {
	return prepare(attrs)
}

func prepare(attrs []meter.Attribute) *attrSet {
	kvs := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		kvs[i] = attribute.String(a.Key, a.Value)
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return &attrSet{
		attrs:   slices.Clone(attrs),
		record:  []metric.RecordOption{opt},
		add:     []metric.AddOption{opt},
		observe: []metric.ObserveOption{opt},
	}
}

// options returns s as prepared here; a set that another meter prepared is
// prepared again (which allocates), nil is the empty set.
func options(s meter.AttributeSet) *attrSet {
	switch s := s.(type) {
	case *attrSet:
		return s
	case nil:
		return prepare(nil)
	default:
		return prepare(s.Attributes())
	}
}

// Counter implements meter.Meter.
func (m scopeMeter) Counter(i meter.Instrument) (meter.Counter, error) {
	c, err := m.m.Int64Counter(i.Name, metric.WithUnit(i.Unit), metric.WithDescription(i.Description))
	if err != nil {
		return nil, fmt.Errorf("counter %s: %w", i.Name, err)
	}
	return counter{c: c}, nil
}

type counter struct{ c metric.Int64Counter }

func (c counter) Add(n int64, s meter.AttributeSet) {
	c.c.Add(context.Background(), n, options(s).add...)
}

// Histogram implements meter.Meter.
func (m scopeMeter) Histogram(i meter.Instrument) (meter.Histogram, error) {
	h, err := m.m.Float64Histogram(i.Name, metric.WithUnit(i.Unit), metric.WithDescription(i.Description))
	if err != nil {
		return nil, fmt.Errorf("histogram %s: %w", i.Name, err)
	}
	return histogram{h: h}, nil
}

type histogram struct{ h metric.Float64Histogram }

func (h histogram) Record(v float64, s meter.AttributeSet) {
	h.h.Record(context.Background(), v, options(s).record...)
}

package metricstest

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/ordergen/ordergen/runtime/meter"
)

// Provider is an in-memory meter.Provider. It is safe for
// concurrent use. The zero Provider is not usable: call New.
type Provider struct {
	mu        sync.Mutex
	scopes    []string
	counts    map[series]*Point // counters and histograms, as recorded
	callbacks map[int]callback
	next      int
}

// New returns an empty provider.
func New() *Provider {
	return &Provider{counts: make(map[series]*Point), callbacks: make(map[int]callback)}
}

// series names one point: an instrument and its attributes, encoded.
type series struct {
	name  string
	attrs string
}

type callback struct {
	fn          func(meter.Observer)
	instruments []meter.Instrument
}

// Point is one measured value of an instrument for one set of attributes.
type Point struct {
	// Instrument is the instrument measured.
	Instrument meter.Instrument
	// Attributes are the point's attributes, by key.
	Attributes map[string]string
	// Value is a counter's sum, a gauge's value or a histogram's sum.
	Value float64
	// Count is the number of values a histogram recorded (1 for others).
	Count int
}

// Meter implements meter.Provider; it records the scope.
func (p *Provider) Meter(scope string) meter.Meter {
	p.mu.Lock()
	if !slices.Contains(p.scopes, scope) {
		p.scopes = append(p.scopes, scope)
	}
	p.mu.Unlock()
	return scopeMeter{p: p}
}

// Scopes returns the scopes meters were asked for, in order.
func (p *Provider) Scopes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.scopes)
}

type scopeMeter struct{ p *Provider }

type attrSet struct {
	attrs []meter.Attribute
	key   string
}

func (s *attrSet) Attributes() []meter.Attribute { return s.attrs }

func (scopeMeter) Attributes(attrs ...meter.Attribute) meter.AttributeSet {
	return &attrSet{attrs: slices.Clone(attrs), key: fmt.Sprint(attrs)}
}

func (m scopeMeter) Counter(i meter.Instrument) (meter.Counter, error) {
	if i.Kind != meter.KindCounter {
		return nil, fmt.Errorf("metricstest: %s is a %v, not a counter", i.Name, i.Kind)
	}
	return recorder{p: m.p, i: i}, nil
}

func (m scopeMeter) Histogram(i meter.Instrument) (meter.Histogram, error) {
	if i.Kind != meter.KindHistogram {
		return nil, fmt.Errorf("metricstest: %s is a %v, not a histogram", i.Name, i.Kind)
	}
	return recorder{p: m.p, i: i}, nil
}

func (m scopeMeter) Observe(fn func(meter.Observer), instruments ...meter.Instrument) (func() error, error) {
	for _, i := range instruments {
		switch i.Kind {
		case meter.KindObservedCounter, meter.KindGauge, meter.KindFloatGauge:
		default:
			return nil, fmt.Errorf("metricstest: a %v (%s) cannot be observed", i.Kind, i.Name)
		}
	}
	m.p.mu.Lock()
	id := m.p.next
	m.p.next++
	m.p.callbacks[id] = callback{fn: fn, instruments: slices.Clone(instruments)}
	m.p.mu.Unlock()
	return func() error {
		m.p.mu.Lock()
		delete(m.p.callbacks, id)
		m.p.mu.Unlock()
		return nil
	}, nil
}

// recorder is a counter or a histogram.
type recorder struct {
	p *Provider
	i meter.Instrument
}

func (r recorder) Add(n int64, s meter.AttributeSet)      { r.p.add(r.i, float64(n), s) }
func (r recorder) Record(v float64, s meter.AttributeSet) { r.p.add(r.i, v, s) }

// add records v; with an attribute set this provider prepared, it
// allocates nothing once the series exists.
func (p *Provider) add(i meter.Instrument, v float64, s meter.AttributeSet) {
	as, ok := s.(*attrSet)
	if !ok {
		as = &attrSet{attrs: s.Attributes(), key: fmt.Sprint(s.Attributes())}
	}
	attrs := as.attrs
	k := series{name: i.Name, attrs: as.key}
	p.mu.Lock()
	defer p.mu.Unlock()
	pt, ok := p.counts[k]
	if !ok {
		pt = &Point{Instrument: i, Attributes: attrMap(attrs)}
		p.counts[k] = pt
	}
	pt.Value += v
	pt.Count++
}

func attrMap(attrs []meter.Attribute) map[string]string {
	m := make(map[string]string, len(attrs))
	for _, a := range attrs {
		m[a.Key] = a.Value
	}
	return m
}

// observer collects the observations of one callback.
type observer struct {
	allowed []meter.Instrument
	points  []Point
}

func (o *observer) ObserveInt64(i meter.Instrument, v int64, s meter.AttributeSet) {
	o.observe(i, float64(v), s)
}

func (o *observer) ObserveFloat64(i meter.Instrument, v float64, s meter.AttributeSet) {
	o.observe(i, v, s)
}

func (o *observer) observe(i meter.Instrument, v float64, s meter.AttributeSet) {
	if slices.Contains(o.allowed, i) {
		o.points = append(o.points, Point{Instrument: i, Attributes: attrMap(s.Attributes()), Value: v, Count: 1})
	}
}

// Collect runs every registered callback and returns what was recorded
// and observed.
func (p *Provider) Collect() Metrics {
	p.mu.Lock()
	var out Metrics
	for _, pt := range p.counts {
		c := *pt
		c.Attributes = maps.Clone(pt.Attributes)
		out = append(out, c)
	}
	cbs := slices.Collect(maps.Values(p.callbacks))
	p.mu.Unlock()
	for _, cb := range cbs {
		o := &observer{allowed: cb.instruments}
		cb.fn(o)
		out = append(out, o.points...)
	}
	return out
}

// Metrics are the points of one collection.
type Metrics []Point

// Points returns the points of the instrument name whose attributes
// include every one of attrs.
func (m Metrics) Points(name string, attrs ...meter.Attribute) []Point {
	var out []Point
	for _, pt := range m {
		if pt.Instrument.Name == name && has(pt.Attributes, attrs) {
			out = append(out, pt)
		}
	}
	return out
}

// Sum adds up the values of Points(name, attrs...), and reports whether
// there were any.
func (m Metrics) Sum(name string, attrs ...meter.Attribute) (float64, bool) {
	pts := m.Points(name, attrs...)
	var sum float64
	for _, pt := range pts {
		sum += pt.Value
	}
	return sum, len(pts) > 0
}

func has(m map[string]string, attrs []meter.Attribute) bool {
	for _, a := range attrs {
		if v, ok := m[a.Key]; !ok || v != a.Value {
			return false
		}
	}
	return true
}

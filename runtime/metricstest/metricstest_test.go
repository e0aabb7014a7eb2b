package metricstest_test

import (
	"testing"

	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

func TestProviderKeepsWhatWasRecordedAndObserved(t *testing.T) {
	p := metricstest.New()
	m := p.Meter("scope/a")
	a := m.Attributes(meter.Attribute{Key: "k", Value: "a"})
	b := m.Attributes(meter.Attribute{Key: "k", Value: "b"})
	c, err := m.Counter(meter.Instrument{Name: "c", Kind: meter.KindCounter})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(2, a)
	c.Add(3, a)
	c.Add(5, b)
	h, err := m.Histogram(meter.Instrument{Name: "h", Kind: meter.KindHistogram})
	if err != nil {
		t.Fatal(err)
	}
	h.Record(0.5, a)
	h.Record(1.5, a)
	g := meter.Instrument{Name: "g", Kind: meter.KindGauge}
	other := meter.Instrument{Name: "other", Kind: meter.KindGauge}
	value := int64(7)
	unregister, err := m.Observe(func(o meter.Observer) {
		o.ObserveInt64(g, value, b)
		o.ObserveInt64(other, 1, b) // not registered: dropped
	}, g)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Collect()
	for _, tc := range []struct {
		name  string
		attrs []meter.Attribute
		want  float64
	}{
		{"c", nil, 10},
		{"c", []meter.Attribute{{Key: "k", Value: "a"}}, 5},
		{"h", nil, 2},
		{"g", []meter.Attribute{{Key: "k", Value: "b"}}, 7},
	} {
		if sum, ok := got.Sum(tc.name, tc.attrs...); !ok || sum != tc.want {
			t.Errorf("Sum(%s, %v) = %v, %v; want %v", tc.name, tc.attrs, sum, ok, tc.want)
		}
	}
	if pts := got.Points("h"); len(pts) != 1 || pts[0].Count != 2 {
		t.Errorf("histogram points %+v, want one of two values", pts)
	}
	if _, ok := got.Sum("other"); ok {
		t.Error("an instrument the callback was not registered for was kept")
	}
	if err := unregister(); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Collect().Sum("g"); ok {
		t.Error("an unregistered callback still ran")
	}
	if _, err := m.Observe(func(meter.Observer) {}, meter.Instrument{Name: "c", Kind: meter.KindCounter}); err == nil {
		t.Error("a counter was accepted for observation")
	}
	if s := p.Scopes(); len(s) != 1 || s[0] != "scope/a" {
		t.Errorf("scopes %v", s)
	}
}

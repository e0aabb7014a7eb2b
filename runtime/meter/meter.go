package meter

import "strconv"

// Attribute is one attribute of a measurement: a key such as
// "messaging.destination.name" and its value.
type Attribute struct {
	// Key is the attribute's name.
	Key string
	// Value is the attribute's value.
	Value string
}

// Kind says how an instrument is fed and what it measures.
type Kind uint8

const (
	// KindCounter is a monotonic int64 sum that the code adds to as things
	// happen (Meter.Counter).
	KindCounter Kind = iota + 1
	// KindHistogram is a distribution of float64 values (durations, in
	// seconds) recorded as they happen (Meter.Histogram).
	KindHistogram
	// KindObservedCounter is a monotonic int64 total read at collection time
	// (Meter.Observe): the runtime keeps the count, the meter reads it.
	KindObservedCounter
	// KindGauge is an int64 value read at collection time (Meter.Observe).
	KindGauge
	// KindFloatGauge is a float64 value read at collection time
	// (Meter.Observe).
	KindFloatGauge
)

var kindNames = [...]string{KindCounter: "counter", KindHistogram: "histogram", KindObservedCounter: "observed counter", KindGauge: "gauge", KindFloatGauge: "float gauge"}

// String returns the kind's name ("counter", "gauge", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Instrument describes one instrument. It is comparable: a meter may use it
// as a map key.
type Instrument struct {
	// Name is the instrument's name, such as "ordergen.events".
	Name string
	// Kind says how the instrument is fed.
	Kind Kind
	// Unit is the unit in UCUM notation: "s", "{event}".
	Unit string
	// Description says what the instrument measures, in one sentence.
	Description string
}

// Provider gives the meter of an instrumentation scope. Config's
// Provider (and a generated dispatcher's) takes one; nil records
// nothing. runtime/otelmetrics adapts an OpenTelemetry Provider.
type Provider interface {
	// Meter returns the meter of scope, the import path of the recording
	// package ("github.com/ordergen/ordergen/runtime").
	Meter(scope string) Meter
}

// Meter makes the instruments a package records into. Its methods are
// called when an engine starts, never per event; the instruments and
// attribute sets it returns are used per event and must be safe for
// concurrent use.
type Meter interface {
	// Attributes prepares a set of attributes once, so that recording with
	// it allocates nothing. The meter keeps its own copy of attrs.
	Attributes(attrs ...Attribute) AttributeSet
	// Counter returns the instrument i, of KindCounter.
	Counter(i Instrument) (Counter, error)
	// Histogram returns the instrument i, of KindHistogram.
	Histogram(i Instrument) (Histogram, error)
	// Observe registers callback, which the meter calls at each collection
	// to report the current values of instruments (of KindObservedCounter,
	// KindGauge or KindFloatGauge) through the Observer it passes. It returns
	// the function that unregisters callback.
	Observe(callback func(Observer), instruments ...Instrument) (unregister func() error, err error)
}

// AttributeSet is a set of attributes that a Meter prepared once.
type AttributeSet interface {
	// Attributes returns the set's attributes. The caller must not change
	// them.
	Attributes() []Attribute
}

// Counter is a monotonic sum fed as things happen.
type Counter interface {
	// Add adds n (not negative) with the attributes of attrs.
	Add(n int64, attrs AttributeSet)
}

// Histogram is a distribution fed as things happen.
type Histogram interface {
	// Record records v with the attributes of attrs.
	Record(v float64, attrs AttributeSet)
}

// Observer takes the values of observed instruments during a Meter's
// callback. It is valid only during that call.
type Observer interface {
	// ObserveInt64 reports the value of i, of KindObservedCounter or
	// KindGauge, for attrs.
	ObserveInt64(i Instrument, v int64, attrs AttributeSet)
	// ObserveFloat64 reports the value of i, of KindFloatGauge, for attrs.
	ObserveFloat64(i Instrument, v float64, attrs AttributeSet)
}

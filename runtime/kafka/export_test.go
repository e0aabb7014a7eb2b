package kafka

// Exported for the tests of package kafka_test.

type Span = span

var (
	EncodeMetadata = encodeMetadata
	DecodeMetadata = decodeMetadata
	Murmur2        = murmur2
)

// Tracker exposes a tracker to the tests.
type Tracker struct{ t tracker }

func (x *Tracker) Start(c int64, inh []Span)    { x.t.start(c, inh) }
func (x *Tracker) Seen(o int64) bool            { return x.t.seen(o) }
func (x *Tracker) InheritedDone(o int64) bool   { return x.t.inheritedDone(o) }
func (x *Tracker) Skip(o int64)                 { x.t.skip(o) }
func (x *Tracker) Add(o int64)                  { x.t.add(o, 0) }
func (x *Tracker) Finish(o int64)               { x.t.finish(o) }
func (x *Tracker) CommitPoint() (int64, []Span) { return x.t.commitPoint() }
func (x *Tracker) Measure()                     { x.t.measure() }
func (x *Tracker) Fits(o int64, max int) bool   { return x.t.fits(o, max) }

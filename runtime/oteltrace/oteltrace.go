package oteltrace

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// ScopeName is the instrumentation scope of the spans a Tracer makes.
const ScopeName = "github.com/ordergen/ordergen/runtime/oteltrace"

// The attributes of an attempt's span.
const (
	AttrEntity   = attribute.Key("ordergen.entity")   // the engine's name
	AttrKey      = attribute.Key("ordergen.key")      // the event's key
	AttrEvent    = attribute.Key("ordergen.event")    // the event's type name
	AttrVersion  = attribute.Key("ordergen.version")  // the event's version
	AttrAttempt  = attribute.Key("ordergen.attempt")  // the attempt's number, from 1
	AttrReplayed = attribute.Key("ordergen.replayed") // an event replayed from a park
	AttrOutcome  = attribute.Key("ordergen.outcome")  // what became of the attempt
)

// The events of an attempt's span.
const (
	EventRetry  = "ordergen.retry"  // the event is tried again (on the failed attempt's span)
	EventReplay = "ordergen.replay" // the event was replayed from a park
	EventPark   = "ordergen.park"   // the event was parked after the attempt failed
	// EventFate records any other final outcome after a failed attempt
	// (dead-lettered, discarded, withdrawn), in AttrOutcome.
	EventFate = "ordergen.outcome"
)

// Tracer traces ordergen's events with OpenTelemetry (see the package's
// doc). It is a runtime.Tracer, a transport.Injector and a
// transport.Linker. It is safe for concurrent use.
type Tracer struct {
	tr   trace.Tracer
	prop propagation.TextMapPropagator

	// mu guards links and open.
	mu sync.Mutex
	// links are the trace contexts of the messages in flight, by tag.
	links map[uint64]trace.SpanContext
	// open are the spans of failed attempts whose event's fate is not known
	// yet, by engine and key: a key has one event in its attempts at a time
	// in an engine (the subscribers of a topic may share a Tracer).
	open  map[engineKey]failed
	nopen atomic.Int64 // len(open), read without mu

	name atomic.Pointer[[2]string] // the last engine's name and its spans' (spanName)
}

// engineKey is a key of an engine.
type engineKey struct {
	engine string
	key    any
}

// failed is the span of a failed attempt, and its event's tag.
type failed struct {
	span trace.Span
	tag  uint64
}

var (
	_ runtime.Tracer     = (*Tracer)(nil)
	_ transport.Injector = (*Tracer)(nil)
	_ transport.Linker   = (*Tracer)(nil)
)

// New returns a Tracer whose spans tp makes; nil tp is the no-op
// provider. The trace context travels as W3C's (traceparent, tracestate).
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &Tracer{
		tr:    tp.Tracer(ScopeName),
		prop:  propagation.TraceContext{},
		links: make(map[uint64]trace.SpanContext),
		open:  make(map[engineKey]failed),
	}
}

// Inject returns the W3C trace context of ctx's span (empty without one).
func (t *Tracer) Inject(ctx context.Context) transport.Trace {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return transport.Trace{}
	}
	c := carrier{}
	t.prop.Inject(ctx, &c)
	return c.t
}

// Context returns ctx carrying tr as its remote parent: the context a
// message's handling continues.
func (t *Tracer) Context(ctx context.Context, tr transport.Trace) context.Context {
	if tr.IsZero() {
		return ctx
	}
	return t.prop.Extract(ctx, &carrier{tr})
}

// Link remembers tr, the trace context of the message tagged tag.
func (t *Tracer) Link(tag uint64, tr transport.Trace) {
	sc := trace.SpanContextFromContext(t.Context(context.Background(), tr))
	if !sc.IsValid() {
		return // not a trace context: nothing to link to
	}
	t.mu.Lock()
	t.links[tag] = sc
	t.mu.Unlock()
}

// Unlink forgets the trace context of the message tagged tag.
func (t *Tracer) Unlink(tag uint64) {
	t.mu.Lock()
	delete(t.links, tag)
	t.mu.Unlock()
}

// StartAttempt starts the attempt's span, a child of (and linked to) the
// trace context of the event's message, and returns ctx carrying it. The
// attributes are set once the span is known to record: a sampler does not
// see them, and a dropped span costs less.
func (t *Tracer) StartAttempt(ctx context.Context, a runtime.Attempt) context.Context {
	var link trace.SpanContext
	if a.Tag != 0 || t.nopen.Load() != 0 {
		var prev trace.Span
		t.mu.Lock()
		if a.Tag != 0 {
			link = t.links[a.Tag]
		}
		if p, ok := t.open[engineKey{a.Engine, a.Key}]; ok {
			prev = p.span
			delete(t.open, engineKey{a.Engine, a.Key})
			t.nopen.Add(-1)
		}
		t.mu.Unlock()
		if prev != nil {
			prev.AddEvent(EventRetry, trace.WithAttributes(AttrAttempt.Int(a.Number)))
			prev.SetAttributes(AttrOutcome.String("retried"))
			prev.End()
		}
	}
	parent, opts := ctx, consumerSpan
	if link.IsValid() {
		opts = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithLinks(trace.Link{SpanContext: link})}
		parent = trace.ContextWithRemoteSpanContext(ctx, link)
	}
	ctx, span := t.tr.Start(parent, t.spanName(a.Engine), opts...)
	if !span.IsRecording() {
		return ctx
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, AttrEntity.String(a.Engine), AttrKey.String(keyText(a.Key)), AttrAttempt.Int(a.Number))
	if n, ok := a.Event.(interface{ EventName() string }); ok {
		attrs = append(attrs, AttrEvent.String(n.EventName()))
	}
	if v, ok := a.Event.(interface{ EventVersion() uint64 }); ok {
		attrs = append(attrs, AttrVersion.Int64(int64(v.EventVersion())))
	}
	if a.Replayed {
		attrs = append(attrs, AttrReplayed.Bool(true))
	}
	span.SetAttributes(attrs...)
	if a.Replayed {
		span.AddEvent(EventReplay)
	}
	return ctx
}

// consumerSpan is the start option of an attempt's span without a link.
var consumerSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}

// spanName returns the name of engine's attempts' spans, "process
// <engine>", without building it for each attempt.
func (t *Tracer) spanName(engine string) string {
	if n := t.name.Load(); n != nil && n[0] == engine {
		return n[1]
	}
	n := &[2]string{engine, "process " + engine}
	t.name.Store(n)
	return n[1]
}

// EndAttempt ends the attempt's span when it succeeded; a failed one stays
// open until its event's fate is known (the next attempt, or Retired).
func (t *Tracer) EndAttempt(ctx context.Context, a runtime.Attempt, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return // nothing to record, nor to end
	}
	if err == nil {
		span.SetAttributes(AttrOutcome.String(runtime.Handled.String()))
		span.End()
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	t.mu.Lock()
	ek := engineKey{a.Engine, a.Key}
	prev, ok := t.open[ek]
	t.open[ek] = failed{span, a.Tag}
	if !ok {
		t.nopen.Add(1)
	}
	t.mu.Unlock()
	if ok { // not expected: a key's attempts are one at a time
		prev.span.End()
	}
}

// Retired records the fate of a failed attempt's event on its span and
// ends it. The outcomes of the key's other events leave it open: the
// event before it, whose outcome an inline run reports once its worker
// moved past it, and those behind it (parked with it, conflated). Events a
// transport submitted are told apart by their tags; without tags (Submit),
// only an outcome that can follow a failed attempt ends it.
func (t *Tracer) Retired(engine string, key any, tag uint64, o runtime.Outcome) {
	switch {
	case t.nopen.Load() == 0:
		return
	case o == runtime.Handled, o == runtime.Skipped, o == runtime.Conflated:
		return // a failed attempt is tried again before its event gets these
	}
	ek := engineKey{engine, key}
	t.mu.Lock()
	f, ok := t.open[ek]
	if ok && f.tag == tag {
		delete(t.open, ek)
		t.nopen.Add(-1)
	}
	t.mu.Unlock()
	if !ok || f.tag != tag {
		return
	}
	span := f.span
	name := EventFate
	if o == runtime.Parked {
		name = EventPark
	}
	span.AddEvent(name, trace.WithAttributes(AttrOutcome.String(o.String())))
	span.SetAttributes(AttrOutcome.String(o.String()))
	span.End()
}

// keyText is a key as a span's attribute.
func keyText(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	if s, err := transport.KeyText(k); err == nil {
		return s
	}
	return fmt.Sprint(k)
}

// carrier carries a transport.Trace as W3C headers for the propagator.
type carrier struct{ t transport.Trace }

func (c *carrier) Get(key string) string {
	switch key {
	case transport.HeaderTraceParent:
		return c.t.Parent
	case transport.HeaderTraceState:
		return c.t.State
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case transport.HeaderTraceParent:
		c.t.Parent = value
	case transport.HeaderTraceState:
		c.t.State = value
	}
}

func (c *carrier) Keys() []string {
	return []string{transport.HeaderTraceParent, transport.HeaderTraceState}
}

// W3C returns the W3C trace context (traceparent, tracestate) of ctx's
// span, "" without one: a sqlstore.TraceFunc, for the outbox to store the
// writer's trace context with each row (store.Trace(tr.W3C)).
func (t *Tracer) W3C(ctx context.Context) (parent, state string) {
	tr := t.Inject(ctx)
	return tr.Parent, tr.State
}

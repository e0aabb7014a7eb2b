package transport

import "context"

// Trace context on the wire. A producer writes the W3C trace context of
// the context it publishes under (HeaderTraceParent, HeaderTraceState) to
// its message's headers or attributes; a consumer reads it into
// Message.Trace, and the Source hands it, by the message's tag, to the
// subscribers' tracers (runtime.Config.Tracer) that link each attempt's
// span to it. The kit does this once for every broker: an adapter only
// maps TraceOf(ctx) to its message's headers as it maps HeaderType, and
// sets Message.Trace from them (TraceFrom). runtime/oteltrace implements
// the interfaces with OpenTelemetry; without it nothing is traced and a
// message's trace context, when it carries one, goes nowhere.

// The W3C trace context's header names (https://www.w3.org/TR/trace-context/).
const (
	// HeaderTraceParent carries the trace and the span a message was sent
	// under.
	HeaderTraceParent = "traceparent"
	// HeaderTraceState carries the vendors' trace state.
	HeaderTraceState = "tracestate"
)

// Trace is the W3C trace context of a message: empty when it carries none.
type Trace struct {
	// Parent is the traceparent header's value.
	Parent string
	// State is the tracestate header's value.
	State string
}

// IsZero reports whether t carries no trace context.
func (t Trace) IsZero() bool { return t.Parent == "" }

// Headers returns t as headers: none when it is empty.
func (t Trace) Headers() []Header {
	switch {
	case t.Parent == "":
		return nil
	case t.State == "":
		return []Header{{HeaderTraceParent, t.Parent}}
	}
	return []Header{{HeaderTraceParent, t.Parent}, {HeaderTraceState, t.State}}
}

// TraceFrom returns the trace context of a message whose header (or
// attribute) of name key get returns ("" when it has none).
func TraceFrom(get func(key string) string) Trace {
	p := get(HeaderTraceParent)
	if p == "" {
		return Trace{}
	}
	return Trace{Parent: p, State: get(HeaderTraceState)}
}

// Injector writes the trace context of a context (its span's, for
// OpenTelemetry) as a Trace. An OrderedSink given one (OrderedSink.Trace)
// hands its writer the trace context of each send's context.
type Injector interface {
	Inject(ctx context.Context) Trace
}

// Linker is a subscriber's tracer (runtime.Config.Tracer) that links the
// attempts of a transport's events to the trace contexts their messages
// carried: a Source links each message's Trace under its tag once taken
// and unlinks it once the message is settled.
//
// Tags are a Source's own: give each consumer's subscribers a tracer of
// their own (runtime/oteltrace's New is cheap), or the tags of two
// consumers meet in one tracer and an attempt may link to the other's
// message.
type Linker interface {
	Link(tag uint64, t Trace)
	Unlink(tag uint64)
}

type traceKey struct{}

// WithTrace returns ctx carrying t, which a producer writes to the message
// it sends under ctx instead of ctx's own trace context: the outbox's relay
// sends each row with the trace context its writer committed.
func WithTrace(ctx context.Context, t Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// TraceOf returns the trace context a producer writes to the message it
// sends under ctx (WithTrace's; OrderedSink puts its Injector's there).
func TraceOf(ctx context.Context) Trace {
	t, _ := ctx.Value(traceKey{}).(Trace)
	return t
}

// Trace makes s write the trace context of each send's context, as inj
// gives it, to the message (unless the context carries one already, from
// WithTrace). Call it before the first send. Nil: none is written but the
// one WithTrace set.
func (s *OrderedSink[K, E]) Trace(inj Injector) { s.inject = inj }

// traced returns ctx carrying the trace context the writer writes.
func (s *OrderedSink[K, E]) traced(ctx context.Context) context.Context {
	if s.inject == nil || !TraceOf(ctx).IsZero() {
		return ctx
	}
	if t := s.inject.Inject(ctx); !t.IsZero() {
		return WithTrace(ctx, t)
	}
	return ctx
}

// linkersOf returns the distinct Linkers of subs' tracers.
func linkersOf(subs []Subscription) []Linker {
	var out []Linker
next:
	for _, s := range subs {
		l, ok := s.Tracer.(Linker)
		if !ok {
			continue
		}
		for _, o := range out {
			if o == l {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// Link links t, the trace context of the message tagged tag, into the
// subscribers' tracers, until the message is settled.
func (s *Source[K, E, M]) Link(tag uint64, t Trace) {
	if t.IsZero() {
		return
	}
	for _, l := range s.links {
		l.Link(tag, t)
	}
}

// unlink forgets the trace context of the message tagged tag.
func (s *Source[K, E, M]) unlink(tag uint64) {
	for _, l := range s.links {
		l.Unlink(tag)
	}
}

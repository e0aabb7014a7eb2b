package genimpl

import (
	"context"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// The stores and sinks a subscriber's Config names hold the entity's
// events (E); its engine holds bodies (B). These adapters convert at
// that edge, on the paths where events leave the engine or come back to
// it (a park, a dead letter, the inspector's view), never on the way to a
// handler.

// envParks is a ParkStore of bodies over the configured store of
// events.
type envParks[K comparable, E Event[K], B any] struct {
	en *Entity[K, E, B]
	s  runtime.ParkStore[K, E]
}

func (p envParks[K, E, B]) Append(ctx context.Context, key K, reason string, events []runtime.ParkedEvent[B]) error {
	out := make([]runtime.ParkedEvent[E], len(events))
	for i := range events {
		out[i] = parkedEvent(events[i], p.en.event(&events[i].Event))
	}
	return p.s.Append(ctx, key, reason, out)
}

func (p envParks[K, E, B]) Keys(ctx context.Context) ([]runtime.ParkedKey[K], error) {
	return p.s.Keys(ctx)
}

func (p envParks[K, E, B]) Read(ctx context.Context, key K, after uint64, limit int) ([]runtime.ParkedEvent[B], error) {
	events, err := p.s.Read(ctx, key, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]runtime.ParkedEvent[B], len(events))
	for i := range events {
		_, v, err := p.en.envelope(events[i].Event, false)
		if err != nil {
			return nil, fmt.Errorf("parked event %d of %v: %w", events[i].Seq, key, err)
		}
		out[i] = parkedEvent(events[i], v)
	}
	return out, nil
}

func (p envParks[K, E, B]) Remove(ctx context.Context, key K, seq uint64) error {
	return p.s.Remove(ctx, key, seq)
}

func (p envParks[K, E, B]) Clear(ctx context.Context, key K) (int, error) {
	return p.s.Clear(ctx, key)
}

// parkedEvent returns p with ev as its event.
func parkedEvent[F, T any](p runtime.ParkedEvent[F], ev T) runtime.ParkedEvent[T] {
	return runtime.ParkedEvent[T]{Event: ev, Err: p.Err, Attempts: p.Attempts, At: p.At, Seq: p.Seq, Tag: p.Tag}
}

// envDeadLetter is the dead-letter sink of bodies that hands their
// events to sink.
func envDeadLetter[K comparable, E Event[K], B any](en *Entity[K, E, B], sink runtime.DeadLetterSink[K, E]) runtime.DeadLetterSink[K, B] {
	if sink == nil {
		return nil
	}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, B]) error {
		return sink(ctx, runtime.DeadLetterEvent[K, E]{Key: dl.Key, Event: en.event(&dl.Event), Err: dl.Err, Attempts: dl.Attempts})
	}
}

// envCodec is the entity's codec (Codec) for bodies: the inspector's.
type envCodec[K comparable, E Event[K], B any] struct{ en *Entity[K, E, B] }

func (c envCodec[K, E, B]) Encode(v B) (string, []byte, error) {
	return Encode(c.en, c.en.event(&v))
}

func (c envCodec[K, E, B]) Decode(name string, data []byte) (B, error) {
	e, err := Decode(c.en, name, data)
	if err != nil {
		var zero B
		return zero, err
	}
	_, v, err := c.en.envelope(e, false)
	return v, err
}

// envTracer is the tracer of a subscriber's engine: the configured one,
// told of each attempt with its event as the entity's interface holds it
// (which a tracer reads its name and version from), not the body.
type envTracer[K comparable, E Event[K], B any] struct {
	en *Entity[K, E, B]
	tr runtime.Tracer
}

func (t envTracer[K, E, B]) StartAttempt(ctx context.Context, a runtime.Attempt) context.Context {
	return t.tr.StartAttempt(ctx, t.attempt(a))
}

func (t envTracer[K, E, B]) EndAttempt(ctx context.Context, a runtime.Attempt, err error) {
	t.tr.EndAttempt(ctx, t.attempt(a), err)
}

func (t envTracer[K, E, B]) Retired(engine string, key any, tag uint64, o runtime.Outcome) {
	t.tr.Retired(engine, key, tag, o)
}

// attempt returns a with the event its body carries.
func (t envTracer[K, E, B]) attempt(a runtime.Attempt) runtime.Attempt {
	if v, ok := a.Event.(B); ok {
		a.Event = t.en.event(&v)
	}
	return a
}

// envLinkingTracer is an envTracer over a tracer that links the trace
// contexts of a transport's messages (transport.Linker): it links them too,
// so that a Source finds it among its subscribers' tracers.
type envLinkingTracer[K comparable, E Event[K], B any] struct {
	envTracer[K, E, B]
	transport.Linker
}

// envTracerOf returns the tracer of a subscriber's engine over tr; nil
// for a nil tr.
func envTracerOf[K comparable, E Event[K], B any](en *Entity[K, E, B], tr runtime.Tracer) runtime.Tracer {
	if tr == nil {
		return nil
	}
	t := envTracer[K, E, B]{en, tr}
	if l, ok := tr.(transport.Linker); ok {
		return envLinkingTracer[K, E, B]{t, l}
	}
	return t
}

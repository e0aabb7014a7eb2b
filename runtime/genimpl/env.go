package genimpl

import "github.com/ordergen/ordergen/runtime"

// Env is an event as a dispatcher's engines carry it: its version and kind,
// read once when it is published, and the event in its body. The key
// travels beside it, as the engines' own. The body B is generated per
// entity: when the entity's events are small, a struct with a field per
// event, so that an event travels by value, publishing it allocates
// nothing and its handler reads it from the engine's own memory; otherwise
// Boxed, the event as the entity's event interface holds it, so that a
// queued event costs its own size, not that of the largest (see the
// generator's bodyLimit). The generated code fills bodies and reads them
// back through the entity's Wrap and Unwrap; a handler never sees an Env.
type Env[B any] struct {
	// Version is the event's version, 0 for an entity without one.
	Version uint64
	// Kind is the index of the event's type in Entity.Events.
	Kind int
	// Body holds the event.
	Body B
}

// Boxed is the body of an entity whose events travel boxed.
type Boxed[E any] struct{ Event E }

// WrapBoxed is the Wrap of an entity whose events travel boxed: the body
// holds ev, whose kind the generic code finds.
func WrapBoxed[E any](ev E) (Boxed[E], int) { return Boxed[E]{ev}, -1 }

// UnwrapBoxed is the Unwrap of an entity whose events travel boxed.
func UnwrapBoxed[E any](_ int, b Boxed[E]) E { return b.Event }

// envelope returns ev, an event of the entity, as the engines carry it,
// with its key, or the reason it is refused: an event of no type of the
// entity, a nil pointer, an empty key or a version below 1.
func (en *Entity[K, E, B]) envelope(ev E, textKey bool) (K, Env[B], error) {
	var v Env[B]
	v.Body, v.Kind = en.Wrap(ev)
	if v.Kind < 0 {
		// A boxed event, a pointer to one, or no event of the entity.
		value, kind, ok := en.value(ev)
		if !ok {
			var zero K
			return zero, v, en.nilEvent()
		}
		if v.Body, v.Kind = en.Wrap(value); v.Kind < 0 {
			v.Kind = kind
		}
		ev = value
	}
	key := ev.EventKey()
	if en.Version != nil {
		v.Version = en.Version(ev)
	}
	return key, v, en.refuse(v.Kind, key, v.Version, textKey)
}

// event returns the event v carries, as the entity's event interface holds
// it (boxed: for the paths that hand events out, not for handlers).
func (en *Entity[K, E, B]) event(v *Env[B]) E { return en.Unwrap(v.Kind, v.Body) }

// events returns the events vs carry.
func (en *Entity[K, E, B]) events(vs []Env[B]) []E {
	out := make([]E, len(vs))
	for i := range vs {
		out[i] = en.event(&vs[i])
	}
	return out
}

// ruleOf returns the rule of v's event, or the permanent failure of an
// event of no kind of the entity (which no envelope holds).
func (en *Entity[K, E, B]) ruleOf(key K, v *Env[B]) (*EventRule[E], error) {
	if v.Kind < 0 || v.Kind >= len(en.Events) {
		return nil, runtime.Permanent(en.errorf(key, "unknown event of kind %d", v.Kind))
	}
	return &en.Events[v.Kind], nil
}

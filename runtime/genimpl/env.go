package genimpl

import "github.com/ordergen/ordergen/runtime"

// An event travels through a dispatcher's engines as the entity's body B,
// generated per entity, and nothing around it, so that a queued event
// costs the body's size. When the entity's events are small, B is a struct
// with a field per event (and, for an entity of several events, the kind
// of the one it holds), so that an event travels by value, publishing it
// allocates nothing and its handler reads it from the engine's own memory;
// otherwise B is Boxed, the event as the entity's event interface holds it
// with its kind and version, so that a queued event costs its own size,
// not that of the largest (see the generator's bodyLimit). The event's
// kind and version are read from the body (Entity.Kind, Entity.BodyVersion),
// not carried beside it: an envelope of a header and the body cost a
// quarter more memory and copying per queued event. The generated code
// fills bodies and reads them back through the entity's Wrap and Unwrap; a
// handler never sees a body.

// Boxed is the body of an entity whose events travel boxed: the event, and
// its kind and version, which the generic code reads without asking the
// event (BoxedKind, BoxedVersion).
type Boxed[E any] struct {
	Event   E
	Version uint64
	Kind    int
}

// Box is the Box of an entity whose events travel boxed.
func Box[E any](ev E, kind int, version uint64) Boxed[E] {
	return Boxed[E]{Event: ev, Version: version, Kind: kind}
}

// BoxedKind is the Kind of an entity whose events travel boxed.
func BoxedKind[E any](b Boxed[E]) int { return b.Kind }

// BoxedVersion is the BodyVersion of an entity whose events travel boxed.
func BoxedVersion[E any](b Boxed[E]) uint64 { return b.Version }

// UnwrapBoxed is the Unwrap of an entity whose events travel boxed.
func UnwrapBoxed[E any](_ int, b Boxed[E]) E { return b.Event }

// envelope returns ev, an event of the entity, as the engines carry it,
// with its key, or the reason it is refused: an event of no type of the
// entity, a nil pointer, an empty key or a version below 1.
func (en *Entity[K, E, B]) envelope(ev E, textKey bool) (K, B, error) {
	var v B
	kind := -1
	if en.Wrap != nil {
		v, kind = en.Wrap(ev)
	}
	if kind < 0 {
		// A boxed event, a pointer to one, or no event of the entity.
		value, k, ok := en.value(ev)
		if !ok {
			var zero K
			return zero, v, en.nilEvent()
		}
		ev, kind = value, k
		if en.Wrap != nil {
			v, _ = en.Wrap(value)
		}
	}
	key := ev.EventKey()
	var version uint64
	if en.Version != nil {
		version = en.Version(ev)
	}
	if en.Box != nil {
		v = en.Box(ev, kind, version)
	}
	return key, v, en.refuse(kind, key, version, textKey)
}

// kindOf returns the kind of the event v carries (its index in Events).
func (en *Entity[K, E, B]) kindOf(v *B) int {
	if en.Kind == nil {
		return 0 // an entity of one event
	}
	return en.Kind(*v)
}

// versionOf returns the version of the event v carries, 0 for an entity
// without one.
func (en *Entity[K, E, B]) versionOf(v *B) uint64 {
	if en.BodyVersion == nil {
		return 0
	}
	return en.BodyVersion(*v)
}

// event returns the event v carries, as the entity's event interface holds
// it (boxed: for the paths that hand events out, not for handlers).
func (en *Entity[K, E, B]) event(v *B) E { return en.Unwrap(en.kindOf(v), *v) }

// events returns the events vs carry.
func (en *Entity[K, E, B]) events(vs []B) []E {
	out := make([]E, len(vs))
	for i := range vs {
		out[i] = en.event(&vs[i])
	}
	return out
}

// ruleOf returns the rule of v's event, or the permanent failure of an
// event of no kind of the entity (which no envelope holds).
func (en *Entity[K, E, B]) ruleOf(key K, v *B) (*EventRule[E], error) {
	kind := en.kindOf(v)
	if kind < 0 || kind >= len(en.Events) {
		return nil, runtime.Permanent(en.errorf(key, "unknown event of kind %d", kind))
	}
	return &en.Events[kind], nil
}

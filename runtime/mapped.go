package runtime

import "context"

// MapParkStore adapts a store of F events into a store of E events, with the
// conversions to and from F. Generated dispatchers use it to let users plug
// a ParkStore of their entity's event interface into an engine that carries
// an internal representation. The conversions run only when events are
// parked or read back, never on the dispatch path.
func MapParkStore[K comparable, E, F any](store ParkStore[K, F], to func(E) F, from func(F) E) ParkStore[K, E] {
	return mappedParkStore[K, E, F]{store: store, to: to, from: from}
}

// MapDeadLetterSink adapts a sink of F events into a sink of E events with
// the conversion to F, as MapParkStore does for park stores. The conversion
// runs only for events that are dead-lettered.
func MapDeadLetterSink[K comparable, E, F any](sink DeadLetterSink[K, F], to func(E) F) DeadLetterSink[K, E] {
	return func(ctx context.Context, dl DeadLetterEvent[K, E]) error {
		return sink(ctx, DeadLetterEvent[K, F]{Key: dl.Key, Event: to(dl.Event), Err: dl.Err, Attempts: dl.Attempts})
	}
}

type mappedParkStore[K comparable, E, F any] struct {
	store ParkStore[K, F]
	to    func(E) F
	from  func(F) E
}

// MapParkedEvents converts parked events of E into parked events of F with
// to, keeping everything else about each event. Generated dispatchers use it
// to show their internal representation's parked events as the entity's.
func MapParkedEvents[E, F any](events []ParkedEvent[E], to func(E) F) []ParkedEvent[F] {
	converted := make([]ParkedEvent[F], len(events))
	for i, ev := range events {
		converted[i] = ParkedEvent[F]{Event: to(ev.Event), Err: ev.Err, Attempts: ev.Attempts, At: ev.At, Seq: ev.Seq, Tag: ev.Tag}
	}
	return converted
}

func (m mappedParkStore[K, E, F]) Append(ctx context.Context, key K, reason string, events []ParkedEvent[E]) error {
	return m.store.Append(ctx, key, reason, MapParkedEvents(events, m.to))
}

func (m mappedParkStore[K, E, F]) Keys(ctx context.Context) ([]ParkedKey[K], error) {
	return m.store.Keys(ctx)
}

func (m mappedParkStore[K, E, F]) Read(ctx context.Context, key K, after uint64, limit int) ([]ParkedEvent[E], error) {
	events, err := m.store.Read(ctx, key, after, limit)
	if err != nil {
		return nil, err
	}
	return MapParkedEvents(events, m.from), nil
}

func (m mappedParkStore[K, E, F]) Remove(ctx context.Context, key K, seq uint64) error {
	return m.store.Remove(ctx, key, seq)
}

func (m mappedParkStore[K, E, F]) Clear(ctx context.Context, key K) (int, error) {
	return m.store.Clear(ctx, key)
}

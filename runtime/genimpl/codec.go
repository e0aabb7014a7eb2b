package genimpl

import (
	"encoding/json"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Encode is a generated codec's Encode (AccountCodec): the event's name and
// its JSON encoding. A nil e is refused with runtime.ErrInvalidEvent.
func Encode[K comparable, E Event[K], B any](en *Entity[K, E, B], e E) (string, []byte, error) {
	ev, _, ok := en.value(e)
	if !ok {
		return "", nil, fmt.Errorf("%w: nil %s event", runtime.ErrInvalidEvent, en.Name)
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return "", nil, fmt.Errorf("%s: encode %s event %s: %w", en.Package, en.Name, ev.EventName(), err)
	}
	return ev.EventName(), data, nil
}

// Decode is a generated codec's Decode: it rebuilds the event named name
// from its JSON encoding, ignoring the fields it does not know. An unknown
// name gives an error wrapping durable.ErrUnknownEventType, bytes that do
// not decode one wrapping runtime.ErrInvalidEvent.
func Decode[K comparable, E Event[K], B any](en *Entity[K, E, B], name string, data []byte) (E, error) {
	for i := range en.Events {
		if r := &en.Events[i]; r.Name == name {
			ev, err := r.Type.decode(data)
			if err != nil {
				return ev, fmt.Errorf("%w: decode %s event %s: %v", runtime.ErrInvalidEvent, en.Name, name, err)
			}
			return ev, nil
		}
	}
	var zero E
	return zero, fmt.Errorf("%w: entity %s has no event %q", durable.ErrUnknownEventType, en.Name, name)
}

// Codec is the entity's codec for the stores and the inspector that genimpl
// wires (a durable.Codec): Encode and Decode.
type Codec[K comparable, E Event[K], B any] struct{ en *Entity[K, E, B] }

var _ durable.Codec[Event[string]] = Codec[string, Event[string], Boxed[Event[string]]]{}

// Encode implements durable.Codec.
func (c Codec[K, E, B]) Encode(e E) (string, []byte, error) { return Encode(c.en, e) }

// Decode implements durable.Codec.
func (c Codec[K, E, B]) Decode(name string, data []byte) (E, error) { return Decode(c.en, name, data) }

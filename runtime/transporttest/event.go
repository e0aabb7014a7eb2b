package transporttest

import (
	"encoding/json"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Event is the suite's event: the Seq-th event of Key, from 1, as a
// single writer numbers an entity's events.
type Event struct {
	Key string
	Seq int
}

// EventKey returns the event's ordering key.
func (e Event) EventKey() string { return e.Key }

// EventType is the type name Codec gives Event.
const EventType = "transporttest.Event"

// Codec is the durable.Codec of Event: JSON under EventType. A transport
// under test is built with it.
type Codec struct{}

var _ durable.Codec[Event] = Codec{}

// Encode returns EventType and e as JSON.
func (Codec) Encode(e Event) (string, []byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return "", nil, fmt.Errorf("transporttest: encode: %w", err)
	}
	return EventType, data, nil
}

// Decode decodes an Event. An unknown name gives an error wrapping
// durable.ErrUnknownEventType; bytes that are not an Event with a key and a
// Seq from 1, one wrapping runtime.ErrInvalidEvent.
func (Codec) Decode(name string, data []byte) (Event, error) {
	var e Event
	if name != EventType {
		return e, fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, fmt.Errorf("%w: %v", runtime.ErrInvalidEvent, err)
	}
	if e.Key == "" || e.Seq < 1 {
		return e, fmt.Errorf("%w: event %+v has no key or no Seq", runtime.ErrInvalidEvent, e)
	}
	return e, nil
}

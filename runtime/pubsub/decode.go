package pubsub

import (
	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime/transport"
)

// decode turns a message into an event, or into a bad message with its
// reason: its ordering key must be its event's (OrderingKey).
func (c *Consumer[K, E]) decode(m *pubsub.Message) transport.Message[E, *pubsub.Message] {
	km := transport.Message[E, *pubsub.Message]{Key: m.OrderingKey, ID: m.ID, Handle: m, Lease: c.leaseOf(), Trace: traceOf(m.Attributes)}
	km.Event, km.Bad = c.dec.Decode(m.Attributes[transport.HeaderType], m.OrderingKey, m.Data)
	return km
}

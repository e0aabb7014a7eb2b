package pubsub

import (
	"errors"
	"fmt"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/internal/keyed"
)

// decode turns a message into an event, or into a bad message with its
// reason.
func (c *Consumer[K, E]) decode(m *pubsub.Message) keyed.Message[E, *pubsub.Message] {
	km := keyed.Message[E, *pubsub.Message]{Key: m.OrderingKey, ID: m.ID, Handle: m, Lease: c.leaseOf()}
	bad := func(r Reason, err error) keyed.Message[E, *pubsub.Message] {
		km.Bad = &keyed.Bad{Reason: string(r), Err: err}
		return km
	}
	typ, ok := m.Attributes[AttrType]
	if !ok {
		return bad(ReasonMissingType, fmt.Errorf("no %s attribute", AttrType))
	}
	if m.OrderingKey == "" {
		return bad(ReasonMissingKey, errors.New("the message has no ordering key"))
	}
	ev, err := c.cfg.Codec.Decode(typ, m.Data)
	switch {
	case errors.Is(err, durable.ErrUnknownEventType):
		return bad(ReasonUnknownType, err)
	case err != nil:
		return bad(ReasonUndecodable, err)
	}
	want, err := OrderingKey(ev.EventKey())
	if err != nil {
		return bad(ReasonUndecodable, err)
	}
	if want != m.OrderingKey {
		return bad(ReasonKeyMismatch, fmt.Errorf("ordering key %q, event key %q", m.OrderingKey, want))
	}
	km.Event = ev
	return km
}

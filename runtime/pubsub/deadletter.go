package pubsub

import (
	"context"
	"fmt"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// deadLetter is the intake's dead-letter write: the bad message's data and
// attributes, plus the transport's dead-letter attributes and where it came
// from, to the dead-letter topic. The message is acknowledged once Pub/Sub
// took the copy, and given back (nack) if it did not.
func (c *Consumer[K, E]) deadLetter(km transport.Message[E, *pubsub.Message], done func(error)) {
	m := km.Handle
	attrs := make(map[string]string, len(m.Attributes)+5)
	for k, v := range m.Attributes {
		attrs[k] = v
	}
	for _, h := range transport.DeadLetterHeaders(km.Bad.Reason, km.Bad.Err, 0) {
		attrs[h.Key] = h.Value
	}
	attrs[AttrSubscription] = fullName(c.cfg.Client.Project(), "subscriptions", c.cfg.Subscription)
	attrs[AttrMessageID] = m.ID
	attrs[AttrOrderingKey] = m.OrderingKey
	r := c.dl.Publish(context.Background(), &pubsub.Message{Data: m.Data, Attributes: attrs})
	c.writes.Go(func() {
		// Until Run gives up on Pub/Sub (c.calls): then the message is
		// given back, like one whose copy failed.
		_, err := r.Get(c.calls)
		if err != nil {
			err = fmt.Errorf("pubsub: dead letter of message %s to %s: %w", m.ID, c.dl, err)
		}
		done(err)
	})
}

// DeadLetters returns a runtime.DeadLetterSink, for the
// runtime.SendToDeadLetter exhaustion policy, that publishes each event a
// handler gave up on through pub: encoded by codec, with the
// transport.HeaderType attribute, the transport's dead-letter attributes
// (reason transport.ReasonHandlerFailed, the error, the attempts),
// AttrOrderingKey, and no ordering key. It returns once Pub/Sub took it;
// when the publish fails the runtime parks the event instead, so nothing
// is lost.
func DeadLetters[K comparable, E any](pub *pubsub.Publisher, codec durable.Codec[E]) runtime.DeadLetterSink[K, E] {
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, err := message(codec, dl.Key, dl.Event)
		if err != nil {
			return fmt.Errorf("pubsub: dead letter: %w", err)
		}
		for _, h := range transport.DeadLetterHeaders(transport.ReasonHandlerFailed, dl.Err, dl.Attempts) {
			msg.Attributes[h.Key] = h.Value
		}
		msg.Attributes[AttrOrderingKey] = msg.OrderingKey
		msg.OrderingKey = ""
		r := pub.Publish(ctx, msg)
		if _, err := r.Get(ctx); err != nil {
			return fmt.Errorf("pubsub: dead letter of key %s to %s: %w", msg.Attributes[AttrOrderingKey], pub, err)
		}
		return nil
	}
}

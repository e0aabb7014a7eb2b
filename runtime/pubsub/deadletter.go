package pubsub

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/internal/keyed"
)

// deadLetter returns the core's dead-letter write: the bad message's data
// and attributes, plus the reason, to the dead-letter topic. The message is
// acknowledged once Pub/Sub took the copy, and given back (nack) if it did
// not.
func (c *Consumer[K, E]) deadLetter(subName string) func(keyed.Message[E, *pubsub.Message], func(error)) {
	return func(km keyed.Message[E, *pubsub.Message], done func(error)) {
		m := km.Handle
		attrs := make(map[string]string, len(m.Attributes)+5)
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		errText := ""
		if km.Bad.Err != nil {
			errText = km.Bad.Err.Error()
		}
		attrs[AttrReason] = km.Bad.Reason
		attrs[AttrError] = errText
		attrs[AttrSubscription] = subName
		attrs[AttrMessageID] = m.ID
		attrs[AttrOrderingKey] = m.OrderingKey
		r := c.dl.Publish(context.Background(), &pubsub.Message{Data: m.Data, Attributes: attrs})
		c.writes.Go(func() {
			// Until Run gives up on Pub/Sub (c.calls): then the message
			// is given back, like one whose copy failed.
			_, err := r.Get(c.calls)
			if err != nil {
				err = fmt.Errorf("pubsub: dead letter of message %s to %s: %w", m.ID, c.dl, err)
			}
			done(err)
		})
	}
}

// DeadLetters returns a runtime.DeadLetterSink, for the runtime.SendToDeadLetter
// exhaustion policy, that publishes each event a handler gave up on through
// pub: encoded by codec, with the AttrType, AttrReason (ReasonHandlerFailed),
// AttrError, AttrOrderingKey and AttrAttempts attributes and no ordering
// key. It returns once Pub/Sub took it; when the publish fails the runtime
// parks the event instead, so nothing is lost.
func DeadLetters[K comparable, E any](pub *pubsub.Publisher, codec durable.Codec[E]) runtime.DeadLetterSink[K, E] {
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, err := message(codec, dl.Key, dl.Event)
		if err != nil {
			return fmt.Errorf("pubsub: dead letter: %w", err)
		}
		errText := ""
		if dl.Err != nil {
			errText = dl.Err.Error()
		}
		msg.Attributes[AttrReason] = string(ReasonHandlerFailed)
		msg.Attributes[AttrError] = errText
		msg.Attributes[AttrOrderingKey] = msg.OrderingKey
		msg.Attributes[AttrAttempts] = strconv.Itoa(dl.Attempts)
		msg.OrderingKey = ""
		r := pub.Publish(ctx, msg)
		if _, err := r.Get(ctx); err != nil {
			return fmt.Errorf("pubsub: dead letter of key %s to %s: %w", msg.Attributes[AttrOrderingKey], pub, err)
		}
		return nil
	}
}

package pubsub

import (
	"context"
	"fmt"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Producer publishes the events of one entity to a topic: one message per
// event, with the event's key as its ordering key (OrderingKey), the
// codec's encoding as its data and the event type in the AttrType
// attribute. It is a transport.AsyncSink, so a generated AccountProducer
// publishes through it, waiting for each event (Publish methods) or not
// (PublishAsync).
//
// Order and failures: a key's events reach the topic in the order of the
// calls that sent them (the publisher orders by ordering key, which
// NewProducer requires). Once a send of a key fails, the key's later sends
// fail at once with an error wrapping transport.ErrKeyPaused, as the
// Pub/Sub client's own ordering rule has it, until Resume(key), which also
// resumes the key in the publisher (Publisher.ResumePublish). Sends of the
// key already handed to the publisher reach their own outcome (it fails
// them with pubsub.ErrPublishingPaused).
type Producer[K comparable, E any] struct {
	pub  *pubsub.Publisher
	sink *transport.OrderedSink[K, E]
}

var _ transport.AsyncSink[string, any] = (*Producer[string, any])(nil)

// NewProducer returns a producer that publishes through pub. It refuses,
// with an error wrapping ErrInvalidConfig, a publisher without
// EnableMessageOrdering (a key's messages could be delivered out of order)
// and a key type that is neither a string nor an integer. The caller stops
// pub (Publisher.Stop) after Close.
func NewProducer[K comparable, E any](pub *pubsub.Publisher, codec durable.Codec[E]) (*Producer[K, E], error) {
	switch {
	case pub == nil:
		return nil, fmt.Errorf("%w: nil publisher", ErrInvalidConfig)
	case codec == nil:
		return nil, fmt.Errorf("%w: no codec", ErrInvalidConfig)
	case !pub.EnableMessageOrdering:
		return nil, fmt.Errorf("%w: the publisher does not enable message ordering: a key's events could be delivered out of order", ErrInvalidConfig)
	}
	var zero K
	if _, err := durable.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	sink, err := transport.NewOrderedSink[K, E](&writer[K, E]{pub: pub, codec: codec})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Producer[K, E]{pub: pub, sink: sink}, nil
}

// Send publishes event with key's ordering key and returns once Pub/Sub
// took it, or the reason it did not.
func (p *Producer[K, E]) Send(ctx context.Context, key K, event E) error {
	return p.sink.Send(ctx, key, event)
}

// SendAsync publishes event and calls done once with Pub/Sub's answer,
// without waiting for it. done runs on a goroutine of its own per message:
// it must be fast.
func (p *Producer[K, E]) SendAsync(ctx context.Context, key K, event E, done func(error)) {
	p.sink.SendAsync(ctx, key, event, done)
}

// Resume lets key's sends through again after a failed send paused it, in
// the producer and in the publisher.
func (p *Producer[K, E]) Resume(key K) {
	if ok, err := OrderingKey(key); err == nil {
		p.pub.ResumePublish(ok) // first: a send the sink lets through must not meet a paused publisher
	}
	p.sink.Resume(key)
}

// Paused returns the keys paused by a failed send, with the failure.
func (p *Producer[K, E]) Paused() map[K]error { return p.sink.Paused() }

// Flush publishes what the publisher bundles at once and waits until every
// send handed over has been answered, or ctx ends.
func (p *Producer[K, E]) Flush(ctx context.Context) error { return p.sink.Flush(ctx) }

// Close stops accepting sends (they fail with runtime.ErrClosed) and waits
// for those in flight. It does not stop the publisher.
func (p *Producer[K, E]) Close(ctx context.Context) error { return p.sink.Close(ctx) }

// writer is the Pub/Sub publish an OrderedSink drives.
type writer[K comparable, E any] struct {
	pub   *pubsub.Publisher
	codec durable.Codec[E]
}

func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	msg, err := message(w.codec, key, event)
	if err != nil {
		done(err)
		return
	}
	r := w.pub.Publish(ctx, msg)
	go func() {
		<-r.Ready()
		_, err := r.Get(context.Background())
		done(publishError(msg, err))
	}()
}

// WriteSync publishes one message and waits for Pub/Sub's answer, even
// when ctx ends first (the publisher may still send it).
func (w *writer[K, E]) WriteSync(ctx context.Context, key K, event E) error {
	msg, err := message(w.codec, key, event)
	if err != nil {
		return err
	}
	r := w.pub.Publish(ctx, msg)
	<-r.Ready()
	_, err = r.Get(context.Background())
	return publishError(msg, err)
}

// Flush publishes the bundled messages and waits for them, or for ctx.
func (w *writer[K, E]) Flush(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		w.pub.Flush()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// message returns the Pub/Sub message of event.
func message[K comparable, E any](codec durable.Codec[E], key K, event E) (*pubsub.Message, error) {
	ok, err := OrderingKey(key)
	if err != nil {
		return nil, err
	}
	name, data, err := codec.Encode(event)
	if err != nil {
		return nil, fmt.Errorf("pubsub: encode an event of key %s: %w", ok, err)
	}
	return &pubsub.Message{Data: data, OrderingKey: ok, Attributes: map[string]string{AttrType: name}}, nil
}

// publishError says which message err is about; nil stays nil.
func publishError(m *pubsub.Message, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pubsub: publish %s of key %s: %w", m.Attributes[AttrType], m.OrderingKey, err)
}

package pubsub

import (
	"context"
	"fmt"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Producer publishes the events of one entity to a topic: one message per
// event, with the event's key as its ordering key (OrderingKey), the
// codec's encoding as its data and the event type in the
// transport.HeaderType attribute. It is a transport.AsyncSink, so a
// generated AccountProducer publishes through it, waiting for each event
// (Publish methods) or not (PublishAsync).
//
// Order and failures: a key's events reach the topic in the order of the
// calls that sent them (the publisher orders by ordering key, which
// NewProducer requires). Once a send of a key fails, the key's later sends
// fail at once with an error wrapping transport.ErrKeyPaused, as the
// Pub/Sub client's own ordering rule has it, until Resume(key), which also
// resumes the key in the publisher (Publisher.ResumePublish). Sends of the
// key already handed to the publisher reach their own outcome (it fails
// them with pubsub.ErrPublishingPaused).
//
// Its methods (Send, SendAsync, Resume, Paused, Flush, Close) are its
// transport.OrderedSink's. SendAsync's done runs on a goroutine of its own
// per message: it must be fast. Flush publishes what the publisher bundles
// at once. Close stops accepting sends (they fail with runtime.ErrClosed),
// waits for those in flight, and stops the publisher if the producer made
// it.
type Producer[K comparable, E any] struct {
	*transport.OrderedSink[K, E]
}

// ProducerConfig configures a Producer of the events E of one entity.
type ProducerConfig[E any] struct {
	// Client is the Pub/Sub client, as the consumer's Config.Client: the
	// producer makes a publisher of Topic on it, with message ordering,
	// which Close stops. Leave it nil with Publisher.
	Client *pubsub.Client
	// Topic is the topic's ID or full name ("projects/P/topics/T").
	Topic string
	// Publisher is a publisher the caller made (with EnableMessageOrdering)
	// and stops, used instead of Client and Topic.
	Publisher *pubsub.Publisher
	// Codec encodes the events. Required; ordergen generates one per
	// entity (AccountCodec).
	Codec durable.Codec[E]
}

// NewProducer returns a producer for cfg. It refuses, with an error
// wrapping runtime.ErrInvalidConfig, neither a Client and a Topic nor a
// Publisher (or both), a Publisher without EnableMessageOrdering (a key's
// messages could be delivered out of order) and a key type that is
// neither a string nor an integer.
func NewProducer[K comparable, E any](cfg ProducerConfig[E]) (*Producer[K, E], error) {
	pub, owned := cfg.Publisher, false
	switch {
	case cfg.Codec == nil:
		return nil, fmt.Errorf("pubsub: %w: no codec", runtime.ErrInvalidConfig)
	case (pub == nil) == (cfg.Client == nil || cfg.Topic == ""):
		return nil, fmt.Errorf("pubsub: %w: give the producer a Client and a Topic, or a Publisher", runtime.ErrInvalidConfig)
	case pub != nil && !pub.EnableMessageOrdering:
		return nil, fmt.Errorf("pubsub: %w: the publisher does not enable message ordering: a key's events could be delivered out of order", runtime.ErrInvalidConfig)
	}
	if _, err := OrderingKey(*new(K)); err != nil {
		return nil, fmt.Errorf("pubsub: %w", err)
	}
	if pub == nil {
		pub, owned = cfg.Client.Publisher(fullName(cfg.Client.Project(), "topics", cfg.Topic)), true
		pub.EnableMessageOrdering = true
	}
	sink, err := transport.NewOrderedSink[K, E](&writer[K, E]{pub: pub, codec: cfg.Codec, owned: owned})
	if err != nil {
		return nil, err
	}
	return &Producer[K, E]{sink}, nil
}

// writer is the Pub/Sub publish an OrderedSink drives.
type writer[K comparable, E any] struct {
	pub   *pubsub.Publisher
	codec durable.Codec[E]
	owned bool // the producer made pub: Close stops it
}

// Resume resumes key in the publisher, which paused it after the failure.
func (w *writer[K, E]) Resume(key K) {
	if ok, err := OrderingKey(key); err == nil {
		w.pub.ResumePublish(ok)
	}
}

// Close stops the publisher if the producer made it.
func (w *writer[K, E]) Close(context.Context) error {
	if w.owned {
		w.pub.Stop()
	}
	return nil
}

func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	msg, err := message(w.codec, key, event)
	if err != nil {
		done(err)
		return
	}
	addTrace(msg.Attributes, transport.TraceOf(ctx))
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
	addTrace(msg.Attributes, transport.TraceOf(ctx))
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
	return &pubsub.Message{Data: data, OrderingKey: ok, Attributes: map[string]string{transport.HeaderType: name}}, nil
}

// publishError says which message err is about; nil stays nil.
func publishError(m *pubsub.Message, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pubsub: publish %s of key %s: %w", m.Attributes[transport.HeaderType], m.OrderingKey, err)
}

package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Producer writes the events of one entity to a topic: one record per
// event, keyed by durable.EncodeKey of its ordering key, valued by the
// codec's encoding, with the event type in the HeaderType header. It is a
// transport.AsyncSink, so a generated AccountProducer publishes through it,
// waiting for each event (Publish methods) or not (PublishAsync).
//
// Partitioning: a record's partition is murmur2 of its key, with the high
// bit masked, modulo the topic's partition count: the Java client's
// default for keyed records, so that Java, franz-go and ordergen producers
// put a key in the same partition. The client decides it (franz-go's
// default partitioner does exactly this); NewProducer refuses a client
// whose partitioner places keyed records otherwise (round robin, sticky,
// another hash) or not consistently (only among the partitions that are
// writable at the moment), which would break per-key order silently.
// Adding partitions to a topic remaps keys: a key's later records go to
// another partition than its earlier ones, and the two may be consumed out
// of order. Create a topic with the partitions it will need, or drain it
// first.
//
// Order and failures: a key's events reach the topic in the order of the
// calls that sent them, since the client's idempotent writes (which
// NewProducer requires) keep retries from reordering or doubling them.
// Once a send of a key fails, the key's later sends fail at once with an
// error wrapping transport.ErrKeyPaused until Resume(key); sends of the key
// already handed to the client reach their own outcome (franz-go fails the
// records buffered behind a failed one in its partition with it).
type Producer[K comparable, E any] struct {
	sink *transport.OrderedSink[K, E]
}

var _ transport.AsyncSink[string, any] = (*Producer[string, any])(nil)

// NewProducer returns a producer that writes to topic through cl. It
// refuses, with an error wrapping ErrInvalidConfig, a client with idempotent
// writes disabled, a client whose partitioner does not place keyed records
// by murmur2 like the Java client's, and a key type that is neither a
// string nor an integer.
func NewProducer[K comparable, E any](cl *kgo.Client, topic string, codec durable.Codec[E]) (*Producer[K, E], error) {
	switch {
	case cl == nil:
		return nil, fmt.Errorf("%w: nil client", ErrInvalidConfig)
	case topic == "":
		return nil, fmt.Errorf("%w: no topic", ErrInvalidConfig)
	case codec == nil:
		return nil, fmt.Errorf("%w: no codec", ErrInvalidConfig)
	}
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		return nil, fmt.Errorf("%w: the client disables idempotent writes: retries could reorder a key's events", ErrInvalidConfig)
	}
	if err := checkPartitioner(cl, topic); err != nil {
		return nil, err
	}
	var zero K
	if _, err := durable.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	w := &writer[K, E]{cl: cl, topic: topic, codec: codec}
	sink, err := transport.NewOrderedSink[K, E](w)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Producer[K, E]{sink: sink}, nil
}

// Send writes event as a record keyed by key and returns once the cluster
// acknowledged it, or the reason it did not.
func (p *Producer[K, E]) Send(ctx context.Context, key K, event E) error {
	return p.sink.Send(ctx, key, event)
}

// SendAsync writes event as a record keyed by key and calls done once
// with the cluster's answer, without waiting for it. done runs on the
// client's promise goroutine: it must be fast and must not block (nor
// produce synchronously through the same client).
func (p *Producer[K, E]) SendAsync(ctx context.Context, key K, event E, done func(error)) {
	p.sink.SendAsync(ctx, key, event, done)
}

// Resume lets key's sends through again after a failed send paused it.
func (p *Producer[K, E]) Resume(key K) { p.sink.Resume(key) }

// Paused returns the keys paused by a failed send, with the failure.
func (p *Producer[K, E]) Paused() map[K]error { return p.sink.Paused() }

// Flush sends the records the client lingers on at once and waits until
// every send handed over has been answered, or ctx ends. It flushes the
// whole client (kgo.Client.Flush), so it also waits for what other
// producers on the client buffered.
func (p *Producer[K, E]) Flush(ctx context.Context) error { return p.sink.Flush(ctx) }

// Close stops accepting sends (they fail with runtime.ErrClosed) and waits
// for those in flight. It does not close the client.
func (p *Producer[K, E]) Close(ctx context.Context) error { return p.sink.Close(ctx) }

// writer is the Kafka write an OrderedSink drives.
type writer[K comparable, E any] struct {
	cl    *kgo.Client
	topic string
	codec durable.Codec[E]
}

func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	sr := new(sending)
	if err := w.fill(&sr.rec, key, event); err != nil {
		done(err)
		return
	}
	sr.ctx = sendContext{Context: ctx, done: done}
	sr.rec.Context = &sr.ctx
	w.cl.Produce(ctx, &sr.rec, answer)
}

// sending is a record and what its promise needs, allocated together.
type sending struct {
	rec kgo.Record
	ctx sendContext
}

// sendContext is the record's context (franz-go cancels a record whose
// context ends before it is sent), carrying the sender's callback, so that
// one promise serves every record.
type sendContext struct {
	context.Context
	done func(error)
}

// answer is the promise of every record Write produces.
func answer(r *kgo.Record, err error) {
	r.Context.(*sendContext).done(sendError(r, err))
}

// Flush sends the records the client lingers on and waits for every
// record buffered in it (its other producers' included).
func (w *writer[K, E]) Flush(ctx context.Context) error { return w.cl.Flush(ctx) }

// WriteSync writes one record and waits: the client sends it at once
// instead of lingering for more.
func (w *writer[K, E]) WriteSync(ctx context.Context, key K, event E) error {
	r := new(kgo.Record)
	if err := w.fill(r, key, event); err != nil {
		return err
	}
	return sendError(r, w.cl.ProduceSync(ctx, r).FirstErr())
}

// fill makes r the record of event.
func (w *writer[K, E]) fill(r *kgo.Record, key K, event E) error {
	k, err := durable.EncodeKey(key)
	if err != nil {
		return err
	}
	name, data, err := w.codec.Encode(event)
	if err != nil {
		return fmt.Errorf("kafka: encode an event of key %s: %w", k, err)
	}
	r.Topic, r.Key, r.Value = w.topic, []byte(k), data
	r.Headers = []kgo.RecordHeader{{Key: HeaderType, Value: []byte(name)}}
	return nil
}

// sendError says which record err is about; nil stays nil.
func sendError(r *kgo.Record, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("kafka: send %s of key %s to %s: %w", r.Headers[0].Value, r.Key, r.Topic, err)
}

package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Producer writes the events of one entity to a topic: one record per
// event, keyed by the text of its ordering key (transport.KeyText), valued
// by the codec's encoding, with the event type in the transport.HeaderType
// header. It is a transport.AsyncSink, so a generated AccountProducer
// publishes through it, waiting for each event (Publish methods) or not
// (PublishAsync).
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
//
// Its methods (Send, SendAsync, Resume, Paused, Flush, Close) are its
// transport.OrderedSink's. SendAsync's done runs on the client's promise
// goroutine: it must be fast and must not block (nor produce
// synchronously through the same client). Flush flushes the whole client
// (kgo.Client.Flush), so it also waits for what other producers on a
// shared client buffered. Close stops accepting sends (they fail with
// runtime.ErrClosed), waits for those in flight, and closes the client if
// the producer made it.
type Producer[K comparable, E any] struct {
	*transport.OrderedSink[K, E]
}

// ProducerConfig configures a Producer of the events E of one entity.
type ProducerConfig[E any] struct {
	// ClientOpts reach the cluster, as the consumer's Config.ClientOpts
	// do (SeedBrokers, TLS, SASL, ...): the producer makes a client of its
	// own, which Close closes. Leave it empty with Client.
	ClientOpts []kgo.Opt
	// Client is a client the caller made and closes, used instead of one
	// made from ClientOpts (one client for several producers, say).
	Client *kgo.Client
	// Topic is the topic to write to. Required.
	Topic string
	// Codec encodes the events. Required; ordergen generates one per
	// entity (AccountCodec).
	Codec durable.Codec[E]
}

// NewProducer returns a producer for cfg. It refuses, with an error
// wrapping runtime.ErrInvalidConfig, a client with idempotent writes
// disabled, a client whose partitioner does not place keyed records by
// murmur2 like the Java client's, both ClientOpts and Client or neither,
// and a key type that is neither a string nor an integer.
func NewProducer[K comparable, E any](cfg ProducerConfig[E]) (*Producer[K, E], error) {
	switch {
	case cfg.Topic == "":
		return nil, fmt.Errorf("kafka: %w: no Topic", runtime.ErrInvalidConfig)
	case cfg.Codec == nil:
		return nil, fmt.Errorf("kafka: %w: no Codec", runtime.ErrInvalidConfig)
	case (cfg.Client == nil) == (len(cfg.ClientOpts) == 0):
		return nil, fmt.Errorf("kafka: %w: give the producer ClientOpts or a Client (one of them)", runtime.ErrInvalidConfig)
	}
	if _, err := transport.KeyText(*new(K)); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	cl, owned := cfg.Client, false
	if cl == nil {
		var err error
		if cl, err = kgo.NewClient(cfg.ClientOpts...); err != nil {
			return nil, fmt.Errorf("kafka: producer client: %w", err)
		}
		owned = true
	}
	w := &writer[K, E]{cl: cl, topic: cfg.Topic, codec: cfg.Codec, owned: owned}
	err := checkClient(cl, cfg.Topic)
	var sink *transport.OrderedSink[K, E]
	if err == nil {
		sink, err = transport.NewOrderedSink[K, E](w)
	}
	if err != nil {
		if owned {
			cl.Close()
		}
		return nil, err
	}
	return &Producer[K, E]{sink}, nil
}

// checkClient refuses a client whose writes could reorder a key's events.
func checkClient(cl *kgo.Client, topic string) error {
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		return fmt.Errorf("kafka: %w: the client disables idempotent writes: retries could reorder a key's events", runtime.ErrInvalidConfig)
	}
	return checkPartitioner(cl, topic)
}

// writer is the Kafka write an OrderedSink drives.
type writer[K comparable, E any] struct {
	cl    *kgo.Client
	topic string
	codec durable.Codec[E]
	owned bool // the producer made cl: Close closes it
}

// Close closes the client if the producer made it.
func (w *writer[K, E]) Close(context.Context) error {
	if w.owned {
		w.cl.Close()
	}
	return nil
}

func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	sr := new(sending)
	if err := w.fill(&sr.rec, key, event); err != nil {
		done(err)
		return
	}
	sr.rec.Headers = appendTrace(sr.rec.Headers, transport.TraceOf(ctx))
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
	r.Headers = appendTrace(r.Headers, transport.TraceOf(ctx))
	return sendError(r, w.cl.ProduceSync(ctx, r).FirstErr())
}

// fill makes r the record of event.
func (w *writer[K, E]) fill(r *kgo.Record, key K, event E) error {
	k, err := transport.KeyText(key)
	if err != nil {
		return err
	}
	name, data, err := w.codec.Encode(event)
	if err != nil {
		return fmt.Errorf("kafka: encode an event of key %s: %w", k, err)
	}
	r.Topic, r.Key, r.Value = w.topic, []byte(k), data
	r.Headers = []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(name)}}
	return nil
}

// sendError says which record err is about; nil stays nil.
func sendError(r *kgo.Record, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("kafka: send %s of key %s to %s: %w", r.Headers[0].Value, r.Key, r.Topic, err)
}

package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
)

// Producer writes the events of one entity to a topic: one record per
// event, keyed by runtime.EncodeKey of its ordering key (so the client's
// key partitioner, franz-go's default, puts all events of a key in one
// partition), valued by the codec's encoding, with the event type in the
// HeaderType header. It implements runtime.Sink, so a generated
// AccountProducer publishes through it.
//
// The client's idempotent writes must stay on (franz-go's default): a
// retried batch then never lands twice or out of order, so the events one
// goroutine sends for a key are in the log in that order.
type Producer[K comparable, E any] struct {
	cl    *kgo.Client
	topic string
	codec runtime.Codec[E]
}

var _ runtime.Sink[string, any] = (*Producer[string, any])(nil)

// NewProducer returns a producer that writes to topic through cl. It
// refuses a client with idempotent writes disabled, and a key type that is
// neither a string nor an integer.
func NewProducer[K comparable, E any](cl *kgo.Client, topic string, codec runtime.Codec[E]) (*Producer[K, E], error) {
	switch {
	case cl == nil:
		return nil, fmt.Errorf("%w: nil client", ErrConfig)
	case topic == "":
		return nil, fmt.Errorf("%w: no topic", ErrConfig)
	case codec == nil:
		return nil, fmt.Errorf("%w: no codec", ErrConfig)
	}
	if off, _ := cl.OptValue(kgo.DisableIdempotentWrite).(bool); off {
		return nil, fmt.Errorf("%w: the client disables idempotent writes: retries could reorder a key's events", ErrConfig)
	}
	var zero K
	if _, err := runtime.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return &Producer[K, E]{cl: cl, topic: topic, codec: codec}, nil
}

// Send writes event as a record keyed by key and returns once the cluster
// acknowledged it, or the reason it did not.
func (p *Producer[K, E]) Send(ctx context.Context, key K, event E) error {
	k, err := runtime.EncodeKey(key)
	if err != nil {
		return err
	}
	name, data, err := p.codec.Encode(event)
	if err != nil {
		return err
	}
	r := &kgo.Record{Topic: p.topic, Key: []byte(k), Value: data, Headers: []kgo.RecordHeader{{Key: HeaderType, Value: []byte(name)}}}
	if err := p.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("kafka: send %s of key %s to %s: %w", name, k, p.topic, err)
	}
	return nil
}

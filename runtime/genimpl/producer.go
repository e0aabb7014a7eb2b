package genimpl

import (
	"context"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Sink is what a generated producer sends to: a transport.Sink, such as
// the Kafka producer of github.com/ordergen/ordergen/runtime/kafka.
type Sink[K comparable, E any] = transport.Sink[K, E]

// Producer is the generic part of a generated producer (AccountProducer
// embeds one): it publishes an entity's events to a Sink, keyed by their
// key, and refuses what a dispatcher's Publish refuses. Consumers in other
// processes feed the events to their dispatcher with SubmitTagged.
type Producer[K comparable, E Event[K], B any] struct {
	en      *Entity[K, E, B]
	sink    Sink[K, E]
	textKey bool
}

// NewProducer returns a producer of en's events that sends to sink, a
// generated NewAccountProducer; a nil sink is refused with
// runtime.ErrInvalidConfig.
func NewProducer[K comparable, E Event[K], B any](en *Entity[K, E, B], sink Sink[K, E]) (*Producer[K, E, B], error) {
	if sink == nil {
		return nil, fmt.Errorf("%w: %sProducer needs a sink", runtime.ErrInvalidConfig, en.Name)
	}
	return &Producer[K, E, B]{en: en, sink: sink, textKey: stringKey[K]()}, nil
}

// Publish sends any event of the entity (or a pointer to one) to the sink,
// keyed by its key, and returns once the sink took it. It refuses, with an
// error wrapping runtime.ErrInvalidEvent, a nil event, an event with an
// empty key or a version below 1.
func (p *Producer[K, E, B]) Publish(ctx context.Context, e E) error {
	ev, err := p.en.check(e, p.textKey)
	if err != nil {
		return err
	}
	return p.sink.Send(ctx, ev.EventKey(), ev)
}

// PublishAsync sends e to the sink without waiting for the broker when the
// sink is a transport.AsyncSink (the Kafka producer is), and calls done
// once with the answer, perhaps before it returns; with another sink it
// sends synchronously, then calls done (transport.SendKeyed). A key's
// events keep the order of the calls, and after a send of a key fails, the
// key's later sends fail with transport.ErrKeyPaused until the sink's
// Resume. It refuses, through done, what Publish refuses. done runs on the
// transport's goroutine: it must be fast and must not block; nil means the
// answer is not wanted.
func (p *Producer[K, E, B]) PublishAsync(ctx context.Context, e E, done func(error)) {
	ev, err := p.en.check(e, p.textKey)
	transport.SendKeyed(ctx, p.sink, ev, err, done)
}

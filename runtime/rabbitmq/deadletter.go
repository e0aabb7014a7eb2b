package rabbitmq

import (
	"context"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// DeadLetters returns a runtime.DeadLetterSink, for the
// runtime.SendToDeadLetter exhaustion policy, that publishes each event a
// handler gave up on to topo's dead-letter exchange through conn: the
// message a Producer would publish (body, Type, transport.HeaderKey), plus
// the transport's dead-letter headers (reason
// transport.ReasonHandlerFailed, the error, the attempts). It returns once
// the broker confirmed it; when the publish fails the runtime parks the
// event instead, so nothing is lost. It declares topo first, and refuses
// what NewProducer refuses of a Conn. It publishes on a channel of its
// own, which closes with conn.
func DeadLetters[K comparable, E any](conn *amqp.Connection, topo Topology, codec durable.Codec[E]) (runtime.DeadLetterSink[K, E], error) {
	if conn == nil {
		return nil, fmt.Errorf("rabbitmq: %w: nil connection", runtime.ErrInvalidConfig)
	}
	pub, topo, err := newPublisher[K](ProducerConfig[E]{Conn: conn, Topology: topo, Codec: codec})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, _, _, err := encode(topo, codec, dl.Key, dl.Event)
		if err != nil {
			return fmt.Errorf("rabbitmq: dead letter: %w", err)
		}
		for _, h := range transport.DeadLetterHeaders(transport.ReasonHandlerFailed, dl.Err, dl.Attempts) {
			msg.Headers[h.Key] = h.Value
		}
		ch := make(chan error, 1)
		pub.publish(ctx, topo.DeadLetterExchange(), "", msg, nil, func(err error) { ch <- err })
		select {
		case err = <-ch:
		case <-ctx.Done():
			return fmt.Errorf("rabbitmq: dead letter of key %v: %w", dl.Key, ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("rabbitmq: dead letter of key %v to %s: %w", dl.Key, topo.DeadLetterExchange(), err)
		}
		return nil
	}, nil
}

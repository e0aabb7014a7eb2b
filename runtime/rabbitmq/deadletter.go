package rabbitmq

import (
	"context"
	"fmt"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// DeadLetters returns a runtime.DeadLetterSink, for the runtime.SendToDeadLetter
// exhaustion policy, that publishes each event a handler gave up on to
// topo's dead-letter exchange through conn: the message a Producer would
// publish (body, Type, HeaderKey), plus HeaderReason (ReasonHandlerFailed),
// HeaderError and HeaderAttempts. It returns once the broker confirmed
// it; when the publish fails the runtime parks the event instead, so
// nothing is lost. It declares topo first, and refuses what NewProducer
// refuses. It publishes on a channel of its own, which closes with conn.
func DeadLetters[K comparable, E any](conn *amqp.Connection, topo Topology, codec durable.Codec[E]) (runtime.DeadLetterSink[K, E], error) {
	switch {
	case conn == nil:
		return nil, fmt.Errorf("%w: nil connection", ErrInvalidConfig)
	case conn.IsRecoveryEnabled():
		return nil, fmt.Errorf("%w: the connection recovers automatically: a recovered channel would renumber the publisher confirms", ErrInvalidConfig)
	case codec == nil:
		return nil, fmt.Errorf("%w: no codec", ErrInvalidConfig)
	}
	topo, err := topo.withDefaults()
	if err != nil {
		return nil, err
	}
	var zero K
	if _, err := durable.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	pub := &publisher{conn: conn}
	if err := pub.declare(topo); err != nil {
		return nil, err
	}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, _, _, err := encode(topo, codec, dl.Key, dl.Event)
		if err != nil {
			return fmt.Errorf("rabbitmq: dead letter: %w", err)
		}
		errText := ""
		if dl.Err != nil {
			errText = dl.Err.Error()
		}
		msg.Headers[HeaderReason] = string(ReasonHandlerFailed)
		msg.Headers[HeaderError] = errText
		msg.Headers[HeaderAttempts] = strconv.Itoa(dl.Attempts)
		ch := make(chan error, 1)
		pub.publish(ctx, topo.DeadLetterExchange(), "", msg, func(err error) { ch <- err })
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

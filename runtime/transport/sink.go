package transport

import "context"

// Sink carries the events of one entity out of the process, keyed by their
// ordering key: to a log such as Kafka (runtime/kafka's Producer), whose
// consumers run lanes again. Generated producers (AccountProducer) publish
// through a Sink, so generated code never imports a transport.
//
// Send returns once the event is durably handed over, or the reason it was
// not. Events sent by one goroutine for one key must reach the other side in
// that order.
type Sink[K comparable, E any] interface {
	Send(ctx context.Context, key K, event E) error
}

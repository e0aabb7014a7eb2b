// Package rabbitmq is for services on RabbitMQ: it carries ordergen events
// across processes with github.com/rabbitmq/amqp091-go: a Producer that
// publishes each event routed by its ordering key to one of a Topology's
// queues, and a Consumer that consumes those queues, each with a single
// active consumer, and feeds each queue's messages to per-key lanes, so
// that within a queue different keys run in parallel while each key keeps
// its order.
//
//	topo := rabbitmq.Topology{Name: "accounts", Queues: 8}
//	sink, _ := rabbitmq.NewProducer[string, ledger.AccountEvent](rabbitmq.ProducerConfig[ledger.AccountEvent]{
//		URL: url, Topology: topo, Codec: ledger.AccountCodec{},
//	})
//	c, _ := rabbitmq.NewConsumer[string, ledger.AccountEvent](rabbitmq.Config[ledger.AccountEvent]{
//		URL: url, Topology: topo, Codec: ledger.AccountCodec{},
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	err := c.Run(ctx, d) // c.Close(ctx) drains, acknowledges and closes
//
// It is built on the transport kit (runtime/transport): the Producer is a
// transport.OrderedSink, the Consumer a transport.UnitConsumer whose units
// are the queues. Messages are acknowledged as each finishes (multiple
// acks only over finished runs), unfinished ones go back in order when
// their channel closes, bad ones are rejected to the topology's
// dead-letter exchange. docs/brokers/rabbitmq.md in the repository covers
// the topology and its routing (changing Queues remaps keys),
// acknowledgements, closing, crashes and lost connections, dead letters,
// parked keys and the broker's consumer_timeout, and metrics.
package rabbitmq

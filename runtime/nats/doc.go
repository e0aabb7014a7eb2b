// Package nats is for services on NATS JetStream: a Producer that
// publishes each event on its key's subject, which the server maps to one
// of a Topology's partitions, and a Consumer that pulls the partitions,
// one pinned client per partition at a time, and feeds each partition's
// messages to per-key lanes: different keys run in parallel while each
// key keeps its order, across a change of hands too.
//
//	topo := nats.Topology{Name: "accounts", Partitions: 8}
//	sink, _ := nats.NewProducer[string, ledger.AccountEvent](nats.ProducerConfig[ledger.AccountEvent]{
//		URL: url, Topology: topo, Codec: ledger.AccountCodec{},
//	})
//	c, _ := nats.NewConsumer[string, ledger.AccountEvent](nats.Config[ledger.AccountEvent]{
//		URL: url, Topology: topo, Codec: ledger.AccountCodec{},
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	err := c.Run(ctx, d) // c.Close(ctx) drains, acknowledges and closes
//
// It is built on the transport kit only (runtime/transport).
// docs/brokers/nats.md in the repository covers the topology, leases,
// the gate that keeps order when a partition changes hands, dead letters
// and the producer.
package nats

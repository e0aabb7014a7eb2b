// Package kafka is for services on Kafka: it carries ordergen events across
// processes with github.com/twmb/franz-go: a Producer that writes each event
// keyed by its ordering key, and a Consumer that runs a consumer group and
// feeds each partition's records to per-key lanes, so that within a
// partition different keys run in parallel while each key keeps its order.
//
//	sink, _ := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{
//		ClientOpts: []kgo.Opt{kgo.SeedBrokers(brokers...)}, Topic: "accounts", Codec: ledger.AccountCodec{},
//	})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//
//	c, _ := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
//		ClientOpts: []kgo.Opt{kgo.SeedBrokers(brokers...)}, Group: "ledger", Topics: []string{"accounts"},
//		Codec: ledger.AccountCodec{}, DeadLetterTopic: "accounts.dlt",
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	err = c.Run(ctx, d) // c.Close(ctx) drains, commits and leaves the group
//
// It is built on the transport kit (runtime/transport): the Producer is a
// transport.OrderedSink, and each partition the Consumer owns is a stream of
// a transport.StreamIntake. A partition is committed at its lowest
// unfinished offset, with the finished offsets above it in the commit
// metadata; on revoke its records that have not started are withdrawn and
// the running ones drained before the commit; a bad record goes to the
// dead-letter topic and its partition goes on. docs/brokers/kafka.md in the
// repository covers partitioning, commits and their metadata's format,
// ownership and fencing, stopping, backpressure, parked keys and paused
// partitions, metrics, dead letters, records without a key, and a
// comparison with Confluent's Parallel Consumer.
package kafka

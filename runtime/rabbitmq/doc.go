// Package rabbitmq is for services on RabbitMQ: it carries ordergen events
// across processes with github.com/rabbitmq/amqp091-go: a Producer that
// publishes each event routed by its ordering key to one of a Topology's
// queues, and a Consumer that consumes those queues, each with a single
// active consumer, and feeds each queue's messages to per-key lanes, so
// that within a queue different keys run in parallel while each key keeps
// its order.
//
// It implements the runtime's transport contract (runtime/transport): the
// Producer is a transport.AsyncSink built on transport.OrderedSink, the
// Consumer settles its messages through a transport.Source, and both pass
// the conformance suite (runtime/transporttest) against a real server.
// Code that ordergen generates never imports this package: a generated
// AccountProducer publishes to any transport.Sink, and a generated
// AccountDispatcher is a transport.Target.
//
// # Topology
//
// A queue delivers in order, to one consumer at a time when it is
// declared with x-single-active-consumer: the others subscribed to it
// stand by and take over, in order, when it goes. That is RabbitMQ's unit
// of order, as a partition is Kafka's. A Topology spreads keys over Queues
// such queues (Name.0, Name.1, ...), so that one key's messages always go
// to one queue:
//
//   - ConsistentHash (the default): producers publish to the exchange Name,
//     of type x-consistent-hash (the rabbitmq_consistent_hash_exchange
//     plugin, which ships with RabbitMQ: rabbitmq-plugins enable
//     rabbitmq_consistent_hash_exchange), with the key as routing key; the
//     exchange hashes it onto the queues, bound with weight 1 each.
//   - PublisherHash: the producer picks the queue, Topology.QueueOf (jump
//     consistent hash of the key's FNV-1a 64-bit hash), and publishes to it
//     through the default exchange: no plugin needed.
//
// Every queue dead-letters to the fanout exchange Name.dlx, bound to the
// queue Name.dlq. Topology.Declare declares all of it; producers and
// consumers declare it when they start (and a consumer declares its queue
// again each time it subscribes), so the dead-letter exchange is always
// there for the messages the consumer rejects.
//
// Changing Queues remaps keys. With either routing, some keys move to
// another queue; their messages published after the change can be
// consumed before the ones still waiting in their old queue. To change it,
// stop the producers, let the consumers drain every queue, change Queues
// everywhere, then start again. (The consistent hash and the jump hash
// move few keys, about one in Queues+1 when one queue is added, but every
// moved key is exposed.)
//
// # Producing
//
//	conn, _ := amqp.Dial(url)
//	topo := rabbitmq.Topology{Name: "accounts", Queues: 8}
//	sink, _ := rabbitmq.NewProducer[string, ledger.AccountEvent](conn, topo, ledger.AccountCodec{})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//
// A message's body is the codec's encoding of the event, its Type property
// the event type, its HeaderKey header the key (durable.EncodeKey), its
// delivery mode persistent (unless the topology is Transient). Every
// publish is mandatory and confirmed (publisher confirms on the producer's
// channel): a send succeeds once the broker took the message into its
// queue, and fails with ErrUnroutable when no queue took it or ErrNacked
// when the broker refused it. A key's messages go out on one channel in
// the order of the calls; once a send of a key fails its later sends fail
// at once (transport.ErrKeyPaused) until Producer.Resume(key), so that a
// later event never lands after a gap nobody dealt with.
//
// # Consuming
//
//	c, _ := rabbitmq.NewConsumer[string, ledger.AccountEvent](rabbitmq.Config[ledger.AccountEvent]{
//		URL:      url,
//		Topology: topo,
//		Codec:    ledger.AccountCodec{},
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	go func() { <-stop; c.Close(shutdownCtx) }()
//	err := c.Run(ctx, d)
//
// The consumer dials its own connection and subscribes to every queue of
// the topology (or Config.Queues) on a channel per queue, with a prefetch
// of Config.Prefetch per queue. It subscribes in a random order, so that
// consumers started together spread the queues' active consumers among
// them; single active consumer does not rebalance afterwards, so give each
// process its Config.Queues to place queues explicitly. Each delivery is
// decoded and handed to the lanes (a full backlog refuses at once, and the
// queue's later messages wait in order until an outcome makes room; the
// prefetch bounds what waits). Every subscriber of the dispatcher needs
// OnOutcome; Run refuses subscribers the consumer could not settle for
// (the drop backlog policies, no OnOutcome, parks that differ).
//
// # Acknowledgements
//
// Outcomes come in any order: keys run in parallel, and a report can come
// after its key's next event began. The consumer acknowledges each message
// as soon as it finishes: handled, skipped, dead-lettered by the runtime,
// or parked in a park store. Why, and how:
//
//   - The prefetch counts unacknowledged deliveries. Acknowledging only up
//     to the lowest unfinished message (as a Kafka commit does) would let
//     one slow or parked message hold the prefetch of every key of its
//     queue. Acknowledged one by one, a slow key holds only its own
//     messages' room.
//   - A multiple ack takes every unacknowledged delivery up to its tag,
//     finished or not. The consumer uses it only for a run of finished
//     deliveries with no unfinished one below its end (fewer frames when
//     all goes well); above the lowest unfinished delivery each finished
//     one is acknowledged alone.
//   - A message that does not finish here (withdrawn when the consumer
//     closes or loses its channel, never offered, running at a crash) is
//     never requeued on its own while the channel consumes: it would come
//     back behind later messages of its key that this consumer still holds.
//     Such messages stay unacknowledged until the channel closes; the
//     broker then puts them back at their places in the queue before the
//     next active consumer gets any, so a key's messages come back in
//     order.
//   - An acknowledgement lost with its channel makes the broker deliver the
//     message again; so does a crash. Since a key's finished messages are
//     not always acknowledged in order, an older finished message can come
//     back after a newer one was applied: the version guard skips both
//     kinds of duplicate.
//
// Quorum queues (Topology.QueueArgs x-queue-type: quorum) keep all of this
// (the conformance suite runs on them too), with one known broker bug: a
// quorum queue may ignore acknowledgements that arrive just before a
// channel closes (rabbitmq-server issue 10327), so after a clean Close the
// next consumer can get a few finished messages again; the version guard
// skips them.
//
// # Closing, crashes, lost connections
//
// Close stops taking messages, withdraws from the lanes those that had not
// started, waits up to Config.DrainTimeout for the running handlers,
// acknowledges what finished, then closes the channels: the broker returns
// the rest to their queues, and another consumer becomes each queue's
// active consumer. The drain, then acknowledging and closing, get until
// Close's context or two DrainTimeouts end; then the connection's socket
// closes at once,
// so that a broker that stopped answering does not hold Run until the
// heartbeats give up (acknowledgements not sent by then are lost: those
// messages come again). When Run's context ends the consumer stops as a
// crash would: running handlers are cancelled, nothing more is
// acknowledged, and the socket closes at once. When the connection or a
// queue's channel is lost, what had not started is withdrawn (the broker
// delivers it again), and the consumer dials and subscribes again with a
// growing delay (Config.ReconnectDelay).
//
// What a handler sees: its context is cancelled when its queue's
// ownership ends before it returns (the channel or the connection was
// lost, the drain of Close ran out, Run's context ended), and
// context.Cause returns an error wrapping transport.ErrOwnershipEnded that
// says why (or, when Close's context ended first, that context's cause). RabbitMQ has no lease a consumer extends: it holds a
// queue's unacknowledged messages for as long as the connection lives, and
// it sees the connection die when the consumer does (a reset) or when the
// heartbeats stop; then it gives the queue to another consumer, while a
// consumer cut off may not know yet. A handler that ignores its context's
// cancellation can so overlap with the message's next consumer: keep
// handlers responsive to cancellation and let the version guard skip what
// the overlap delivers twice.
//
// # Bad messages and dead letters
//
// A message that cannot be handled (ReasonMissingType, ReasonUnknownType,
// ReasonUndecodable, ReasonMissingKey, ReasonKeyMismatch, ReasonInvalidEvent)
// is rejected without requeue: the broker moves it to the dead-letter
// exchange with its x-death header (reason "rejected", the queue, the
// time). The consumer logs the reason at warning level and counts it; the
// queue goes on. For handlers that fail for good under the
// runtime.SendToDeadLetter policy, DeadLetters publishes the event to the same
// exchange with HeaderReason ReasonHandlerFailed, HeaderError and
// HeaderAttempts, confirmed.
//
// # Parked keys
//
// Retries are bounded (the schema's retry policy) and a key whose event
// fails for good is parked: its later events join the park, other keys go
// on. With a park store (a durable one), a parked message is finished and
// acknowledged once it is in the store. With the in-memory park (the
// default) the park dies with the process, so a parked message stays
// unacknowledged and keeps its room in its queue's prefetch. When its
// queue's prefetch is full and parked messages hold half of it or more,
// the broker delivers nothing more from that queue, for any key, until the
// parks are resolved (at best it crawls on the room left): the consumer
// says so (a warning naming the queue, then an info line once parked
// messages hold less than half of the prefetch; Stats.BlockedByParks;
// QueueStatus; the metric ordergen.rabbitmq.blocked with reason "parked"). Replay or Discard
// of the parked keys (the dispatcher's ParkedKeys) reports their outcomes,
// which acknowledges the messages and resumes the queue. Use a park store
// to keep parked messages from holding queues at all.
//
// RabbitMQ closes a channel whose delivery stays unacknowledged longer
// than its consumer_timeout (30 minutes by default): parked messages, and
// handlers, that outlive it lose their channel; the consumer subscribes
// again and the broker delivers the messages again (they park again if
// their key is still parked). Raise consumer_timeout, or use a park store,
// when parks may last longer.
//
// # Metrics
//
// With Config.MeterProvider the consumer records, under the
// instrumentation scope of this package, per queue: messages delivered
// (messaging.client.consumed.messages), unsettled and parked messages,
// whether the prefetch is full and why; dead letters by reason; and the
// losses of the connection and of queue channels. Stats and Queues give
// the same to a program.
package rabbitmq

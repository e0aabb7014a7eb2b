// Package outbox is for services that publish events of their changes: the
// relay of ordergen's transactional outbox, which ships the events a
// service wrote in its own transactions to a sink of the transport
// contract (runtime/kafka's Producer, the other brokers', an in-process
// dispatcher) in per-key order.
//
// # The dual write it removes
//
// A service that commits a change and then publishes its event has two
// writes that can part: a crash between the commit and the publish loses
// the event, and publishing first can announce a change that then rolls
// back. And when the service numbers each entity's versions itself, two
// of its writers can give one key the same version. With the outbox, the
// generated AccountOutbox writes the event in the change's transaction
// (PublishDepositedTx(ctx, tx, e)): it takes the key's next version from a
// producer sequence of its own (sqlstore's ordergen_outbox_seq, not the
// consumers' guard versions), stamps it into the event's version field,
// and inserts the encoded event into the outbox table, all in tx. The
// change and its event commit together or not at all, and concurrent
// writers of one key get consecutive versions. A relay then ships them:
//
//	relay, err := outbox.New(outbox.Config[string, ledger.AccountEvent]{
//		Store: store, Entity: "Account", Codec: ledger.AccountCodec{},
//		Sink: producer, // kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: cl, Topic: "accounts", Codec: ledger.AccountCodec{}})
//	})
//	go relay.Run(ctx)
//	defer relay.Close(ctx)
//
// # What a relay guarantees
//
// Order: a key's events reach the sink in version order, each sent once
// the one before was taken; after dropping re-sends, each key's versions
// arrive increasing and without gaps (unless an operator discards a parked
// key's events: see below).
//
// At least once, and no more than a crash explains: a round claims up to
// Config.Batch events, sends them, then marks them sent in the transaction
// that claimed them. An event is sent again only if a crash (or a lost
// database connection) came between its send and that commit, or its send
// failed after the sink had taken it; consumers' version guards skip such
// copies.
//
// Several relays at once, in one process or many: on PostgreSQL a round
// holds each key it ships by a row lock (SELECT ... FOR UPDATE SKIP LOCKED
// on the key's row of ordergen_outbox_keys) from its claim through its
// sends to its commit, so no two relays ship one key, and a relay skips,
// without waiting, the keys another holds. Writers never take that lock,
// so a round does not delay the business transactions. On SQLite a round
// is one transaction that holds the database's write lock: one relay
// writes at a time, and writers wait for the round to commit (keep Batch
// and SendTimeout small there).
//
// A claim lasts as long as the database session of its transaction. When
// the server ends that session under a round (pg_terminate_backend, a
// restart, a cut connection), the round's keys are free at once and
// another relay may ship them while this one still holds their events. So
// a round confirms its claim before each send, with a statement of that
// session begun after the key's previous send returned (the round's
// senders share those statements: about one per Senders sends), and stops
// sending once one fails. Of each key it held, only the send in progress
// when the session ended goes twice, or the one about to begin, its claim
// confirmed just before; the round marks nothing, reports the lost claim,
// and Run goes on in a new session, where the next relay to claim the keys
// sends them from their first event not marked. On SQLite the claim is the
// write lock of the relay's own process, which no server ends under it.
//
// Isolation: a key whose sink refuses an event retries it after an
// exponential backoff (Config.Backoff), and the other keys go on meanwhile;
// with Config.ParkAfter, or at once for a runtime.Permanent error or an
// event the codec cannot decode, the key parks in the outbox with its
// reason. A parked key's events stay unsent, later ones join them, and the
// key waits for an operator: ordergen-parked outbox (list, show, retry,
// discard; and the console of ordergen-parked serve shows them), or
// sqlstore's RetryOutboxKey and DiscardOutboxKey. A discard drops the
// key's unsent events, so its consumers find a gap in its versions.
//
// Tracing: a store given a trace function (sqlstore.Store.Trace, with
// runtime/oteltrace's W3C) keeps the writer's W3C trace context with each
// row, and the relay sends the row under it (transport.WithTrace), so the
// handlers' spans join the writer's trace through a relay's crash too.
//
// Wake-ups: on PostgreSQL a trigger notifies every new row (LISTEN/NOTIFY,
// through the store's Listener, which postgres.Open sets), so an idle relay
// wakes when rows commit and polls only every 5 seconds against lost
// notifications; on SQLite writers of the same process wake it, and it
// polls every 250ms for other processes'. Batches are bounded
// (Config.Batch); sent events are pruned after Config.Retention.
//
// Lifecycle: Run ships until Close or until its context ends, which stops
// it as a crash would (nothing of the round in progress is marked). Close
// lets the round in progress mark what it sent. No goroutine outlives Run.
//
// Observability: Stats, the metrics (MetricBacklog, MetricOldestAge,
// MetricSent, MetricRetries, MetricParkedKeys, MetricRetryingKeys,
// MetricPruned through Config.MeterProvider), and TransportStatus for the
// operator's console (runtime/console's Config.Transports).
//
// # Seeding
//
// A service that adopts the outbox with entities whose versions it
// numbered before seeds each key's sequence (AccountOutbox.Seed in a
// transaction, sqlstore's SeedOutbox, or ordergen-parked outbox seed), so
// that the key's first outbox event follows the last version its consumers
// saw.
package outbox

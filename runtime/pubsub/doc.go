// Package pubsub is for services that carry ordergen events across
// processes on Google Cloud Pub/Sub with ordering keys, on
// cloud.google.com/go/pubsub/v2: a Producer that publishes each event with
// its key as the ordering key, and a Consumer that feeds a subscription's
// messages to per-key lanes. It is a Go module of its own
// (github.com/ordergen/ordergen/runtime/pubsub), so that services without
// Pub/Sub never build the Google client; code that ordergen generates never
// imports it.
//
// # Producing
//
//	pub := client.Publisher("accounts")
//	pub.EnableMessageOrdering = true
//	sink, _ := pubsub.NewProducer[string, ledger.AccountEvent](pub, ledger.AccountCodec{})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//
// A message's ordering key is the event's key (OrderingKey), its data the
// codec's encoding, its AttrType attribute the event type. The publisher
// must enable message ordering (NewProducer refuses one that does not).
// Once a publish of a key fails, Pub/Sub's client refuses the key's later
// publishes until ResumePublish; the Producer keeps the same rule as every
// ordergen transport (transport.AsyncSink): the key's later sends fail at
// once with transport.ErrKeyPaused until Producer.Resume(key), which
// resumes the key in the publisher too.
//
// # Consuming
//
//	c, _ := pubsub.NewConsumer[string, ledger.AccountEvent](pubsub.Config[ledger.AccountEvent]{
//		Client: client, Subscription: "ledger", Codec: ledger.AccountCodec{}, DeadLetterTopic: "accounts-dlt",
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	err := c.Run(ctx, d) // c.Close(ctx) drains and stops
//
// The subscription must enable message ordering (Run refuses one that does
// not). Pub/Sub delivers a key's messages in order and the client calls
// the consumer for them one at a time; the consumer hands each one to the
// key's lane and returns, so that other keys run in parallel, and
// acknowledges a message once every subscriber reached its outcome
// (transport.Source). Run refuses subscribers it cannot settle for (drop
// backlog policies, no OnOutcome, parks that differ).
//
// # Ownership: per key
//
// Pub/Sub's unit of order is the ordering key, and it has no assignment a
// consumer could see: it lends messages (leases, extended by the client up
// to Config.MaxExtension) and, when one of a key's messages is nacked or
// its lease lapses, delivers it again with every later message of the key,
// even acknowledged ones, to this consumer or another. So the consumer
// holds one ownership per key, from the key's first message it takes to
// its last one settled, and ends it early when:
//
//   - a message of the key is given back (nacked: its dead letter could not
//     be written, say): the key's other messages must not run here, as
//     Pub/Sub sends them again after it;
//   - a message of the key nears Config.MaxExtension (a handler ran that
//     long, or it is parked in memory): the client stops extending its
//     lease, and Pub/Sub will deliver the key elsewhere.
//
// Then the key's events that have not started are withdrawn from the lanes
// and never start here, the running one gets up to Config.DrainTimeout
// (and no later than the lease) before it is cancelled, and every message
// of the key not finished is nacked. Until the first message given back
// comes again (for ten seconds at most), later messages of the key that
// reach the consumer are stale (sent before the nack) and are nacked too;
// messages of the key that arrive while its ownership ends wait for it.
// So no handler runs for a key's message after the key went back, and no
// later message of a key runs before an earlier one that comes again.
// Handlers that ignore their context's cancellation can overlap with the
// next delivery: keep them responsive, and let the version guard skip what
// Pub/Sub delivers twice.
//
// # Flow control and backpressure
//
// At most Config.MaxInFlight messages are received and unsettled at once,
// parked ones included (the subscriber's MaxOutstandingMessages, which the
// server applies too; the client's own flow control counts only callbacks
// running, so the consumer reserves room in the callback before it takes a
// message, and the bound holds against any server). A message the lanes refuse for lack
// of room (any backlog policy: the consumer offers with a done context)
// waits, with the later messages of its key, until messages settle: a full
// key holds up only itself.
//
// # Parked keys
//
// Retries are bounded (the schema's retry policy) and a key whose event
// fails for good is parked: its later events join the park. With a park
// store (a durable one), a parked message is acknowledged once it is in the
// store. With the in-memory park (the default) it stays unacknowledged
// until Replay or Discard resolves the park, which acknowledges it; until
// then Pub/Sub (as pstest serves it) sends the key's later messages only
// after it, so a parked key holds one of the MaxInFlight. Parks hold up
// other keys only when they fill MaxInFlight: the consumer then receives
// nothing more for any key, and says so: a warning when parked messages
// hold half of MaxInFlight and when they block it, Stats().Blocked
// ("parked") and the gauge ordergen.pubsub.blocked (reason "parked"); an
// info log when it takes messages again. A parked message that nears
// MaxExtension goes back to Pub/Sub with its key (a warning, and
// Stats().KeysGivenBack.MaxExtension) and runs again when it comes back:
// resolve parks within MaxExtension, or give the dispatcher a park store.
//
// # Bad messages and dead letters
//
// A message that cannot be handled goes to Config.DeadLetterTopic with its
// data and attributes, plus AttrReason (a Reason), AttrError,
// AttrSubscription, AttrMessageID and AttrOrderingKey, and is acknowledged
// once Pub/Sub took the copy: its key goes on. Reasons: ReasonMissingType,
// ReasonUnknownType, ReasonUndecodable, ReasonMissingKey (no ordering key:
// such a message has no order to keep), ReasonKeyMismatch (the ordering key
// is not the event's key's) and ReasonInvalidEvent. If the copy cannot be
// published, the message is nacked (and its key given back). For handlers
// that fail for good under the runtime.SendToDeadLetter policy, DeadLetters
// publishes to a topic with ReasonHandlerFailed. A subscription's own
// dead-letter policy (max delivery attempts) still applies on top, to
// messages nacked again and again.
//
// # Stopping
//
// Close stops receiving, withdraws the events that have not started, waits
// for the running ones (up to DrainTimeout and its context), acknowledges
// what finished and nacks the rest. Then it waits for the client to send
// those acknowledgements (the client's graceful shutdown, so that a clean
// close loses none), but no longer than Close's context or another
// DrainTimeout: a consumer cut off from Pub/Sub still stops in time, while
// the client would retry those calls for minutes. When Run's context ends
// instead, it stops at once, as a crash would, cancelling the running
// handlers and nacking what it holds without waiting for the client (the
// messages would come back anyway when their leases lapse). What the
// client had not sent when Run stopped waiting is counted
// (Stats().Unconfirmed, and a warning): those messages come again when
// their ack deadline passes. The client's Receive goes on after Run
// returned until its last calls end: close the client after Run to give
// them up.
//
// What a handler sees: its context is cancelled when its key's ownership
// ends before the handler returns (the key goes back to Pub/Sub, the
// message nears MaxExtension, the consumer stops or is killed), and
// context.Cause(ctx) then returns an error wrapping
// transport.ErrOwnershipEnded (transport.ErrLeaseLost when the message
// reached MaxExtension) that says why (or, when Close's context ended
// first, that context's cause). The client extends leases by itself and
// does not tell whether Pub/Sub confirmed an extension, so a consumer cut
// off from Pub/Sub cannot know that a lease lapsed: Pub/Sub may then
// deliver the message to another consumer while its handler still runs
// here, and the version guard skips what is applied twice.
//
// # Metrics
//
// With Config.MeterProvider the consumer records, under the scope of this
// package, messaging.client.consumed.messages and ordergen.pubsub.unsettled,
// .unsettled.oldest_age, .parked, .keys, .blocked (by
// ordergen.pubsub.blocked.reason), .dead_lettered (by
// ordergen.pubsub.dead_letter.reason) and .ownerships.ended (keys given
// back, by ordergen.pubsub.end.reason: unfinished, lease).
package pubsub

// Package sqs is for services that carry ordergen events across processes
// on Amazon SQS FIFO queues, on github.com/aws/aws-sdk-go-v2/service/sqs: a
// Producer that sends each event with its key as the message group ID, and
// a Consumer that feeds a queue's messages to per-key lanes. It is a Go
// module of its own (github.com/ordergen/ordergen/runtime/sqs), so that
// services without SQS never build the AWS SDK; code that ordergen
// generates never imports it.
//
// # Producing
//
//	sink, _ := sqs.NewProducer[string, ledger.AccountEvent](client, queueURL, ledger.AccountCodec{})
//	p, _ := ledger.NewAccountProducer(sink)
//	err := p.PublishDeposited(ctx, ledger.Deposited{AccountID: "a-1", Version: 2, Amount: 100})
//
// A message's group ID is the event's key (MessageGroupID), its body the
// codec's encoding (base64, with AttrEncoding, if it is not text SQS
// takes), its AttrType attribute the event type, and its deduplication ID
// the group ID and the event's version (generated events of an entity with
// a version are Versioned), so that a send retried within SQS's five
// minutes is queued once; events without a version get a random one. The
// queue must be FIFO. Sends go out in batches of ten, at most one message
// of a group per batch and one batch at a time per shard of keys, so a
// key's events are queued in the order they were sent; once a send of a key
// fails, its later sends fail at once with transport.ErrKeyPaused until
// Producer.Resume(key).
//
// # Consuming
//
//	c, _ := sqs.NewConsumer[string, ledger.AccountEvent](sqs.Config[ledger.AccountEvent]{
//		Client: client, QueueURL: queueURL, Codec: ledger.AccountCodec{}, DeadLetterQueueURL: dlqURL,
//	})
//	d, _ := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) { cfg.OnOutcome = c.OnOutcome })
//	err := c.Run(ctx, d) // c.Close(ctx) drains and stops
//
// SQS FIFO orders each message group and delivers nothing more of a group
// while one of its messages is in flight (received, not deleted, still
// invisible), so the group is the unit of order: the key. The consumer
// receives in batches of up to ten (Config.Receivers calls at once, long
// polling for Config.WaitTime), hands each message to its key's lane, and
// deletes it, in batches, once every subscriber reached its outcome
// (transport.Source). Run refuses subscribers it cannot settle for (drop
// backlog policies, no OnOutcome, parks that differ) and queues that are
// not FIFO.
//
// # Visibility and ownership
//
// A message is received with Config.VisibilityTimeout and, while it is
// unsettled (running, waiting in its lane, parked in memory), its
// visibility is extended (looked at every sixth of that, extended when less
// than two thirds of it is left), up to the 12 hours SQS allows after a
// receive (MaxHold). The consumer trusts only a visibility SQS confirmed:
// the receive's, then each extension SQS answered with success, counted
// from before the request was sent. An extension that fails or gets no
// answer changes nothing (Stats().ExtensionErrors, the metric
// ordergen.sqs.visibility.extensions with error.type "request"); one SQS
// refuses means SQS took the message back (error.type "refused").
//
// The consumer holds one ownership per group, from its first message taken
// to its last one settled, and ends it early when SQS refuses an
// extension, when the visibility SQS last confirmed for one of the group's
// messages is within a sixth of VisibilityTimeout of its end (extensions
// failed: the consumer is cut off from SQS, which will soon give the
// message to another consumer), when a message nears the 12 hours, or when
// one of the group's messages is given back (its dead letter could not be
// sent). Then the group's events that have not started are withdrawn from
// the lanes and never start here, and every message of the group not
// finished is made visible again (or comes back when its visibility ends,
// if SQS cannot be told): the group's next receive, here or elsewhere,
// starts with them.
//
// What a handler sees: its context is cancelled. When the lease is lost
// (SQS refused an extension, or the confirmed visibility nears its end) it
// is cancelled at once, before SQS can give the message to another
// consumer, and context.Cause(ctx) returns an error wrapping
// transport.ErrLeaseLost that says which message and why. When a group is
// given back for another reason, or the consumer closes, the running
// handler gets up to Config.DrainTimeout first, then context.Cause returns
// an error wrapping transport.ErrOwnershipEnded (or, when Close's context
// ended first, that context's cause). A handler that ignores its
// context's cancellation can overlap with the next delivery: keep handlers
// responsive, and let the version guard skip what SQS delivers twice.
//
// # Backpressure
//
// At most Config.MaxInFlight messages are received and unsettled at once,
// parked ones included (receivers reserve room before they receive). A
// message the lanes refuse for lack of room waits, with the later messages
// of its group, until messages settle: a full key holds up only itself.
//
// # Parked keys
//
// With a park store (a durable one), a parked message is deleted once it is
// in the store, and the group's next messages come and join the park. With
// the in-memory park (the default) it stays in flight, its visibility
// extended, until Replay or Discard resolves the park and deletes it; the
// group gets nothing more meanwhile, so a parked key holds one of the
// MaxInFlight and its later messages wait in the queue. Parks hold up other
// keys only when they fill MaxInFlight: the consumer then receives nothing
// more, and says so: a warning when parked messages hold half of
// MaxInFlight and when they block it, Stats().Blocked ("parked") and the
// gauge ordergen.sqs.blocked (reason "parked"); an info log when it
// receives again. A parked message nearing the 12 hours goes back to the
// queue with its group (a warning, and Stats().GroupsGivenBack.MaxHold) and
// runs again: resolve parks within 12 hours, or give the dispatcher a park
// store.
//
// # Bad messages and dead letters
//
// A message that cannot be handled goes to Config.DeadLetterQueueURL (in
// its group, deduplicated by its message ID, when that queue is FIFO) with
// its body and attributes, plus AttrReason (a Reason), AttrError, AttrQueue
// and AttrMessageID, and is deleted once SQS took the copy: its group goes
// on. Reasons: ReasonMissingType, ReasonUnknownType, ReasonUndecodable,
// ReasonMissingKey, ReasonKeyMismatch and ReasonInvalidEvent. If the copy
// cannot be sent, the message is made visible again. For handlers that
// fail for good under the runtime.SendToDeadLetter policy, DeadLetters sends to a
// queue with ReasonHandlerFailed. A queue's redrive policy still applies on
// top, to messages received again and again (a consumer that keeps
// crashing on one).
//
// # Stopping
//
// Close stops receiving, withdraws the events that have not started, waits
// for the running ones (up to DrainTimeout and its context), deletes what
// finished and makes the rest visible again; the calls to SQS that this
// takes get until Close's context or another DrainTimeout ends, so that a
// consumer cut off from SQS still stops: what SQS could not be told is
// counted (Stats().DeleteErrors, ReturnErrors, the metric
// ordergen.sqs.settle.errors) and comes back when its visibility ends.
// When Run's context ends instead, it stops at once, as a crash would: the
// running handlers are cancelled and nothing more is sent to SQS; what was
// not deleted comes back when its visibility timeout ends.
//
// # Metrics
//
// With Config.MeterProvider the consumer records, under the scope of this
// package, messaging.client.consumed.messages and ordergen.sqs.unsettled,
// .unsettled.oldest_age, .parked, .keys, .blocked (by
// ordergen.sqs.blocked.reason), .dead_lettered (by
// ordergen.sqs.dead_letter.reason), .ownerships.ended (groups given
// back, by ordergen.sqs.end.reason: unfinished, lease, lease-lost,
// lease-lapsed), .visibility.extensions (MetricExtensions) and
// .settle.errors (MetricSettleErrors).
package sqs

// Package transport is for authors of transports: the contract a broker's
// producer and consumer are built on, and the kit that does for them
// everything but talk to the broker. Handler authors and generated code do
// not need it, except that generated dispatchers are Targets and generated
// producers publish through a Sink. runtime/kafka, runtime/rabbitmq,
// runtime/pubsub, runtime/sqs and runtime/nats are built on it alone.
//
// # What an adapter writes
//
// A broker adapter connects, receives, and settles; nothing else:
//
//   - connect: dial the broker, declare what it needs;
//   - receive: take the broker's messages and turn each into a Message
//     (a Decoder checks its type, key and payload and says why a bad one is
//     Bad, with a Reason);
//   - settle: acknowledge what the kit says is Finished, give back (nack,
//     leave uncommitted, make visible again) what is Unfinished, write a bad
//     message to the dead-letter destination (DeadLetterFunc, with
//     DeadLetterHeaders), and extend what the broker lends for a time
//     (Leases' Extend).
//
// The kit does the rest, the same on every broker: it offers the events to
// the lanes in order, waits when they are full, tells the adapter when a
// message is finished (every subscriber reached its outcome, in any order),
// ends an ownership when the broker takes a unit of order back (its events
// that have not started are withdrawn and never start here, the running
// ones are drained or cancelled with a cause that says why), drains on
// Close and stops at once as a crash when Run's context ends, and reports
// why a consumer is blocked (BlockWatch), parks in memory included.
//
// # Consuming: the intakes
//
// Pick the intake that matches how the broker orders:
//
//   - StreamIntake, for a broker that delivers each unit of order (a Kafka
//     partition, a RabbitMQ queue with a single active consumer, a NATS
//     JetStream partition) in order to one consumer at a time: each holding
//     of a unit is a Stream, whose messages are offered in order and wait,
//     in order, when the lanes are full.
//   - UnitConsumer, a whole consumer on a StreamIntake for a broker whose
//     consumer subscribes to each unit itself (RabbitMQ, NATS): the adapter
//     is a UnitBroker (Connect, Subscribe, a UnitFeed of deliveries, Decode,
//     Close); UnitConsumer subscribes, supervises, reconnects, drains,
//     counts (UnitStats, UnitStatus) and records the metrics. A UnitFeed
//     whose client pushes deliveries through a callback and takes one
//     acknowledgement per message embeds a Pull: it passes them on in
//     order, behind an optional gate, keeps what is held, and sends the
//     acknowledgements off the intake's locks. Kafka, whose
//     client assigns partitions and polls for all of them, uses the
//     StreamIntake directly.
//   - KeyIntake, for a broker that orders by key and holds a key's later
//     messages back while one is unsettled (Pub/Sub ordering keys, SQS
//     message groups): one ownership per key, given back whole when one of
//     its messages goes back to the broker or its lease nears its end;
//     receivers reserve room (Reserve) before they take from the broker.
//
// A broker that commits one offset per partition (Kafka) keeps each
// partition's books with runtime/transport/offsets: records finish in any
// order, the commit moves only past the lowest unfinished one, and the
// finished ones above it travel in the commit's metadata.
//
// Leases keeps what a broker lends for a time (SQS's visibility, NATS's
// AckWait): it extends what is due, trusts only what the broker confirmed,
// and says when a lease was refused (Lost) or is about to lapse (Lapsed),
// for the intake to end the ownership before the broker gives the message
// to another consumer (ErrLeaseLost). Lifecycle is the consumer's Run and
// Close; Check, ShutdownContext and GiveUpAfter bound a start and a stop
// against a broker that does not answer, and Dial a client's connect that
// takes no context. A UnitConn or UnitFeed embeds a Loss for its Lost and
// Err.
//
// Under the intakes is the contract: a Source feeds a Target (a generated
// dispatcher, EngineTarget, TopicTarget) through its SubmitTagged, learns
// from the subscribers' Config.OnOutcome (the Source's OnOutcome) when each
// message is finished, and settles it once: Finished (acknowledge or commit
// past it) or Unfinished (the broker delivers it again). A message whose
// event parked in memory settles when its park is resolved; one parked in
// a park store is finished once it is there. Messages are taken under an
// Ownership (a partition from assignment to revocation, a key, a
// subscription); when it ends (Source.End), the target withdraws the
// events of its messages that have not started (runtime.TransportEngine.Withdraw).
// CheckSubscriptions refuses the subscribers a transport cannot settle for
// (the drop backlog policies, among others). Outcome reports may arrive out
// of handling order (an inline batch reports an event once its worker moved
// past it): a transport settles on reports and never assumes their order.
//
// # Producing
//
// A Sink carries events out of the process; an AsyncSink also hands them
// over without waiting. An adapter writes a Writer (the broker's write,
// answering each event once) and gets an OrderedSink: per-key order and
// the failure rule (after a send of a key fails, its later sends fail with
// ErrKeyPaused until Resume), Flush and Close; a ClosingWriter is closed
// with it, a ResumingWriter resumed with it. A broker whose client sends
// asynchronously on a connection it may lose gets its Writer from a
// ConnWriter: the adapter writes Dial, Encode, Send and Close and passes
// the client's answers on; the ConnWriter redials after a loss and fails
// the sends that waited on the lost connection, recording their keys
// (FailedKeys) before another connection opens, so that no later send
// overtakes them. A broker's Producer is its OrderedSink. SendKeyed is what a generated producer's PublishAsync does.
//
// # On the wire
//
// Every transport carries an event the same way: its key as the broker's
// key (KeyText), its type in HeaderType (HeaderKey when the broker's key is
// not the event's), the codec's encoding as payload; a dead letter carries
// HeaderReason, HeaderError and HeaderAttempts. The W3C trace context of a
// send travels in HeaderTraceParent and HeaderTraceState (trace.go): an
// adapter writes TraceOf(ctx) and reads Message.Trace (TraceFrom), and the
// kit does the rest. runtime/transporttest is the
// conformance suite every transport passes, faults at the broker's edge
// included.
package transport

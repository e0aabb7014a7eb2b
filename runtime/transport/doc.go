// Package transport is for authors of transports: the contract that a
// broker's consumer and producer (runtime/kafka's, the other brokers', an
// outbox relay) are built on, and the checks they make. Handler authors and
// generated code do not need it, except that generated dispatchers are
// Targets and generated producers publish through a Sink.
//
// The contract has two halves.
//
// Producing: a [Sink] carries events out of the process; an [AsyncSink]
// also hands them over without waiting, and [OrderedSink] gives any
// broker's asynchronous [Writer] per-key order and the failure rule (after
// a send of a key fails, its later sends fail with [ErrKeyPaused] until
// Resume). [SendKeyed] is what a generated producer's PublishAsync does.
//
// Consuming: a [Source] feeds a [Target] (a generated dispatcher,
// [EngineTarget], [TopicTarget]) through its SubmitTagged, learns from the
// subscribers' Config.OnOutcome (the Source's OnOutcome) when each message
// is finished, and settles it once: [Finished] (acknowledge or commit past
// it) or [Unfinished] (the broker delivers it again). A message whose event
// parked in memory settles when its park is resolved; one parked in a park
// store is finished once it is there. Messages are taken under an
// [Ownership] (a Kafka partition from assignment to revocation, a lease);
// when it ends ([Source.End]), the target withdraws the events of its
// messages that have not started (runtime.Engine.Withdraw), so that work of
// a source that moved elsewhere never starts. [CheckSubscriptions] refuses
// the subscribers a transport cannot settle for (the drop backlog policies,
// among others); [SubscriptionOf] and [TopicSubscriptions] describe an
// engine's and a topic's.
//
// Outcome reports may arrive out of handling order (an inline batch reports
// an event once its worker moved past it): a transport settles on reports
// and never assumes their order.
package transport

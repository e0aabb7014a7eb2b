// Package transporttest is for authors of transports: the conformance suite
// that every broker's consumer and producer built on runtime/transport runs
// (runtime/kafka on kfake, runtime/rabbitmq on a real server, the Pub/Sub
// and SQS modules on their fakes), as runtime/storetest is for durable
// stores. It checks what the runtime's contract promises across processes:
//
//   - per-key order across several consumers of one stream, while one joins
//     and one leaves: every event applied, each key's in order, never two
//     handlers of a key at once;
//   - a consumer killed mid-stream (Consumer.Kill: as its process's crash)
//     loses nothing and applies nothing backwards;
//   - a handler that outlives the broker's lease three times keeps its
//     message (the consumer extends the lease), where the broker has leases;
//   - a message that does not decode, and an event whose handler failed for
//     good under the runtime.SendToDeadLetter policy, reach the broker's
//     dead-letter mechanism once, and the key goes on;
//   - backpressure: a consumer takes at most ConsumerOptions.MaxInFlight
//     messages, and holds back (never loses or reorders) what full lanes
//     refuse;
//   - a graceful drain on Close: running handlers finish, what finished is
//     settled, what had not started goes to the next consumer;
//   - the parking rule: with a park store a parked message is settled once
//     stored; with the in-memory park it stays unsettled, the consumer says
//     so in its metrics and logs when parked messages block its unit of
//     order, and resolving the park resumes it;
//   - a target whose subscribers it could not settle for is refused;
//
// and, with the network between them and the broker cut (connections
// reset, new ones refused) or stalled (bytes held) by a netfault.Net:
//
//   - a consumer cut off while a handler outlives the broker's lease
//     cancels the handler, with a cause wrapping transport.ErrLeaseLost,
//     before the broker gives the message to another consumer, where the
//     broker has leases whose extensions the consumer sees confirmed;
//   - a consumer cut off and stopped (Close with a deadline, or the end of
//     Run's context) returns while the network is still down, and what it
//     held comes again to the next consumer, in order;
//   - a producer whose connections are killed mid-stream loses nothing and
//     keeps each key's order, once the publisher sends again what failed
//     (from each key's first failed event, as a single writer would).
//
// A transport plugs in with a Harness: NewStream makes, per test, a stream
// on the broker (Kafka: a topic and a group; RabbitMQ: queues behind an
// exchange) whose Stream gives producers (transport.Sink of Event),
// consumers (Consumer), a way to publish a poison message, the transport's
// dead-letter sink and a reader of its dead letters. Producers and
// consumers reach the broker through the Net of ProducerOptions and
// ConsumerOptions when the suite gives one (a dialer or a proxy address:
// see netfault). Limits says what the broker cannot do (NoLeases,
// UnconfirmedLeases, NoNetwork, ...), and each check that needs it is
// skipped, saying so; ParkBlocked reads the consumer's metrics. The suite
// builds the engines itself, with Codec for the wire.
//
//	func TestConformance(t *testing.T) {
//		transporttest.Run(t, transporttest.Harness{
//			NewStream:   newStream,
//			Limits:      transporttest.Limits{NoLeases: true},
//			ParkBlocked: func(m metricstest.Metrics) bool { ... },
//		})
//	}
//
// Beside the suite, a transport's own tests share two databases that
// record what their handlers applied: Guarded, for chaos tests (poison
// events, fencing checks), and Applied, for scenarios that wait for a
// known number of events. A chaos test keeps its consumers in a Crowd,
// which they join and leave at random, and plays the operator with
// ReplayParked.
package transporttest

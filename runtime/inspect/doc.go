// Package inspect is for operator tools and the code that feeds them: the
// type-erased view of an entity's dispatcher (or of any runtime.Topic or
// set of engines) that runtime/console serves, with keys as text
// (durable.EncodeKey) and events as their codec's encoding, and the small
// interface through which a transport shows its state (runtime/kafka's
// Consumer implements it).
//
// ordergen generates an Inspector method on every dispatcher:
//
//	c, err := console.New(console.Config{
//		Inspectors: []inspect.Inspector{accounts.Inspector(), orders.Inspector()},
//		Transports: []inspect.Transport{consumer},
//	})
//
// Engines is the Inspector of engines of any key and event types: the one
// the generated method returns, and the one to use for a runtime.Topic or
// an engine of a service's own. It is also a KeyOperator: it cancels a
// key's running attempt and parks a key now (runtime.Engine.CancelAttempt,
// ParkNow), and its Key says what a key runs. A transport that is an
// OutboxOperator (runtime/outbox's Relay) lets the console retry and
// discard the transactional outbox's stopped keys.
package inspect

package runtime

import "context"

// The engine's and the topic's side for transports: what a broker's
// consumer (runtime/transport's intakes) needs and a handler author does
// not. It sits on types of its own, so that an Engine's and a Topic's
// methods are those of the services that run them.

// TransportEngine is an engine as a transport uses it: submissions tagged
// with where each event came from, withdrawals of what a lost ownership
// took, and whether parks live in the engine's memory. EngineForTransport
// makes one; runtime/transport's EngineTarget wraps it.
type TransportEngine[K comparable, E any] struct{ e *Engine[K, E] }

// EngineForTransport returns e's side for transports.
func EngineForTransport[K comparable, E any](e *Engine[K, E]) TransportEngine[K, E] {
	return TransportEngine[K, E]{e}
}

// SubmitTagged is Engine.Submit with a tag that Config.OnOutcome receives
// with the event's outcome. Transports tag each event with where it came
// from (a partition and offset) to learn when it is finished, and Withdraw
// selects events by their tags.
func (t TransportEngine[K, E]) SubmitTagged(ctx context.Context, key K, event E, tag uint64) error {
	return t.e.submitTagged(ctx, key, event, tag)
}

// Withdraw takes back the accepted events whose tag match selects and that
// have not started: a transport calls it when it loses the ownership they
// came under (a revoked partition, a lapsed lease), so that their work
// never starts here. See Engine's withdraw for the whole contract: it
// returns how many events it withdrew; it waits until every running lane
// that holds selected events has served the withdrawal, or until ctx ends,
// and then, when Config.OnOutcome is set, cancels the contexts of the
// running attempts of selected events with ctx's cause and returns ctx's
// error. After a Close that gave up it returns at once. match is called
// under internal locks: it must be fast and must not call the engine.
func (t TransportEngine[K, E]) Withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	return t.e.withdraw(ctx, match)
}

// ParksInMemory reports whether the engine keeps parked events in its own
// memory (Config.Parks was nil). Then they count against the backlog
// limits, and are lost with the process: a transport must not treat a
// parked record as finished.
func (t TransportEngine[K, E]) ParksInMemory() bool { return t.e.parksCount() }

// TransportTopic is a topic as a transport uses it: every subscriber gets
// each event with the transport's tag, and a lost ownership's events are
// withdrawn from all. TopicForTransport makes one; runtime/transport's
// TopicTarget and generated dispatchers wrap it.
type TransportTopic[K comparable, E any] struct{ t *Topic[K, E] }

// TopicForTransport returns t's side for transports.
func TopicForTransport[K comparable, E any](t *Topic[K, E]) TransportTopic[K, E] {
	return TransportTopic[K, E]{t}
}

// SubmitTagged submits event under key to every subscriber, from the one
// numbered from up (0 is the first, in subscription order), for a transport
// that learns from each subscriber's Config.OnOutcome when its record is
// finished. It returns how many subscribers have accepted the event. It
// stops at the first subscriber that refuses it and returns that refusal:
// call again with from set to the number returned, so that no subscriber
// gets the event twice. While a subscriber has no OnOutcome it refuses
// everything with ErrInvalidConfig, since the transport would never learn
// that its events finished.
func (t TransportTopic[K, E]) SubmitTagged(ctx context.Context, key K, event E, tag uint64, from int) (int, error) {
	return t.t.submitTagged(ctx, key, event, tag, from)
}

// Withdraw takes back, in every subscriber, the accepted events whose tag
// match selects and that have not started (see TransportEngine.Withdraw),
// and returns how many it withdrew in all. The subscribers withdraw at
// once, each waiting up to ctx's end for the selected events its running
// lanes took, so that each gets the whole of ctx's time before the running
// attempts of selected events are cancelled. Its error joins the
// subscribers' errors, each naming its subscriber.
func (t TransportTopic[K, E]) Withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	return t.t.withdraw(ctx, match)
}

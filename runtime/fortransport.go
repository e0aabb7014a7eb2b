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

// Withdraw removes the accepted events whose tag match selects and that have
// not started: queued (inline or in a lane), waiting for a retry, held for a
// gap, and parked in the engine's memory (Config.Parks nil). They never
// start; each is counted as withdrawn (Stats.Withdrawn) and reported to
// Config.OnOutcome as Withdrawn, its final outcome. Events whose handler is
// running are not withdrawn: they reach their own outcome. Events in a park
// store outside the process are not withdrawn either: they are safe there.
//
// A transport calls it when it no longer owns the source of some events (a
// Kafka partition that moved to another consumer): selecting them by the
// tags it submitted them with (SubmitTagged), it keeps them from running
// twice. Withdraw returns how many events it withdrew once every lane has
// been looked at and every outcome a worker had not reported yet (an inline
// event's, reported once its worker claimed the next) has been reported;
// for a lane whose worker is in a handler, it waits until that worker has
// served the withdrawal (it does before the lane's next event starts), or
// until ctx ends. When ctx ends first and Config.OnOutcome is set (a
// transport tracks the engine's events, and each attempt gets a context of
// its own), Withdraw cancels the contexts of the running attempts of
// selected events, with ctx's cause as theirs (context.Cause: a transport
// says so why it took the events back), and returns ctx's error; the
// withdrawal is still served later. A handler that ignores its context
// goes on regardless. A Close that gives up (its ctx ended) answers the
// withdrawals waiting then, and after it Withdraw returns at once: its
// workers are gone, and what they left stays unfinished (the CloseError
// counted it). match is called under internal locks: it must be fast and
// must not call the engine.
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

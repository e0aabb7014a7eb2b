package runtime

import "context"

// Tracing's hook in the engine. The engine knows nothing of OpenTelemetry:
// it tells a Tracer where each attempt starts and ends and where each event
// retires, and runs the handler with the context the Tracer returns.
// runtime/oteltrace adapts OpenTelemetry to it, so that a service that does
// not trace has no tracing library in its build.

// Tracer is told of each attempt and each event's outcome (Config.Tracer).
// Its methods are called from the engine's workers, concurrently for
// different keys and in order for one key: they must be fast and must not
// call the engine.
type Tracer interface {
	// StartAttempt is called as an attempt of an event starts, with the
	// context the handler would get; the handler gets the context it
	// returns (one carrying the attempt's span).
	StartAttempt(ctx context.Context, a Attempt) context.Context
	// EndAttempt is called when the handler of attempt a, which
	// StartAttempt returned ctx for, has returned, with its error (a
	// PanicError for a panic). After an error, the event's fate is told by
	// the next StartAttempt of its key (a retry) or by Retired.
	EndAttempt(ctx context.Context, a Attempt, err error)
	// Retired is called when an event of key reaches its final outcome
	// (see Outcome) in the engine named engine (Config.Name), with the tag
	// it was submitted with. An engine without Config.OnOutcome may leave
	// out the Handled and Skipped outcomes of an inline run; an event that
	// ends in another way is always retired.
	Retired(engine string, key any, tag uint64, o Outcome)
}

// Attempt describes one attempt for a Tracer.
type Attempt struct {
	// Engine is the engine's Config.Name (the entity and subscriber).
	Engine string
	// Key is the event's key.
	Key any
	// Event is the event (the first of a batch).
	Event any
	// Tag is the tag the event was submitted with (SubmitTagged; 0 for
	// Submit): a transport's reference to the message it came from.
	Tag uint64
	// Number counts the attempts of the event, from 1.
	Number int
	// Replayed is set for an event replayed from a park.
	Replayed bool
}

// attemptOf describes the attempt of it for the engine's tracer.
func (e *Engine[K, E]) attemptOf(key K, it *item[E]) Attempt {
	return Attempt{
		Engine: e.cfg.Name, Key: key, Event: it.ev, Tag: it.tag,
		Number: int(it.attempts), Replayed: it.replayed,
	}
}

// traceRetired tells the engine's tracer, if any, the outcomes of done.
func (e *Engine[K, E]) traceRetired(key K, done []item[E]) {
	tr := e.cfg.Tracer
	if tr == nil || len(done) == 0 {
		return
	}
	var k any = key // boxed once for the run of events
	for i := range done {
		if o := done[i].out; o != 0 {
			tr.Retired(e.cfg.Name, k, done[i].tag, o)
		}
	}
}

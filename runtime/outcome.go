package runtime

import "fmt"

// Outcome is what became of an accepted event. Every accepted event reaches
// exactly one, unless Close gives up on it.
type Outcome uint8

const (
	// Handled: the handler succeeded.
	Handled Outcome = iota + 1
	// Skipped: the handler (a guard) skipped it with Skip.
	Skipped
	// Parked: it is in the park store, waiting for Replay or Discard.
	Parked
	// DeadLettered: the dead-letter sink took it.
	DeadLettered
	// Dropped: a declared policy dropped it (at-most-once delivery, the
	// drop-oldest and drop-newest backlog policies).
	Dropped
	// Conflated: a newer pending event of its key replaced it.
	Conflated
	// Withdrawn: a transport's TransportEngine.Withdraw took it back
	// before it started (the transport no longer owns its source).
	Withdrawn
	// Discarded: it was parked, and an operator's Engine.Discard removed
	// it from the park.
	Discarded
)

var outcomeNames = [...]string{Handled: "handled", Skipped: "skipped", Parked: "parked", DeadLettered: "dead-lettered", Dropped: "dropped", Conflated: "conflated", Withdrawn: "withdrawn", Discarded: "discarded"}

// String returns the outcome's name.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// OutcomeFunc is told the outcome of each accepted event, with the tag it was
// submitted with (SubmitTagged; 0 for Submit). Every accepted event reports
// exactly one outcome, except that a parked event reports again when it
// leaves the park: its outcome after a replay, or Discarded for a discard,
// with the tag the park store kept (the memory store keeps it; a durable
// store may give 0). Transports use it to learn when a record is finished.
// It is called from the engine's workers, and for conflated and dropped
// events from Submit, sometimes under an internal lock: it must be fast,
// must not block and must not call the engine.
type OutcomeFunc[K comparable] func(key K, tag uint64, outcome Outcome)

package ir

import (
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// Policy is the resolved delivery policy of an entity, in the runtime's
// own types: the generated code sets the runtime.Config fields of the
// same names to these values.
type Policy struct {
	// MaxActive is the number of keys in progress at once.
	MaxActive int
	// Backlog bounds the pending events.
	Backlog runtime.Backlog
	// Retry is the retry policy (one attempt under at-most-once).
	Retry runtime.Retry
	// Timeout bounds each handler attempt.
	Timeout time.Duration
	// OnExhausted is the policy for an event that failed for good:
	// runtime.DropEvent for delivery: at-most-once.
	OnExhausted runtime.ExhaustedPolicy
	// MaxHeld bounds the events of a key held back on a version gap
	// (entities with a version).
	MaxHeld int
	// MaxHold bounds how long an event is held back.
	MaxHold time.Duration
	// BatchSize is the most events of a key in one call of a batch
	// handler (entities with batch:).
	BatchSize int
	// Linger is how long a batch waits for more events of its key.
	Linger time.Duration
	// Group is the group commit of transactional subscribers (group:). It
	// is no runtime.Config field: it sets the generated Config's Group, a
	// runtime/groupcommit.Config.
	Group Group
}

// Group is an entity's group commit (group:): whether its transactional
// subscribers commit the work of many keys in one transaction, and the
// groups' bounds.
type Group struct {
	// On says that they do; it changes nothing for other subscribers.
	On bool
	// MaxEvents is the most events in one group (group.max_events); zero:
	// groupcommit's default.
	MaxEvents int
	// Linger is how long a group that is not full waits for more keys
	// before it begins (group.linger); zero: no wait.
	Linger time.Duration
}

// AtMostOnce reports whether failed events are dropped instead of retried
// (delivery: at-most-once).
func (p Policy) AtMostOnce() bool { return p.OnExhausted == runtime.DropEvent }

// PolicyField is one field of the runtime.Config that a policy sets: the
// generated Config of an entity declares a field of the same name and
// type, with Doc, defaults it to Value, and subscribe copies it into the
// runtime.Config. A policy that is a field of runtime.Retry or
// runtime.Backlog needs no PolicyField of its own: the literal of the
// struct writes every field that is set.
type PolicyField struct {
	// Name is the field's name, in runtime.Config and in the generated
	// Config.
	Name string
	// Doc is its doc comment in the generated Config.
	Doc string
	// Value is the schema's value, in the runtime's type.
	Value any
}

// PolicyFields returns the fields of runtime.Config that e's policy sets,
// in the order the generated Config declares them.
func (e *Entity) PolicyFields() []PolicyField {
	p := e.Policy
	fields := []PolicyField{
		{"MaxActive", "MaxActive is the number of keys handled at once (schema: lanes.max_active).", p.MaxActive},
		{"Backlog", "Backlog bounds the pending events (schema: backlog).", p.Backlog},
		{"Retry", "Retry is the in-lane retry policy (schema: retry).", p.Retry},
		{"Timeout", "Timeout bounds each handler attempt through its context (schema: timeout).", p.Timeout},
		{"OnExhausted", "OnExhausted says what happens to an event that failed for good " +
			"(schema: on_exhausted; runtime.DropEvent for delivery: at-most-once).", p.OnExhausted},
	}
	if e.Version != nil {
		then := "a key that would hold more is parked"
		after := "the key is parked"
		if e.Resync {
			then = "a key that would hold more is resynced, then parked if the resync fails"
			after = "the key is resynced, then parked if the resync fails"
		}
		fields = append(fields,
			PolicyField{"MaxHeld", "MaxHeld bounds the events of one key held back on a version gap; " + then +
				" (schema: resequencer.max_events).", p.MaxHeld},
			PolicyField{"MaxHold", "MaxHold bounds how long an event is held back on a version gap; then " +
				after + " (schema: resequencer.max_wait).", p.MaxHold})
	}
	if e.Batch {
		fields = append(fields,
			PolicyField{"BatchSize", "BatchSize is the most events of one key in one call of the batch " +
				"handler (schema: batch.max_events).", p.BatchSize},
			PolicyField{"Linger", "Linger is how long a batch waits for more events of its key before the " +
				"handler gets fewer than BatchSize; zero: no wait (schema: batch.linger).", p.Linger})
	}
	return fields
}

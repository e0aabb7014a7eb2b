package runtime

import "time"

// Stats is a snapshot of an engine's counters. The counters only grow; the
// gauges (Pending, Held, Parked, ParkedKeys, Active) are current values.
//
// At every quiescent point (no Submit, Replay or Discard in progress) the
// accounting invariant holds:
//
//	Accepted + Restored == Handled + Skipped + Parked + DeadLettered + Dropped + Conflated + Pending
type Stats struct {
	// Accepted counts events Submit accepted.
	Accepted uint64
	// Restored counts parked events found in the park store when the engine
	// started (left by an earlier process).
	Restored uint64
	// Handled counts events whose handler succeeded, replays included.
	Handled uint64
	// Skipped counts events a handler skipped with Skip (guards).
	Skipped uint64
	// Retried counts failed attempts that were retried.
	Retried uint64
	// DeadLettered counts events handed to the dead-letter sink.
	DeadLettered uint64
	// Dropped counts events dropped by a declared policy: a failure under
	// at-most-once delivery, drop-oldest and drop-newest backlog policies,
	// and Discard.
	Dropped uint64
	// Discarded counts the part of Dropped that Discard removed.
	Discarded uint64
	// Conflated counts pending events replaced by a newer one of their key.
	Conflated uint64
	// Rejected counts submissions refused (full backlog, closed engine).
	// Rejected events were never accepted.
	Rejected uint64
	// Replayed counts parked events put back into their lane by Replay.
	Replayed uint64

	// Pending is the number of accepted events without an outcome yet:
	// queued, running, waiting to retry, held, or on their way to the park.
	Pending int64
	// Held is the part of Pending held back by Hold.
	Held int64
	// Parked is the number of events currently parked.
	Parked int64
	// ParkedKeys is the number of keys currently parked.
	ParkedKeys int64
	// Active is the number of keys that currently have a lane (pending
	// events or a park).
	Active int64
}

// KeyBacklog is one key's backlog, as reported by Engine.TopBacklog.
type KeyBacklog[K comparable] struct {
	// Key is the key.
	Key K
	// Pending is its number of pending events (the running one included).
	Pending int
	// OldestAge is the age of its oldest pending event.
	OldestAge time.Duration
}

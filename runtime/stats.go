package runtime

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stats is a snapshot of an engine's counters. The counters only grow; the
// gauges (Pending, Held, Parked, ParkedKeys, Lanes) are current values.
//
// At every quiescent point (no Submit, Replay or Discard in progress) the
// accounting invariant holds:
//
//	Accepted + Restored == Handled + Skipped + Parked + DeadLettered + Dropped + Discarded + Conflated + Withdrawn + Pending
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
	// Unimplemented counts the part of Skipped that was acknowledged, not
	// skipped by a guard: events skipped with the reason "unimplemented"
	// (runtime/genimpl's ReasonUnimplemented), which a generated guard
	// gives an event whose handler returned
	// ErrUnimplemented (their versions and states advanced as if applied).
	// Skipped - Unimplemented is what the guards (and handlers) skipped.
	Unimplemented uint64
	// Retried counts failed attempts that were retried.
	Retried uint64
	// DeadLettered counts events handed to the dead-letter sink.
	DeadLettered uint64
	// Dropped counts events dropped by a declared policy: a failure under
	// at-most-once delivery, and the drop-oldest and drop-newest backlog
	// policies.
	Dropped uint64
	// Discarded counts parked events that an operator's Discard removed.
	Discarded uint64
	// Conflated counts pending events replaced by a newer one of their key.
	Conflated uint64
	// Withdrawn counts events Withdraw took back before they started.
	Withdrawn uint64
	// Rejected counts submissions refused (full backlog, closed engine).
	// Rejected events were never accepted.
	Rejected uint64
	// Replayed counts parked events put back into their lane by Replay.
	Replayed uint64
	// Resynced counts the resyncs that succeeded (Config.Resync): keys
	// whose resequencer bound was hit and whose guards were brought up to
	// date from the source of truth instead of parking. The held events
	// they covered are counted as Skipped when the guards skip them.
	Resynced uint64

	// Pending is the number of accepted events without an outcome yet:
	// queued, running, waiting to retry, held, loaded for a replay, or on
	// their way to the park.
	Pending int64
	// Held is the part of Pending held back by Hold.
	Held int64
	// Parked is the number of events currently parked.
	Parked int64
	// ParkedKeys is the number of keys currently parked.
	ParkedKeys int64
	// Lanes is the number of keys that currently have a lane (pending
	// events or a park).
	Lanes int64
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

// Stats returns a snapshot of the engine's counters and gauges. It takes
// each shard's lock briefly; it is meant for metrics and tests, not for the
// hot path.
func (e *Engine[K, E]) Stats() Stats {
	var s Stats
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		s.Accepted += sh.accepted
		s.Rejected += sh.rejected
		s.Conflated += sh.conflated
		s.Dropped += sh.dropped
		s.Withdrawn += sh.withdrawn
		s.Lanes += int64(len(sh.lanes))
		sh.mu.Unlock()
	}
	ws := e.workerList()
	add := func(c *counters) {
		s.Handled += c.handled.Load()
		// The workers count the two kinds of skips apart, so that the part
		// never reads above the whole.
		u := c.unimplemented.Load()
		s.Unimplemented += u
		s.Skipped += c.skipped.Load() + u
		s.Retried += c.retried.Load()
		s.DeadLettered += c.deadLettered.Load()
		s.Dropped += c.dropped.Load()
		s.Discarded += c.discarded.Load()
		s.Replayed += c.replayed.Load()
		s.Resynced += c.resynced.Load()
	}
	for _, w := range ws {
		add(&w.c)
	}
	s.Restored = e.restored.Load()
	// One reading of each: Pending + Parked is then the backlog's load
	// exactly, even while events move to or from the park.
	s.Parked = e.parked.Load()
	s.Pending = e.pendingWith(s.Parked)
	s.Held = e.held.Load()
	s.ParkedKeys = e.parkedKeys.Load()
	return s
}

// TopBacklog returns up to n keys with the largest backlog, largest first,
// with the age of each one's oldest pending event. It visits every lane, so
// its cost grows with the number of keys that have pending events.
func (e *Engine[K, E]) TopBacklog(n int) []KeyBacklog[K] {
	if n <= 0 {
		return nil
	}
	top, _ := e.topAndOldest(n)
	return top
}

// Stuck returns the keys whose oldest pending event is older than age,
// oldest first: a key that stays in this list on steady traffic is hot or
// stuck. It visits every lane, like TopBacklog.
func (e *Engine[K, E]) Stuck(age time.Duration) []KeyBacklog[K] {
	var stuck []KeyBacklog[K]
	for _, kb := range e.backlog() {
		if kb.OldestAge > age {
			stuck = append(stuck, kb)
		}
	}
	slices.SortFunc(stuck, func(a, b KeyBacklog[K]) int { return cmp.Compare(b.OldestAge, a.OldestAge) })
	return stuck
}

// Health returns nil when no key's oldest pending event is older than age,
// and otherwise a *StuckError naming the keys: a readiness probe or an alert
// can use it directly.
func (e *Engine[K, E]) Health(age time.Duration) error {
	stuck := e.Stuck(age)
	if len(stuck) == 0 {
		return nil
	}
	se := &StuckError{Name: e.cfg.Name, Age: age, Keys: len(stuck), Oldest: stuck[0].OldestAge}
	for _, kb := range stuck[:min(len(stuck), 10)] {
		se.Sample = append(se.Sample, fmt.Sprint(kb.Key))
	}
	return se
}

// StuckError reports keys whose oldest pending event is older than a limit.
type StuckError struct {
	// Name is the engine's name.
	Name string
	// Age is the limit.
	Age time.Duration
	// Keys is how many keys are over it.
	Keys int
	// Oldest is the age of the oldest pending event among them.
	Oldest time.Duration
	// Sample names up to ten of them, oldest first.
	Sample []string
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("%s: %d keys have events pending for over %v (oldest %v): %s",
		e.Name, e.Keys, e.Age, e.Oldest.Round(time.Millisecond), strings.Join(e.Sample, ", "))
}

// topAndOldest returns up to n keys with the largest backlog, and the age of
// the oldest pending event of all.
func (e *Engine[K, E]) topAndOldest(n int) ([]KeyBacklog[K], time.Duration) {
	top := e.backlog()
	var oldest time.Duration
	for _, kb := range top {
		oldest = max(oldest, kb.OldestAge)
	}
	slices.SortFunc(top, func(a, b KeyBacklog[K]) int {
		if c := cmp.Compare(b.Pending, a.Pending); c != 0 {
			return c
		}
		return cmp.Compare(b.OldestAge, a.OldestAge)
	})
	if len(top) > n {
		top = top[:n]
	}
	return top, oldest
}

// backlog returns every key with pending events, in no order.
func (e *Engine[K, E]) backlog() []KeyBacklog[K] {
	now := e.now()
	var top []KeyBacklog[K]
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		for _, l := range sh.lanes {
			if p := l.pending(); p > 0 {
				at, _ := l.oldest()
				top = append(top, KeyBacklog[K]{Key: l.key, Pending: p, OldestAge: time.Duration(now - at)})
			}
		}
		// Keys without a lane wait in the inline batch or the inbox.
		first := make(map[K]int)
		sh.eachUnlaned(func(key K, at int64) {
			if j, ok := first[key]; ok {
				top[j].Pending++
				return
			}
			first[key] = len(top)
			top = append(top, KeyBacklog[K]{Key: key, Pending: 1, OldestAge: time.Duration(now - at)})
		})
		sh.mu.Unlock()
	}
	return top
}

// pendingCount returns the number of accepted events without an outcome:
// the backlog's load, less the events parked in memory that it counts.
func (e *Engine[K, E]) pendingCount() int64 { return e.pendingWith(e.parked.Load()) }

// pendingWith is pendingCount with parked read by the caller.
func (e *Engine[K, E]) pendingWith(parked int64) int64 {
	n := e.load.Load() - e.replayReserve.Load()
	if e.parksCount() {
		n -= parked
	}
	return n
}

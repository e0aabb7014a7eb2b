package runtime

import "sync/atomic"

// Retirement. Every event that reaches its outcome leaves the engine's
// books in retire, one function, whatever the path that gave the outcome: a
// refusal at the door (conflated, dropped by the backlog policy), an inline
// batch, a lane's turn, a park, a replay, a discard, a withdrawal. The order
// is always the same:
//
//  1. its key's room: the caller has taken the event out of what counts
//     against Backlog.PerKey (its lane, the unfinished part of an inline
//     batch, the inbox, the park) before it calls retire, under the
//     shard's lock or by moving the batch's position past it, and out of
//     or into the engine's count of parked events (which admission reads
//     to tell a park that only an operator can empty). Only the caller
//     knows where the event was, so this step is its own;
//  2. the total room: retire gives back the room the events held in
//     Backlog.Total and wakes the submitters waiting for room;
//  3. the counts: retire adds the outcomes to the counters Stats reads;
//  4. the reports: retire tells Config.OnOutcome each event's outcome.
//
// So a transport that learns of an outcome finds the event's room given
// back, and its count in Stats. Where the room passes to another event it
// is not given back, by design: an event conflated or dropped at the door
// hands it to the event that replaced it, an event parked in the engine's
// memory keeps it while parked, and an event replayed from a park outside
// memory hands it to the replay's next page (replayState.room), which
// retires it, with no event, when the replay ends.

// tally counts outcomes by kind, kept by whoever gives them (a turn, an
// inline run, an admission) until retire adds them to the counters.
// unimplemented counts the skips as unimplemented, apart from
// skipped (see skipReason). parked counts events that reached the park (a
// metric's counter; the engine's gauge of parked events is step 1's).
type tally struct {
	handled, skipped, unimplemented, deadLettered, dropped, discarded, conflated, withdrawn, parked uint64
}

// verdict counts n events finished with v, a verdict that finishes them
// where they run (handled, skipped, dropped).
func (t *tally) verdict(v verdict, n uint64) {
	switch v {
	case verdictHandled:
		t.handled += n
	case verdictSkipped, verdictSkippedApplied:
		t.skipped += n
	case verdictDropped:
		t.dropped += n
	}
}

// books says where retire counts: sh is the key's shard, and w the worker
// that gave the outcomes, nil for those given without one (at the door, by
// Withdraw). A worker counts the events it handled, skipped, dead-lettered,
// dropped or discarded; the shard, under its lock, the events conflated and
// withdrawn, and those dropped without a worker (at the door).
type books[K comparable, E any] struct {
	w  *worker[K, E]
	sh *shard[K, E]
}

// retire is where events retire (see the top of this file): the events
// counted in t have left their key's count; retire gives back room in the
// total backlog, counts t in to, and reports the outcome of each event of
// done that has one (done's events are key's). room is the total room the
// events held (none for one conflated or dropped at the door, or parked in
// memory), or what a replay held and gives back when it ends. done is the
// events to report: t counts them, but for a discard, which counts what the
// engine knew of the park and reports what the store held, and a run of
// inline events in an engine without OnOutcome, which reports none.
func (e *Engine[K, E]) retire(to books[K, E], t *tally, room int64, key K, done []item[E]) {
	if room != 0 {
		e.load.Add(-room)
	}
	e.room.BroadcastIfWaiting()
	if w := to.w; w != nil {
		addNonZero(&w.c.handled, t.handled)
		addNonZero(&w.c.skipped, t.skipped)
		addNonZero(&w.c.unimplemented, t.unimplemented)
		addNonZero(&w.c.deadLettered, t.deadLettered)
		addNonZero(&w.c.dropped, t.dropped)
		addNonZero(&w.c.discarded, t.discarded)
	} else if t.dropped != 0 {
		to.sh.dropped += t.dropped
	}
	if t.conflated != 0 || t.withdrawn != 0 {
		to.sh.conflated += t.conflated
		to.sh.withdrawn += t.withdrawn
	}
	addNonZero(&e.parkedTotal, t.parked)
	e.traceRetired(key, done)
	if e.cfg.OnOutcome != nil {
		for i := range done {
			if o := done[i].out; o != 0 {
				e.cfg.OnOutcome(key, done[i].tag, o)
			}
		}
	}
}

// addNonZero adds n to c unless n is 0, which saves an atomic add.
func addNonZero(c *atomic.Uint64, n uint64) {
	if n != 0 {
		c.Add(n)
	}
}

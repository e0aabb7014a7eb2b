package runtime

import (
	"sync/atomic"
)

// laneState says where a lane is in its life.
type laneState uint8

const (
	// laneIdle: in its shard's map but not scheduled. Only a lane with held
	// events or a park waits like this; any other lane that runs out of work
	// is removed at once.
	laneIdle laneState = iota
	// laneQueued: in the run queue, waiting for a worker.
	laneQueued
	// laneRunning: a worker owns it.
	laneRunning
	// laneWaiting: waiting for its timer (a retry's backoff, or room to load
	// a replay page); no worker is held.
	laneWaiting
)

// item is one pending event with its bookkeeping.
type item[E any] struct {
	ev E
	// at is when the event was accepted, in nanoseconds since the engine
	// started (monotonic).
	at int64
	// tag is the caller's tag from SubmitTagged, reported with the outcome.
	tag uint64
	// seq is a replayed event's Seq in the park store, where it is removed
	// at its outcome.
	seq uint64
	// attempts made so far.
	attempts int32
	// replayed marks an event loaded from the park by Replay.
	replayed bool
	// out is the outcome the worker gave it, reported when the event
	// retires (see endTake, retire).
	out Outcome
	// moved marks an event of an inline batch moved into its key's lane;
	// only a batch's entries use it. It sits in what would be padding, so
	// that an inbox entry of a small key and event fills one cache line.
	moved bool
}

// heldItem is an event set aside by Hold until its key's gap fills.
type heldItem[E any] struct {
	item[E]
	reason string
	heldAt int64
}

// lane is the FIFO of one key that has pending events (or held events, a
// park or an operator request). At most one worker runs a lane at a time,
// which is what keeps a key's events in order and never concurrent.
//
// Its shard's mutex guards every field of a lane but interrupt (an atomic
// hint). The events its worker took (taken, which is the worker's buffer)
// are the worker's: it writes their attempts and outcomes without the
// lock, and others read only their tags and replayed marks, under it. key and shard do not
// change while the lane is in its shard's map.
type lane[K comparable, E any] struct {
	key   K
	shard *shard[K, E]
	state laneState
	// q holds the events not yet taken by a worker.
	q queue[E]
	// inflight is the number of events the running worker took from q and
	// has not put back or retired (endTake); inflightAt is the acceptance
	// time of the oldest.
	inflight   int
	inflightAt int64
	// taken are the events the running worker took (its buffer): Withdraw
	// reads their tags, which the worker does not write, under the lock.
	taken []item[E]
	// held are the events set aside by Hold, in arrival order.
	held []heldItem[E]
	// holdCheck asks the worker to check the oldest held event's age.
	holdCheck bool
	holdArmed bool
	holdTimer timer
	// resync is set while the key's resequencer bound was hit and
	// Config.Resync is to bring its guards up to date (resync.go): the lane
	// takes no event meanwhile. resyncTries counts the calls made, and
	// resyncWhy is the bound, the reason of the park if they fail.
	resync      bool
	resyncTries int32
	resyncWhy   string
	// lingering marks a lane of a batch engine that waits for its timer for
	// more events (Config.Linger); a full batch ends the wait (submit).
	lingering bool
	// owned marks a lane a spill made for the event that the batch's worker
	// runs inline (inlineBatch.owned): that worker owns the lane, ownedTag
	// is that event's tag, and ownedIt the event itself (in the batch), for
	// an operator to find its attempt (operator.go).
	owned    bool
	ownedTag uint64
	ownedIt  *item[E]
	// seized marks a running lane whose turn ParkNow took over while its
	// handler ran (operator.go): the lane left its shard's map, the turn's
	// finished events are retired and the others are another lane's, so
	// its worker's endTake leaves them alone.
	seized bool
	// failErr is the failure of the event at the front of q when it is
	// about to be parked, for its ParkedEvent.Err.
	failErr error
	// parked: the key's events go to the park until Replay or Discard.
	parked bool
	reason string
	// stored is the number of this key's events in the park that are not
	// loaded for a replay (for a durable store, as far as this engine
	// knows: what it found at start and what it parked since).
	stored int
	// req is an operator request (replay, discard) for the worker to serve.
	req *request
	// replay tracks a replay in progress.
	replay *replayState
	// withdraws are Withdraw requests for the worker to serve; interrupt
	// tells the worker, between two events it took, to serve them first.
	withdraws []*withdrawal
	interrupt atomic.Bool
	// timer wakes the lane after a backoff.
	timer timer
	// next links recycled lanes in their shard's free list.
	next *lane[K, E]
}

// count is the lane's share of the per-key backlog: queued, running and
// held events, and its park when the park counts (see Engine.parksCount)
// or is being replayed (a replay loads a durable park into the lane, so
// events that arrive meanwhile must leave it room).
func (l *lane[K, E]) count(parksCount bool) int {
	n := l.q.len() + l.inflight + len(l.held)
	if parksCount || l.replay != nil {
		n += l.stored
	}
	return n
}

// pending is the lane's events without an outcome: queued, running, held.
func (l *lane[K, E]) pending() int { return l.q.len() + l.inflight + len(l.held) }

// oldest returns the acceptance time of the lane's oldest pending event and
// whether it has any.
func (l *lane[K, E]) oldest() (int64, bool) {
	var t int64
	ok := false
	consider := func(at int64) {
		if !ok || at < t {
			t, ok = at, true
		}
	}
	if l.inflight > 0 {
		consider(l.inflightAt)
	}
	if len(l.held) > 0 {
		consider(l.held[0].at)
	}
	if l.q.len() > 0 {
		consider(l.q.front().at)
	}
	return t, ok
}

// conflatable reports whether a new event may replace the newest queued
// one: there is one, the key is not parked, and it is not a replayed event
// (which must reach its own outcome to leave the park).
func (l *lane[K, E]) conflatable() bool {
	return l.q.len() > 0 && !l.parked && !l.q.back().replayed
}

// runnable reports whether a worker has something to do on the lane: queued
// events, an operator request, a withdrawal, a hold check or a replay page
// to load, a resync. Whoever stops running a lane must look, since requests and hold
// checks arrive on a running lane without scheduling it. The shard is
// locked.
func (l *lane[K, E]) runnable() bool {
	return l.q.len() > 0 || l.req != nil || len(l.withdraws) > 0 || l.holdCheck || l.resync || l.wantsPage()
}

// takesSelected reports whether the running worker took an event that sel
// selects (by its tag and whether it is replayed); the shard is locked.
func (l *lane[K, E]) takesSelected(sel func(tag uint64, replayed bool) bool) bool {
	if l.owned && sel(l.ownedTag, false) {
		return true
	}
	for i := range l.taken {
		if sel(l.taken[i].tag, l.taken[i].replayed) {
			return true
		}
	}
	return false
}

// removable reports whether the lane holds nothing and can leave the map.
func (l *lane[K, E]) removable() bool {
	return l.q.len() == 0 && l.inflight == 0 && len(l.held) == 0 && !l.parked && l.stored == 0 &&
		l.req == nil && l.replay == nil && len(l.withdraws) == 0
}

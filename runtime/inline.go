package runtime

import (
	"math"
	"sync/atomic"
)

// Inline dispatch. Most events find their key without a lane and need none:
// the worker that takes a shard's inbox runs those events itself, in inbox
// order, without making a lane, which is what keeps the engine near the
// cost of an unordered worker pool. It stays correct because a key without
// a lane has its events nowhere but in the inbox, and one worker at a time
// runs a shard's inbox.
//
// The position protocol. The batch's pos is the index of the event the
// worker runs (or last ran): -1 before the first, posDone after the last
// (or when the worker gives the rest back), posSpilled after a spill. The
// worker claims event j with a compare-and-swap of pos from j-1 to j, so
// event j-1 leaves its key's count (unlanedCount reads the batch from pos)
// exactly when j is claimed; only then can j-1 retire (retire.go). An
// engine that reports outcomes (Config.OnOutcome) retires each event right
// after it claimed the next one, so that its room is given back before its
// outcome is reported; one that does not retires the events it finished in
// runs (an inlineRun), at least every releaseEvery events, or sooner when
// someone waits for room (every waitChunk events).
//
// A key gets a lane when its event cannot finish inline (it fails, is held,
// or is parked): the worker makes the lane, moves the key's later events of
// the batch and the inbox into it, and goes on with the batch. A slow
// handler cannot hold the rest of the batch up: the watchdog (run on each
// clock tick) sees a batch that made no progress since the last tick, or a
// long batch while workers sleep, and spills the remainder (while
// goroutines wait for a processor, only a batch without progress for
// contendedTicks ticks: its worker may just wait for a CPU): under the
// shard's lock it swaps pos to posSpilled, moves the remainder into lanes
// that any worker runs, gives the running event's key a lane owned by the
// stuck worker, and ends the worker's dispatching. Withdraw spills it the same
// way. So an event is run inline or moved to a lane, never both.
//
// A batch is the inbox as it was when the worker took it: what arrives
// meanwhile waits for the shard's next turn, which goes to the back of the
// ready tasks. (Turns of a budget, as lanes have, were tried: ending a turn
// early and taking the inbox a budget at a time cost a third of the
// throughput with one key taking half of the events, whose backlog then
// slid along its buffer, reallocated again and again.)

// posSpilled and posDone are the batch positions after a spill and after the
// last event.
const (
	posSpilled = math.MinInt64
	posDone    = math.MinInt64 + 1
)

// releaseEvery is how many finished inline events a worker releases at once
// when nobody waits for room.
const releaseEvery = 64

// waitChunk is how many finished inline events a worker releases at once
// while a submitter waits for room: a 64th of the smaller backlog limit,
// from 1 to releaseEvery. Releasing each event woke the waiting submitter
// for each one, to submit one event and sleep again (a sleep and a wake-up
// per event: uniform-1us took 2-6% longer with them); a chunk
// wakes it once for a run of submissions, and a small limit still gets its
// room back event by event.
func waitChunk(b Backlog) int64 {
	return min(max(int64(min(b.PerKey, b.Total))/64, 1), releaseEvery)
}

// inlineBatch is an inbox taken by a worker to run inline. The worker owns
// its entries: it writes an event's attempts without a lock. The shard's
// mutex guards seen, still and owned, and the entries' moved marks; others
// (admission's count, the watchdog, Withdraw, Stats) read, under it, only
// the keys, tags, times and moved marks of the entries, but a spill, which
// moves whole the entries after pos: the worker can no longer claim them.
// pos is atomic (see the position protocol above).
type inlineBatch[K comparable, E any] struct {
	entries []entry[K, E]
	// pos is the index of the event the worker runs (or last ran), -1
	// before the first, posSpilled or posDone.
	pos atomic.Int64
	// seen is pos at the watchdog's last look, and still the number of
	// looks in a row that found it there (under the shard's lock).
	seen  int64
	still int
	// owned is the lane a spill gave the key of the event at pos, which
	// the batch's worker owns and goes on with (under the shard's lock).
	// The worker takes that lane and no other: a lane found by key might be
	// one that a later spill made for another worker (the key's lane of
	// this batch ended meanwhile and the key came back in a new batch).
	owned *lane[K, E]
}

// giveBack returns the batch's buffer to sh as its spare; sh.mu is held.
func (b *inlineBatch[K, E]) giveBack(sh *shard[K, E]) {
	clear(b.entries)
	if cap(b.entries) > cap(sh.spareInbox) {
		sh.spareInbox = b.entries[:0]
	}
	b.entries = nil
}

// inlineRun is what an inline batch finished and has not retired yet: n
// events, counted in t, whose room retire gives back together. In an
// engine that reports outcomes, a run is the one event last finished, of
// key, with its tag and outcome in last: it retires once the worker
// claimed the next event, and until then its outcome is unreported (see
// worker.reporting).
type inlineRun[K comparable, E any] struct {
	t    tally
	n    int64
	key  K
	last [1]item[E]
}

// noteLast makes en, finished inline with verdict v, r's one event, in an
// engine that reports outcomes: it retires once the worker claimed the
// next event.
func (w *worker[K, E]) noteLast(r *inlineRun[K, E], en *entry[K, E], v verdict) {
	r.key, r.last[0].tag, r.last[0].out = en.key, en.it.tag, v.outcome()
	w.reporting.Store(true)
}

// retireRun retires r's events (their key's count no longer holds them),
// if it has any, and empties it.
func (w *worker[K, E]) retireRun(sh *shard[K, E], r *inlineRun[K, E]) {
	if r.n == 0 {
		return
	}
	e := w.e
	if e.cfg.OnOutcome == nil {
		e.retire(books[K, E]{w: w, sh: sh}, &r.t, r.n, r.key, nil)
		r.t, r.n = tally{}, 0
		return
	}
	e.retire(books[K, E]{w: w, sh: sh}, &r.t, r.n, r.key, r.last[:])
	r.t, r.n = tally{}, 0
	w.reporting.Store(false)
}

// dispatchInline runs the events of sh's inbox inline (see the top of this
// file). It returns when the batch is done, given back or spilled; a lane it
// returns is running and this worker's to go on with.
func (w *worker[K, E]) dispatchInline(sh *shard[K, E]) *lane[K, E] {
	e := w.e
	b := &w.ib
	sh.mu.Lock()
	// The shard keeps two buffers: the inbox and a spare, swapped here and
	// given back at the end, so that a busy shard's inbox does not regrow.
	b.entries, sh.inbox, sh.spareInbox = sh.inbox, sh.spareInbox[:0], nil
	b.pos.Store(-1)
	b.seen, b.still, b.owned = -2, 0, nil
	sh.cur, sh.curLen = b, len(b.entries)
	sh.mu.Unlock()

	var run inlineRun[K, E] // finished, not retired: they end before pos
	tracked := e.cfg.OnOutcome != nil
	chunk := waitChunk(e.cfg.Backlog)
	for j := range b.entries {
		if !b.pos.CompareAndSwap(int64(j-1), int64(j)) {
			return w.spilledAfter(sh, b, &run)
		}
		// Event j-1 has left its key's count: it can retire.
		if run.n != 0 && (tracked || run.n >= releaseEvery || run.n >= chunk && e.room.Waiting()) {
			w.retireRun(sh, &run)
		}
		if e.boxed && j+prefetchAhead < len(b.entries) {
			prefetch(boxOf(&b.entries[j+prefetchAhead].it.ev, e.boxAt))
		}
		en := &b.entries[j]
		if en.it.moved {
			continue
		}
		if e.aborted.Load() {
			w.retireRun(sh, &run) // Close gave up: the rest stays pending
			return nil
		}
		err := w.attempt(en.key, &en.it, notStarted{pos: &b.pos, at: int64(j)})
		v, reason, failure := w.judge(&en.it, err, false)
		if v.finishesInline() {
			run.t.verdict(v, 1)
			run.n++
			if v != verdictHandled {
				w.skipReason(&run.t, v, reason, 1)
			}
			if tracked {
				w.noteLast(&run, en, v)
			}
			continue
		}
		w.retireRun(sh, &run)
		if v == verdictAbandoned {
			return nil // Close gave up: the rest stays pending
		}
		if l, spilled := w.laneForFailure(sh, b, j, v, reason, failure); spilled {
			return l // the batch is not ours any more; l, if any, is
		}
	}
	if !b.pos.CompareAndSwap(int64(len(b.entries)-1), posDone) {
		return w.spilledAfter(sh, b, &run)
	}
	// The last event has left its key's count. It retires before the batch
	// ends (before idle: Stats after Flush finds it finished), and without
	// the lock: OnOutcome is called for inline events without one.
	w.retireRun(sh, &run)
	sh.mu.Lock()
	sh.cur, sh.curLen = nil, 0
	b.giveBack(sh)
	push := len(sh.inbox) > 0
	if !push {
		sh.tasked = false
		e.idle(sh)
	}
	sh.mu.Unlock()
	if push {
		// More arrived meanwhile: the shard goes to the back of the ready
		// tasks (it stays tasked and busy), behind those that waited;
		// this worker, back for a task next, may be the one to take it.
		e.rq.pushInbox(task[K, E]{s: sh})
	}
	return nil
}

// laneForFailure gives the key of the batch's event j, whose attempt's
// verdict v (with reason and failure, see judge) needs a lane (a retry, a
// hold, a park, a dead letter, a withdrawal), a lane: the event and the
// key's later events of the batch and the inbox move into it, and the
// lane's machinery takes over. It reports spilled when the batch was
// spilled meanwhile; then the returned lane, if any, is running and this
// worker's to go on with.
func (w *worker[K, E]) laneForFailure(sh *shard[K, E], b *inlineBatch[K, E], j int, v verdict, reason string, failure error) (l *lane[K, E], spilled bool) {
	e := w.e
	en := &b.entries[j]
	sh.mu.Lock()
	if b.pos.Load() != int64(j) {
		// The watchdog spilled the batch while the handler ran and gave this
		// key a lane that this worker owns: apply the event's verdict in it
		// and go on with the lane.
		l, b.owned = b.owned, nil
		if l == nil { // spillBatch always makes it; never leave the event without one
			l = sh.newLane(en.key)
			l.state = laneRunning
			sh.busy++
		}
		l.owned = false
		w.buf = append(w.buf[:0], en.it)
		b.giveBack(sh)
		running := w.applyInLane(l, v, reason, failure)
		sh.mu.Unlock()
		if running {
			return l, true
		}
		return nil, true
	}
	l = sh.newLane(en.key)
	l.state = laneRunning
	sh.busy++
	en.it.moved = true // it is the lane's now: the batch no longer counts it
	// The key's later events, in the batch and then in the inbox, join the
	// lane now, so that none of them can run before this one.
	for m := j + 1; m < len(b.entries); m++ {
		if later := &b.entries[m]; !later.it.moved && later.key == en.key {
			l.q.pushBack(later.it)
			later.it.moved = true
		}
	}
	kept := sh.inbox[:0]
	for _, later := range sh.inbox {
		if later.key == en.key {
			l.q.pushBack(later.it)
		} else {
			kept = append(kept, later)
		}
	}
	clear(sh.inbox[len(kept):])
	sh.inbox = kept
	w.buf = append(w.buf[:0], en.it)
	// The lane runs elsewhere: this worker goes on with the batch.
	if w.applyInLane(l, v, reason, failure) {
		// A request may have come while the lock was released around the
		// handler's verdict or the park store (see runnable).
		if l.runnable() {
			l.state = laneQueued // still busy
			sh.mu.Unlock()
			e.rq.push(task[K, E]{l: l})
			return nil, false
		}
		l.state = laneIdle
		e.idle(sh)
		if l.removable() {
			sh.removeLane(l)
		}
	}
	sh.mu.Unlock()
	return nil, false
}

// applyInLane applies v, the verdict of the one event in w.buf, to l as if
// l's turn had taken it; l is running and its shard locked, and the shard
// is locked again on return. It reports whether l is still running (the
// caller decides what next); otherwise l waits for its timer or was given
// up.
func (w *worker[K, E]) applyInLane(l *lane[K, E], v verdict, reason string, failure error) bool {
	sh := l.shard
	l.inflight, l.inflightAt, l.taken = 1, w.buf[0].at, w.buf[:1]
	w.laneHeld = len(l.held) > 0
	sh.mu.Unlock()
	w.held = w.held[:0]
	done := 0
	res, stop := w.apply(l, 0, 1, v, reason, failure, &done)
	if !stop {
		res = result{kind: ranAll, stopAt: 1, done: done}
	}
	sh.mu.Lock()
	switch w.endTake(l, res) {
	case keepRunning:
		return true
	case waitForTimer:
		return !w.waits(l)
	case giveUp:
		l.state = laneIdle
		w.e.idle(sh)
	}
	return false
}

// spilledAfter runs when the worker finds its batch spilled after the
// event it ran last (or before the first); run holds the events it
// finished and has not retired, the last of them, if any, the one at the
// spill's position. If the spill gave that event's key a lane owned by
// this worker (b.owned), the worker goes on with it: spilledAfter returns
// it, running.
func (w *worker[K, E]) spilledAfter(sh *shard[K, E], b *inlineBatch[K, E], run *inlineRun[K, E]) *lane[K, E] {
	// Taking the lock also waits for the watchdog to finish with the
	// batch's entries before this worker reuses them.
	sh.mu.Lock()
	l := b.owned // made for the event at pos, if the spill found it running
	b.owned = nil
	b.giveBack(sh)
	if l == nil {
		// The spill moved the rest of the batch to lanes and may have left
		// the shard quiet: the run retires before Flush can return. (An
		// event run inline, one that OnOutcome is told of, was at the
		// spill's position and got the owned lane: this run reports
		// nothing.)
		w.retireRun(sh, run)
		sh.mu.Unlock()
		return nil
	}
	l.owned = false
	l.inflight, l.taken = 0, nil // the event is finished: it leaves its lane's count
	sh.mu.Unlock()
	// The owned lane keeps the shard busy until the worker has run it.
	w.retireRun(sh, run)
	return l
}

// spillBatch moves the remainder of sh's inline batch, and the inbox, into lanes
// and ends the worker's dispatching; sh.mu is held. It returns ready with
// the lanes that became ready appended, for the caller to push after
// unlocking.
func (e *Engine[K, E]) spillBatch(sh *shard[K, E], b *inlineBatch[K, E], ready []*lane[K, E]) []*lane[K, E] {
	// The worker claims its events without the lock: between the look and
	// the swap it may have claimed the next one. Look again then, or that
	// event and the rest would stay in a batch that nobody spilled (and a
	// Withdraw that looked at nothing else would let them run after it
	// returned). The worker only moves forward, so this ends.
	var p int64
	for {
		p = b.pos.Load()
		if p == posSpilled || p == posDone {
			return ready
		}
		if e.cfg.onSpillLook != nil {
			e.cfg.onSpillLook()
		}
		if b.pos.CompareAndSwap(p, posSpilled) {
			break
		}
	}
	sh.cur, sh.curLen = nil, 0
	if p >= 0 {
		// The event the worker runs now: its key gets a lane the worker
		// owns, so that the key's later events wait behind it. Only its
		// key, position and time are read: the worker writes its attempts.
		en := &b.entries[p]
		if !en.it.moved && sh.lanes[en.key] == nil {
			l := sh.newLane(en.key)
			l.state = laneRunning
			l.owned = true
			l.inflight, l.inflightAt, l.ownedTag, l.ownedIt = 1, en.it.at, en.it.tag, &en.it
			sh.busy++
			b.owned = l
		}
	}
	// The rest of the batch, then the inbox, go to lanes: a key that got a
	// lane here must find all its later events behind it.
	for m := int(p) + 1; m < len(b.entries); m++ {
		if en := &b.entries[m]; !en.it.moved {
			ready = e.joinLane(sh, en, ready)
		}
	}
	return e.inboxToLanes(sh, ready)
}

// joinLane appends en's event to its key's lane, made if the key has none,
// and appends the lane to ready if that made it ready; sh.mu is held.
func (e *Engine[K, E]) joinLane(sh *shard[K, E], en *entry[K, E], ready []*lane[K, E]) []*lane[K, E] {
	l := sh.lanes[en.key]
	if l == nil {
		l = sh.newLane(en.key)
	}
	l.q.pushBack(en.it)
	if e.schedule(l) {
		ready = append(ready, l)
	}
	return ready
}

// inboxToLanes moves sh's inbox into its keys' lanes (joinLane) and ends
// the dispatching of sh's task: the shard is no longer tasked. It returns
// ready with the lanes that became ready; sh.mu is held.
func (e *Engine[K, E]) inboxToLanes(sh *shard[K, E], ready []*lane[K, E]) []*lane[K, E] {
	for m := range sh.inbox {
		ready = e.joinLane(sh, &sh.inbox[m], ready)
	}
	clear(sh.inbox)
	sh.inbox = sh.inbox[:0]
	sh.tasked = false
	e.idle(sh)
	return ready
}

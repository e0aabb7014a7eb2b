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
// dispatches a shard's inbox.
//
// A key gets a lane when its event cannot finish inline (it fails, is held,
// or is parked): the worker makes the lane, moves the key's later events of
// the batch into it, and goes on with the batch. A slow handler cannot hold
// the rest of the batch up: the watchdog (run on each clock tick) sees a
// batch that made no progress since the last tick, or a long batch while
// workers sleep, and steals the remainder: it moves it into lanes that any
// worker runs, gives the running event's key a lane owned by the stuck
// worker, and hands the shard's dispatching to another worker.
//
// The worker claims each event with a compare-and-swap on the batch's
// position; the watchdog steals with a compare-and-swap to posStolen. So an
// event is run inline or moved to a lane, never both.

// posStolen and posDone are the batch positions after a steal and after the
// last event.
const (
	posStolen = math.MinInt64
	posDone   = math.MinInt64 + 1
)

// longBatch is the remainder at which the watchdog shares a batch that
// makes progress, when workers sleep.
const longBatch = 64

// inlineBatch is an inbox taken by a worker to run inline.
type inlineBatch[K comparable, E any] struct {
	entries []entry[K, E]
	// pos is the index of the event the worker runs (or last ran), -1
	// before the first, posStolen or posDone.
	pos atomic.Int64
	// seen is pos at the watchdog's last look (under the shard's lock).
	seen int64
}

// giveBack returns the batch's buffer to sh as its spare; sh.mu is held.
func (b *inlineBatch[K, E]) giveBack(sh *shard[K, E]) {
	clear(b.entries)
	if cap(b.entries) > cap(sh.reserve) {
		sh.reserve = b.entries[:0]
	}
	b.entries = nil
}

// dispatchInline runs the events of sh's inbox inline (see the top of this
// file). It returns when the batch is done or stolen.
func (w *worker[K, E]) dispatchInline(sh *shard[K, E]) {
	e := w.e
	b := &w.ib
	sh.mu.Lock()
	// The shard keeps two buffers: the inbox and a spare, swapped here and
	// given back at the end, so that a busy shard's inbox does not regrow.
	b.entries, sh.inbox, sh.reserve = sh.inbox, sh.reserve[:0], nil
	b.pos.Store(-1)
	b.seen = -2
	sh.cur = b
	// No event of the batch has a lane: a key with a lane gets its events
	// in the lane, and whoever makes a lane (laneForFailure, steal) moves
	// the key's events out of the inbox into it.
	sh.mu.Unlock()

	// done counts the events finished and not yet reported to finish. They
	// are reported only once they have left every per-key count (keyPending
	// reads the batch from pos, and the whole batch while sh.cur is set), so
	// that a submitter that finish wakes finds the room it waits for.
	done := int64(0)
	for j := range b.entries {
		if !b.pos.CompareAndSwap(int64(j-1), int64(j)) {
			w.stolenAfter(sh, b, j-1, done)
			return
		}
		if done >= 64 { // every event before j has left the count
			w.finish(done)
			done = 0
		}
		en := &b.entries[j]
		if en.moved {
			continue
		}
		if e.aborted.Load() {
			w.finish(done) // Close gave up: the rest stays pending
			return
		}
		err := w.attempt(en.key, &en.it)
		if err == nil {
			w.c.handled.Add(1)
			e.report(en.key, en.it.tag, Handled)
			done++
			continue
		}
		if reason, ok := IsSkip(err); ok {
			w.c.skipped.Add(1)
			if e.metrics != nil {
				w.skips.add(reason)
			}
			e.report(en.key, en.it.tag, Skipped)
			done++
			continue
		}
		if e.aborted.Load() {
			w.finish(done)
			return
		}
		w.finish(done)
		done = 0
		if !w.laneForFailure(sh, b, j, err) {
			return // stolen meanwhile: the lane goes on, the batch is not ours
		}
	}
	if !b.pos.CompareAndSwap(int64(len(b.entries)-1), posDone) {
		w.stolenAfter(sh, b, len(b.entries)-1, done)
		return
	}
	sh.mu.Lock()
	sh.cur = nil
	b.giveBack(sh)
	// The batch has left the count; and finish comes before idle, so that
	// Stats after Flush finds these events finished.
	w.finish(done)
	push := len(sh.inbox) > 0
	if !push {
		sh.queued = false
		e.idle(sh)
	}
	sh.mu.Unlock()
	if push {
		// More arrived meanwhile: back of the queue, so other shards get
		// their turn (the shard stays queued and busy).
		e.rq.push(task[K, E]{s: sh})
	}
}

// laneForFailure gives the key of the batch's event j, which failed with
// err (or was held), a lane: the event and the key's later events of the
// batch move into it, and the lane's machinery (retry, hold, park, dead
// letter) takes over. It reports false when the batch was stolen meanwhile.
func (w *worker[K, E]) laneForFailure(sh *shard[K, E], b *inlineBatch[K, E], j int, err error) bool {
	e := w.e
	en := &b.entries[j]
	sh.mu.Lock()
	if b.pos.Load() != int64(j) {
		// The watchdog stole the batch while the handler ran and gave this
		// key a lane that this worker owns: settle the event in it and run
		// the rest of the lane.
		l := sh.lanes[en.key]
		if l == nil { // steal always makes it; never leave the event without one
			l = sh.newLane(en.key)
			sh.lanes[en.key] = l
			l.state = laneRunning
			sh.busy++
		}
		l.inline = false
		w.buf = append(w.buf[:0], en.it)
		b.giveBack(sh)
		if w.settleTaken(l, err) {
			w.drive(l, 0)
		} else {
			sh.mu.Unlock()
		}
		return false
	}
	l := sh.newLane(en.key)
	sh.lanes[en.key] = l
	l.state = laneRunning
	sh.busy++
	// The key's later events, in the batch and then in the inbox, join the
	// lane now, so that none of them can run before this one.
	for m := j + 1; m < len(b.entries); m++ {
		if later := &b.entries[m]; !later.moved && later.key == en.key {
			l.q.pushBack(later.it)
			later.moved = true
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
	if w.settleTaken(l, err) {
		// A Replay or Discard may have come while the lock was released
		// around the handler's verdict or the park store (see runnable).
		if l.runnable() {
			l.state = laneQueued // still busy
			sh.mu.Unlock()
			e.rq.push(task[K, E]{l: l})
			return true
		}
		l.state = laneIdle
		e.idle(sh)
		if l.removable() {
			sh.removeLane(l)
		}
	}
	sh.mu.Unlock()
	return true
}

// settleTaken applies err, the result of the one event in w.buf, to l as if
// l's run had taken it; l is running and its shard locked, and the shard is
// locked again on return. It reports whether l is still running (the caller
// decides what next); otherwise l waits for its retry timer or was given up.
func (w *worker[K, E]) settleTaken(l *lane[K, E], err error) bool {
	sh := l.shard
	l.inflight, l.inflightAt = 1, w.buf[0].at
	sh.mu.Unlock()
	w.held = w.held[:0]
	done := 0
	res, stop := w.judge(l, &w.buf[0], err, 0, &done)
	if !stop {
		res = result{kind: ranAll, stopAt: 1, done: done}
	}
	sh.mu.Lock()
	switch w.settle(l, res) {
	case keepRunning:
		return true
	case giveUp:
		l.state = laneIdle
		w.e.idle(sh)
	}
	return false
}

// stolenAfter runs when the worker finds its batch stolen after it ran the
// event at index p (or before the first, p == -1); done counts the events
// it finished and has not reported to finish. If the watchdog gave that
// event's key a lane owned by this worker, the worker runs it now.
func (w *worker[K, E]) stolenAfter(sh *shard[K, E], b *inlineBatch[K, E], p int, done int64) {
	// Taking the lock also waits for the watchdog to finish with the
	// batch's entries before this worker reuses them.
	sh.mu.Lock()
	var l *lane[K, E]
	if p >= 0 {
		l = sh.lanes[b.entries[p].key]
	}
	b.giveBack(sh)
	own := l != nil && l.inline
	if own {
		l.inline = false
		l.inflight = 0 // event p is finished: it leaves its lane's count
	}
	w.finish(done) // the steal moved the rest of the batch to lanes
	if !own {
		sh.mu.Unlock()
		return
	}
	w.drive(l, 0)
}

// steal moves the remainder of sh's inline batch, and the inbox, into lanes
// and ends the worker's dispatching; sh.mu is held. It returns ready with
// the lanes that became ready appended, for the caller to push after
// unlocking.
func (e *Engine[K, E]) steal(sh *shard[K, E], b *inlineBatch[K, E], ready []*lane[K, E]) []*lane[K, E] {
	p := b.pos.Load()
	if p == posStolen || p == posDone || !b.pos.CompareAndSwap(p, posStolen) {
		return ready
	}
	sh.cur = nil
	if p >= 0 {
		// The event the worker runs now: its key gets a lane the worker
		// owns, so that the key's later events wait behind it.
		en := &b.entries[p]
		if !en.moved && sh.lanes[en.key] == nil {
			l := sh.newLane(en.key)
			sh.lanes[en.key] = l
			l.state = laneRunning
			l.inline = true
			l.inflight, l.inflightAt = 1, en.it.at
			sh.busy++
		}
	}
	// The rest of the batch, then the inbox, go to lanes: a key that got a
	// lane here must find all its later events behind it.
	toLane := func(en *entry[K, E]) {
		l := sh.lanes[en.key]
		if l == nil {
			l = sh.newLane(en.key)
			sh.lanes[en.key] = l
		}
		l.q.pushBack(en.it)
		if e.schedule(l) {
			ready = append(ready, l)
		}
	}
	for m := int(p) + 1; m < len(b.entries); m++ {
		if en := &b.entries[m]; !en.moved {
			toLane(en)
		}
	}
	for m := range sh.inbox {
		toLane(&sh.inbox[m])
	}
	clear(sh.inbox)
	sh.inbox = sh.inbox[:0]
	// The worker's dispatching ends here.
	sh.queued = false
	e.idle(sh)
	return ready
}

// watchBatches runs on each clock tick: it steals the remainder of every
// inline batch that made no progress since the last tick, or that is long
// while workers sleep.
func (e *Engine[K, E]) watchBatches() {
	if !e.inline {
		return
	}
	sleepers := e.rq.sleepers() > 0
	var ready []*lane[K, E]
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		b := sh.cur
		if b == nil {
			sh.mu.Unlock()
			continue
		}
		p := b.pos.Load()
		stuck := p == b.seen
		long := sleepers && int64(len(b.entries))-p-1 >= longBatch
		b.seen = p
		if !stuck && !long {
			sh.mu.Unlock()
			continue
		}
		ready = e.steal(sh, b, ready[:0])
		sh.mu.Unlock()
		e.rq.pushLanes(ready)
	}
}

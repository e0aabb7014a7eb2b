package runtime

import "sync"

// shard is one stripe of the engine's keys. Keys are spread over shards by a
// seeded hash only to spread lock contention: a shard never serialises the
// handling of its keys, which run on their own lanes or inline.
//
// The shard owns the per-key backlog count of its keys, under its lock: a
// key with a lane counts what its lane holds (lane.count); a key without
// one counts its events in the inbox and in the unfinished part of the
// inline batch (unlanedCount, and the headroom a full count leaves:
// headroom.go). Nothing else keeps a per-key count. For each
// key, either it has a lane and none of its events are in the inbox or the
// batch, or it has no lane: whoever makes a lane moves the key's events
// into it.
type shard[K comparable, E any] struct {
	// mu guards every field below but lanePool (safe for concurrent use),
	// and every field of the shard's lanes but lane.interrupt; see the lock
	// rule in scheduler.go.
	mu         sync.Mutex
	lanes      map[K]*lane[K, E]
	inbox      []entry[K, E]
	spareInbox []entry[K, E] // the other inbox buffer (see dispatchInline)
	tasked     bool          // the shard's task is in the run queue, or running
	// cur is the inbox being run inline by a worker, nil when none is.
	cur *inlineBatch[K, E]
	// ready holds lanes a submitter made ready in an engine whose keys run
	// in lanes: the worker that takes the shard's task takes them too.
	ready []*lane[K, E]
	// busy counts the shard's lanes that are queued, running or waiting for
	// their timer, plus one while the shard is tasked. Flush waits for zero.
	busy   int
	closed bool
	free   *lane[K, E]
	nfree  int
	segs   segPool[E]
	// lanePool holds the shard's lanes beyond its free list. A lane stays in
	// its shard for life: its timers' functions read l.shard to lock it.
	lanePool *sync.Pool
	// counts of Stats
	accepted  uint64
	rejected  uint64
	conflated uint64
	dropped   uint64
	withdrawn uint64
	// curLen is len(cur.entries) (0 without cur), kept here so that a
	// submitter's admission reads nothing of the running worker's batch,
	// whose cache line the worker writes at every event (its pos). It and
	// headroom come after the others, in what was padding, so that the
	// fields before them keep their places.
	curLen int
	// headroom is the per-key limit's headroom for keys without a lane
	// (headroom.go), used only while the shard holds PerKey of their
	// events: cold, it serves as most of the padding that keeps the next
	// shard's lock off this shard's last cache line.
	headroom perKeyHeadroom[K]
	_        [16]byte
}

// entry is an event in a shard's inbox (it.moved marks one of an inline
// batch moved into its key's lane).
type entry[K comparable, E any] struct {
	key K
	it  item[E]
}

// newLane returns a recycled or new lane for key; sh.mu is held.
func (sh *shard[K, E]) newLane(key K) *lane[K, E] {
	l := sh.free
	if l != nil {
		sh.free = l.next
		sh.nfree--
		l.next = nil
	} else if spare, ok := sh.lanePool.Get().(*lane[K, E]); ok {
		l = spare
	} else {
		l = &lane[K, E]{shard: sh}
		l.q.pool = &sh.segs
	}
	l.key = key
	sh.lanes[key] = l
	return l
}

// removeLane deletes an empty lane from the map and recycles it; sh.mu is held.
// A lane that ParkNow seized left the map already: its key's lane there is
// another.
func (sh *shard[K, E]) removeLane(l *lane[K, E]) {
	if sh.lanes[l.key] == l {
		delete(sh.lanes, l.key)
	}
	var zero K
	l.key = zero
	l.q.release()
	l.owned, l.ownedIt, l.seized = false, nil, false
	l.held = nil
	l.reason = ""
	l.resync, l.resyncTries, l.resyncWhy, l.lingering = false, 0, "", false
	l.stored = 0
	l.state = laneIdle
	if sh.nfree < maxFreeLanes {
		l.next = sh.free
		sh.free = l
		sh.nfree++
		return
	}
	sh.lanePool.Put(l) // the shard's own pool: l.shard never changes
}

// schedule marks an idle lane queued and counts it busy; sh.mu is held and
// the caller pushes the lane after unlocking when it returns true.
func (e *Engine[K, E]) schedule(l *lane[K, E]) bool {
	if l.state != laneIdle {
		return false
	}
	l.state = laneQueued
	l.shard.busy++
	return true
}

// claimTask marks the shard tasked and counts it busy, reporting
// whether the caller must push it after unlocking (false: it is already in
// the run queue or running, and will see what was just added); sh.mu is held.
func (sh *shard[K, E]) claimTask() bool {
	if sh.tasked {
		return false
	}
	sh.tasked = true
	sh.busy++
	return true
}

// idle records that one of sh's busy lanes or its inbox stopped being busy,
// and wakes Flush and Close when the shard is quiet; sh.mu is held.
func (e *Engine[K, E]) idle(sh *shard[K, E]) {
	sh.busy--
	if sh.busy == 0 {
		e.quiet.BroadcastIfWaiting()
	}
}

// unlanedCount returns key's events in sh's inbox and in the unfinished
// part of its inline batch (from the event at pos on); sh.mu is held.
func (sh *shard[K, E]) unlanedCount(key K) int {
	n := 0
	for i := range sh.inbox {
		if sh.inbox[i].key == key {
			n++
		}
	}
	if b := sh.cur; b != nil {
		if p := b.pos.Load(); p >= -1 { // done or spilled: nothing of it counts here
			for i := max(p, 0); i < int64(len(b.entries)); i++ {
				if en := &b.entries[i]; !en.it.moved && en.key == key {
					n++
				}
			}
		}
	}
	return n
}

// unlaned bounds from above the events waiting in sh's inbox or inline
// batch; sh.mu is held.
func (sh *shard[K, E]) unlaned() int {
	return len(sh.inbox) + sh.curLen
}

// eachUnlaned calls fn with the key and acceptance time of each event
// waiting in sh's inline batch (from the one running) and inbox, in order;
// sh.mu is held. It reads no other field of a batch's events: their worker
// writes their attempt counts without the lock.
func (sh *shard[K, E]) eachUnlaned(fn func(key K, at int64)) {
	if b := sh.cur; b != nil {
		if p := b.pos.Load(); p >= -1 {
			for i := max(p, 0); i < int64(len(b.entries)); i++ {
				if en := &b.entries[i]; !en.it.moved {
					fn(en.key, en.it.at)
				}
			}
		}
	}
	for i := range sh.inbox {
		fn(sh.inbox[i].key, sh.inbox[i].it.at)
	}
}

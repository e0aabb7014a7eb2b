package runtime

import (
	"context"
	"fmt"
	"time"
)

// fullness says which backlog limit a submission found reached.
type fullness uint8

const (
	hasRoom   fullness = iota
	keyFull            // the key's events reached Backlog.PerKey
	parkFull           // keyFull, and the key is parked: only an operator makes room
	totalFull          // every key's events reached Backlog.Total
	parksFull          // totalFull, and every event counted is parked
)

// Submit hands an event of key to its lane. It returns once the event is
// accepted (the engine then owns it until its outcome) or refused: an error
// wrapping ErrClosed after Close began, ErrBacklogFull under the reject and
// timeout policies, or ctx's error while the block or timeout policies wait.
// Events submitted by one goroutine (or ordered by happens-before) for one
// key are handled in that order.
//
// A submission that would have to wait for room never waits when only an
// operator can make that room (the key is parked and its park fills its
// per-key limit), nor when it comes from inside one of the engine's own
// handlers (ctx is, or derives from, the handler's context): it would wait
// for itself. Both fail at once with ErrBacklogFull, saying why.
func (e *Engine[K, E]) Submit(ctx context.Context, key K, event E) error {
	return e.submitTagged(ctx, key, event, 0)
}

// submitTagged is Submit with a tag that Config.OnOutcome receives with the
// event's outcome (TransportEngine.SubmitTagged).
func (e *Engine[K, E]) submitTagged(ctx context.Context, key K, event E, tag uint64) error {
	sh := e.shardFor(key)
	sh.mu.Lock()
	err, wait := e.enqueue(sh, key, event, tag)
	if !wait {
		return err
	}
	return e.submitSlow(ctx, sh, key, event, tag)
}

// submitSlow waits for backlog room under the Block and BlockThenReject
// policies.
func (e *Engine[K, E]) submitSlow(ctx context.Context, sh *shard[K, E], key K, event E, tag uint64) error {
	if e.fromOwnHandler(ctx) {
		e.countRejected(sh)
		return fmt.Errorf("%s: %w: submitted from inside one of its own handlers, which would wait for room that handler may hold; such a submit never waits",
			e.cfg.Name, ErrBacklogFull)
	}
	var deadline <-chan time.Time
	if e.cfg.Backlog.WhenFull == BlockThenReject {
		t := time.NewTimer(e.cfg.Backlog.Wait)
		defer t.Stop()
		deadline = t.C
	}
	for {
		// Register as a waiter before looking again, so that room released
		// between the look and the wait still wakes us (see notify.Notifier).
		wake := e.room.Register()
		sh.mu.Lock()
		err, wait := e.enqueue(sh, key, event, tag)
		if !wait {
			e.room.Unregister()
			return err
		}
		// err is the refusal to give if the wait ends without room.
		select {
		case <-wake:
			e.room.Unregister()
		case <-ctx.Done():
			e.room.Unregister()
			e.countRejected(sh)
			return fmt.Errorf("%w; stopped waiting for room: %w", err, ctx.Err())
		case <-deadline:
			e.room.Unregister()
			e.countRejected(sh)
			e.logRejected(key, err)
			return fmt.Errorf("%w after waiting %v", err, e.cfg.Backlog.Wait)
		}
	}
}

func (e *Engine[K, E]) countRejected(sh *shard[K, E]) {
	sh.mu.Lock()
	sh.rejected++
	sh.mu.Unlock()
}

// refusal is the error for a submission of key (lane l) refused for why;
// the shard is locked.
func (e *Engine[K, E]) refusal(key K, l *lane[K, E], why fullness) error {
	switch why {
	case parkFull:
		return fmt.Errorf("%s: %w: key %v is parked with %d events, its per-key limit of %d: only Replay or Discard of the park makes room",
			e.cfg.Name, ErrBacklogFull, key, l.stored, e.cfg.Backlog.PerKey)
	case parksFull:
		return fmt.Errorf("%s: %w: parked events fill the total limit of %d: only Replay or Discard of a park makes room",
			e.cfg.Name, ErrBacklogFull, e.cfg.Backlog.Total)
	case totalFull:
		return e.errTotalAll
	}
	return e.errKeyFull
}

// operatorOnly reports whether only an operator can make the room why
// lacks: waiting for it would wait for a person.
func operatorOnly(why fullness) bool { return why == parkFull || why == parksFull }

// totalWhy says why the total is reached: by parked events alone, or not.
func (e *Engine[K, E]) totalWhy() fullness {
	if e.parksCount() && e.load.Load() <= e.parked.Load() {
		return parksFull
	}
	return totalFull
}

// admit checks the limits for one more event of key (whose lane is l, nil
// if none) and, when take is set and there is room, reserves its room in
// the total; sh.mu is held.
func (e *Engine[K, E]) admit(sh *shard[K, E], l *lane[K, E], key K, take bool) fullness {
	perKey := e.cfg.Backlog.PerKey
	switch {
	case l != nil && l.count(e.parksCount()) >= perKey:
		if l.parked && l.stored > 0 && e.parksCount() {
			return parkFull
		}
		return keyFull
	case l == nil && sh.unlaned() >= perKey && !sh.unlanedRoom(key, perKey):
		return keyFull
	}
	if take {
		if !e.takeRoom(1) {
			return e.totalWhy()
		}
	} else if e.load.Load() >= int64(e.cfg.Backlog.Total) {
		return e.totalWhy()
	}
	return hasRoom
}

// enqueue does Submit's work under sh.mu and unlocks it. It reports wait
// when the caller must wait for room (Block and BlockThenReject policies), with the
// refusal to give if the caller stops waiting.
func (e *Engine[K, E]) enqueue(sh *shard[K, E], key K, event E, tag uint64) (err error, wait bool) {
	if sh.closed {
		sh.rejected++
		sh.mu.Unlock()
		return e.errClosed, false
	}
	var l *lane[K, E]
	if len(sh.lanes) > 0 { // most shards have no lane most of the time
		l = sh.lanes[key]
	}
	if l != nil && e.cfg.Conflate && l.conflatable() {
		// The newest queued event is replaced, at the door, for keys with
		// a lane (and a conflating engine gives every key with pending
		// events one); it keeps the older one's acceptance time, so a key
		// that never gets to run still shows its age.
		old := l.q.back()
		gone := [1]item[E]{{tag: old.tag, out: Conflated}}
		old.ev, old.tag = event, tag
		sh.accepted++
		e.retire(books[K, E]{sh: sh}, &tally{conflated: 1}, 0, key, gone[:]) // its room is the new one's
		sh.mu.Unlock()
		return nil, false
	}
	if why := e.admit(sh, l, key, true); why != hasRoom {
		return e.whenFull(sh, l, key, event, tag, why)
	}
	it := item[E]{ev: event, at: e.clock.coarse(), tag: tag}
	sh.accepted++
	if l == nil && e.cfg.Conflate {
		l = sh.newLane(key) // lanes at the door: conflation sees every key
	}
	if l != nil {
		l.q.pushBack(it)
		push := e.schedule(l)
		if !push && l.lingering {
			push = e.endLinger(l) // its batch is full: no more waiting
		}
		if push && !e.inline {
			// An engine whose keys run in lanes hands ready lanes to a
			// worker through the shard's task, a batch at a time.
			sh.ready = append(sh.ready, l)
			push = sh.claimTask()
			sh.mu.Unlock()
			if push {
				e.rq.push(task[K, E]{s: sh})
			}
			return nil, false
		}
		sh.mu.Unlock()
		if push {
			e.rq.push(task[K, E]{l: l})
		}
		return nil, false
	}
	sh.inbox = append(sh.inbox, entry[K, E]{key: key, it: it})
	push := sh.claimTask()
	sh.mu.Unlock()
	if push && e.inline {
		e.rq.pushInbox(task[K, E]{s: sh})
	} else if push {
		e.rq.push(task[K, E]{s: sh})
	}
	return nil, false
}

// whenFull applies the backlog policy to an event that found no room; sh.mu
// is held and whenFull unlocks it.
func (e *Engine[K, E]) whenFull(sh *shard[K, E], l *lane[K, E], key K, event E, tag uint64, why fullness) (err error, wait bool) {
	policy := e.cfg.Backlog.WhenFull
	switch {
	case operatorOnly(why) && (policy == Block || policy == BlockThenReject || policy == Reject):
		// Waiting would wait for an operator.
		sh.rejected++
		err := e.refusal(key, l, why)
		sh.mu.Unlock()
		e.logRejected(key, err)
		return err, false
	case policy == Block || policy == BlockThenReject:
		err := e.refusal(key, l, why)
		sh.mu.Unlock()
		return err, true
	case policy == DropNewest:
		sh.accepted++
		gone := [1]item[E]{{tag: tag, out: Dropped}} // it took no room
		e.retire(books[K, E]{sh: sh}, &tally{dropped: 1}, 0, key, gone[:])
	case policy == DropOldest:
		sh.accepted++
		it := item[E]{ev: event, at: e.clock.coarse(), tag: tag}
		gone := [1]item[E]{{tag: tag, out: Dropped}} // nothing of this key to give up: drop the new one
		if old, ok := e.dropOldest(sh, l, key); ok {
			// The new event takes the dropped one's room.
			gone[0].tag = old.tag
			if l != nil {
				l.q.pushBack(it)
			} else {
				sh.inbox = append(sh.inbox, entry[K, E]{key: key, it: it})
			}
		}
		e.retire(books[K, E]{sh: sh}, &tally{dropped: 1}, 0, key, gone[:])
	default:
		sh.rejected++
		err := e.refusal(key, l, why)
		sh.mu.Unlock()
		e.logRejected(key, err)
		return err, false
	}
	sh.mu.Unlock()
	return nil, false
}

// dropOldest removes key's oldest queued event that may be given up: not a
// replayed one (it must reach its own outcome to leave the park) and not
// one already taken by a worker; sh.mu is held.
func (e *Engine[K, E]) dropOldest(sh *shard[K, E], l *lane[K, E], key K) (item[E], bool) {
	if l != nil {
		return l.q.removeFirst(func(it *item[E]) bool { return !it.replayed })
	}
	for i := range sh.inbox {
		if sh.inbox[i].key == key {
			old := sh.inbox[i].it
			sh.inbox = append(sh.inbox[:i], sh.inbox[i+1:]...)
			return old, true
		}
	}
	return item[E]{}, false
}

// takeRoom takes room for n events in the total backlog, if there is room.
func (e *Engine[K, E]) takeRoom(n int64) bool {
	total := int64(e.cfg.Backlog.Total)
	for {
		cur := e.load.Load()
		if cur+n > total {
			return false
		}
		if e.load.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// takeRoomUpTo takes room for as many of n events as there is room for and
// returns how many.
func (e *Engine[K, E]) takeRoomUpTo(n int64) int64 {
	total := int64(e.cfg.Backlog.Total)
	for {
		cur := e.load.Load()
		k := min(n, total-cur)
		if k <= 0 {
			return 0
		}
		if e.load.CompareAndSwap(cur, cur+k) {
			return k
		}
	}
}

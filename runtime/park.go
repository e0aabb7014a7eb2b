package runtime

import (
	"context"
	"fmt"
	"time"
)

// park sets every pending event of l aside in the park store, in order, and
// marks the key parked; l is running and its shard locked. It unlocks around
// the store call. When the store fails the events stay pending and the lane
// waits for a retry.
func (w *worker[K, E]) park(l *lane[K, E], reason string) turnStep {
	e := w.e
	sh := l.shard
	// Held events arrived before everything still queued; the event that
	// failed, if one did, is the first queued one.
	failing := -1
	if l.failErr != nil {
		failing = len(l.held)
	}
	items := make([]item[E], 0, len(l.held)+l.q.len())
	for _, h := range l.held {
		items = append(items, h.item)
	}
	e.held.Add(-int64(len(l.held)))
	clear(l.held)
	l.held = l.held[:0]
	w.e.stopHoldTimer(l)
	items = l.q.popInto(items, l.q.len())
	if len(items) == 0 {
		return keepRunning
	}
	newly := !l.parked
	if newly {
		e.parkedKeys.Add(1)
	}
	l.parked, l.reason = true, reason
	failedReplay := l.replay
	l.replay = nil
	if failedReplay != nil {
		w.endReserve(l, failedReplay)
	}

	// Replayed events are still in the store, ahead of anything newer.
	now := time.Now()
	events := make([]ParkedEvent[E], 0, len(items))
	for i, it := range items {
		if !it.replayed {
			pe := ParkedEvent[E]{Event: it.ev, Attempts: int(it.attempts), At: now, Tag: it.tag}
			if i == failing {
				pe.Err = l.failErr.Error()
			}
			events = append(events, pe)
		}
	}
	l.failErr = nil
	l.inflight, l.inflightAt = len(items), items[0].at
	sh.mu.Unlock()
	err := e.cfg.Parks.Append(e.base, l.key, reason, events)
	sh.mu.Lock()
	l.inflight = 0
	if failedReplay != nil {
		failedReplay.req.reply(failedReplay.done,
			fmt.Errorf("%s: key %v: %w: %s", e.cfg.Name, l.key, ErrParkedAgain, reason))
	}
	if err != nil {
		l.q.prependAll(items)
		e.cfg.Logger.Error("ordergen: park store failed; the key's events stay pending and parking is retried",
			"engine", e.cfg.Name, "key", l.key, "error", err)
		w.armTimer(l, e.cfg.Retry.Max)
		return waitForTimer
	}
	n := int64(len(items))
	l.stored += len(items)
	e.parked.Add(n)
	room := n // in the store: no longer held against the backlog
	if e.parksCount() {
		// Still counted, now as parked (retire wakes a submitter waiting
		// for this key's room: it must look again, and will find that only
		// an operator makes it).
		room = 0
	}
	for i := range items {
		items[i].out = Parked
	}
	e.retire(books[K, E]{w: w, sh: sh}, &tally{parked: uint64(n)}, room, l.key, items)
	if newly {
		e.cfg.Logger.Warn("ordergen: key parked", "engine", e.cfg.Name, "key", l.key,
			"reason", reason, "events", len(items), "attempts", items[0].attempts)
	}
	return keepRunning
}

// holdParkReason says why a key whose held events waited too long is parked.
func (w *worker[K, E]) holdParkReason(l *lane[K, E]) string {
	if w.e.closing.Load() {
		return "engine closed while events were held: " + l.held[0].reason
	}
	return "held longer than " + w.e.cfg.MaxHold.String() + ": " + l.held[0].reason
}

// ParkedKeys lists the parked keys with their reasons, oldest park first,
// as the park store has them.
func (e *Engine[K, E]) ParkedKeys(ctx context.Context) ([]ParkedKey[K], error) {
	return e.cfg.Parks.Keys(ctx)
}

// ParkedEvents returns key's parked events in order (the whole park, read a
// page at a time).
func (e *Engine[K, E]) ParkedEvents(ctx context.Context, key K) ([]ParkedEvent[E], error) {
	return ReadPark(ctx, e.cfg.Parks, key)
}

// restore gives every key parked in the store (by an earlier process) a
// parked lane, so that new events for it join the park.
func (e *Engine[K, E]) restore() error {
	keys, err := e.cfg.Parks.Keys(context.Background())
	if err != nil {
		return fmt.Errorf("%s: list parked keys: %w", e.cfg.Name, err)
	}
	for _, pk := range keys {
		sh := e.shardFor(pk.Key)
		sh.mu.Lock()
		l := sh.lanes[pk.Key]
		if l == nil {
			l = sh.newLane(pk.Key)
			e.parkedKeys.Add(1)
		}
		l.parked, l.reason, l.stored = true, pk.Reason, pk.Events
		sh.mu.Unlock()
		e.parked.Add(int64(pk.Events))
		e.restored.Add(uint64(pk.Events))
	}
	return nil
}

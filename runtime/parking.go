package runtime

import (
	"context"
	"fmt"
	"time"
)

// request is an operator request that the worker running a lane serves,
// so that it never races with the lane's own work.
type request struct {
	discard bool
	done    chan reply
}

type reply struct {
	n   int
	err error
}

func (r *request) reply(n int, err error) { r.done <- reply{n, err} } // buffered: never blocks

// replayState tracks a replay: the replayed events left without an outcome.
// Only the worker running the lane touches remaining.
type replayState struct {
	remaining int
	total     int
	req       *request
}

// park sets every pending event of l aside in the park store, in order, and
// marks the key parked; l is running and its shard locked. It unlocks around
// the store call. When the store fails the events stay pending and the lane
// waits for a retry.
func (w *worker[K, E]) park(l *lane[K, E], reason string) next {
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
	w.stopHoldTimer(l)
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
		failedReplay.req.reply(failedReplay.total-failedReplay.remaining,
			fmt.Errorf("%s: key %v: %w: %s", e.cfg.Name, l.key, ErrParkedAgain, reason))
	}
	if err != nil {
		l.q.prependAll(items)
		e.cfg.Logger.Error("ordergen: park store failed; the key's events stay pending and parking is retried",
			"engine", e.cfg.Name, "key", l.key, "error", err)
		l.state = laneWaiting
		w.armRetry(l, e.cfg.Retry.Max)
		return waitForTimer
	}
	l.stored += len(events)
	e.parked.Add(int64(len(items)))
	e.parkedTotal.Add(uint64(len(items)))
	for _, it := range items {
		e.report(l.key, it.tag, Parked)
	}
	w.finish(int64(len(items)))
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

// finished records the outcome of a replayed event: it leaves the store.
// Only the worker running l calls it, without the lock.
func (w *worker[K, E]) finished(l *lane[K, E], it *item[E]) {
	if !it.replayed {
		return
	}
	e := w.e
	if err := e.cfg.Parks.Remove(e.base, l.key, it.seq); err != nil {
		// The event was handled; left in the store, a later replay offers it
		// again and the version guard skips it.
		e.cfg.Logger.Error("ordergen: park store failed to remove a replayed event",
			"engine", e.cfg.Name, "key", l.key, "error", err)
	} else {
		l.stored--
	}
	it.replayed, it.seq = false, 0
	if l.replay != nil {
		l.replay.remaining--
	}
}

// completeReplay answers Replay once every replayed event has an outcome;
// l's shard is locked.
func (w *worker[K, E]) completeReplay(l *lane[K, E]) {
	if r := l.replay; r != nil && r.remaining == 0 {
		l.replay = nil
		w.e.cfg.Logger.Info("ordergen: key replayed", "engine", w.e.cfg.Name, "key", l.key, "events", r.total)
		r.req.reply(r.total, nil)
	}
}

// serve runs l's operator request; l is running and its shard locked.
func (w *worker[K, E]) serve(l *lane[K, E]) next {
	e := w.e
	sh := l.shard
	req := l.req
	if !l.parked {
		l.req = nil
		req.reply(0, fmt.Errorf("%s: key %v: %w", e.cfg.Name, l.key, ErrNotParked))
		return keepRunning
	}
	if l.q.len() > 0 {
		// Events that joined the park reach the store first, so the store
		// holds the whole park in order; the request stays for the next turn.
		return w.park(l, l.reason)
	}
	l.req = nil
	key := l.key
	if req.discard {
		sh.mu.Unlock()
		// Read first: each discarded event reports Dropped with its tag.
		events, err := e.cfg.Parks.Read(e.base, key)
		n := 0
		if err == nil {
			n, err = e.cfg.Parks.Clear(e.base, key)
		}
		sh.mu.Lock()
		if err != nil {
			req.reply(0, fmt.Errorf("%s: discard key %v: %w", e.cfg.Name, key, err))
			return keepRunning
		}
		stored := uint64(l.stored)
		e.parked.Add(-int64(l.stored))
		e.parkedKeys.Add(-1)
		w.c.dropped.Add(stored)
		w.c.discarded.Add(stored)
		l.stored, l.parked, l.reason = 0, false, ""
		for _, ev := range events {
			e.report(key, ev.Tag, Dropped)
		}
		e.cfg.Logger.Warn("ordergen: parked key discarded", "engine", e.cfg.Name, "key", key, "events", n)
		req.reply(n, nil)
		return keepRunning
	}
	sh.mu.Unlock()
	events, err := e.cfg.Parks.Read(e.base, key)
	sh.mu.Lock()
	if err != nil {
		req.reply(0, fmt.Errorf("%s: replay key %v: read park: %w", e.cfg.Name, key, err))
		return keepRunning
	}
	e.parked.Add(-int64(l.stored))
	e.parkedKeys.Add(-1)
	l.parked, l.reason, l.stored = false, "", len(events)
	if len(events) == 0 {
		req.reply(0, nil)
		return keepRunning
	}
	// Replayed events go before anything that arrived while they were read.
	now := e.now()
	items := make([]item[E], len(events))
	for i, ev := range events {
		items[i] = item[E]{ev: ev.Event, at: now, tag: ev.Tag, seq: ev.Seq, replayed: true}
	}
	l.q.prependAll(items)
	e.pending.Add(int64(len(items)))
	w.c.replayed.Add(uint64(len(items)))
	l.replay = &replayState{remaining: len(items), total: len(items), req: req}
	return keepRunning
}

// Replay re-runs key's parked events in order, through the handler and the
// Retry policy, and unparks the key when every one has an outcome. Events
// submitted for the key meanwhile wait behind them. Replay returns nil when
// the replay succeeded, an error wrapping ErrParkedAgain when an event failed
// again (the key is parked again, from that event on), ErrNotParked,
// ErrReplayInProgress or ErrClosed. If ctx ends first Replay returns ctx's
// error; the replay goes on.
func (e *Engine[K, E]) Replay(ctx context.Context, key K) error {
	_, err := e.request(ctx, key, false)
	return err
}

// Discard drops key's parked events (counted as dropped and discarded) and
// unparks the key. It returns how many events it dropped.
func (e *Engine[K, E]) Discard(ctx context.Context, key K) (int, error) {
	return e.request(ctx, key, true)
}

func (e *Engine[K, E]) request(ctx context.Context, key K, discard bool) (int, error) {
	if e.closing.Load() {
		return 0, e.errClosed
	}
	sh := e.shardFor(key)
	sh.mu.Lock()
	l := sh.lanes[key]
	switch {
	case l != nil && (l.req != nil || l.replay != nil):
		sh.mu.Unlock()
		return 0, fmt.Errorf("%s: key %v: %w", e.cfg.Name, key, ErrReplayInProgress)
	case l == nil || !l.parked:
		sh.mu.Unlock()
		return 0, fmt.Errorf("%s: key %v: %w", e.cfg.Name, key, ErrNotParked)
	}
	req := &request{discard: discard, done: make(chan reply, 1)}
	l.req = req
	push := e.schedule(l)
	sh.mu.Unlock()
	if push {
		e.rq.push(task[K, E]{l: l})
	}
	select {
	case r := <-req.done:
		return r.n, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// ParkedKeys lists the parked keys with their reasons, oldest park first,
// as the park store has them.
func (e *Engine[K, E]) ParkedKeys(ctx context.Context) ([]ParkedKey[K], error) {
	return e.cfg.Parks.Keys(ctx)
}

// ParkedEvents returns key's parked events in order.
func (e *Engine[K, E]) ParkedEvents(ctx context.Context, key K) ([]ParkedEvent[E], error) {
	return e.cfg.Parks.Read(ctx, key)
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
			sh.lanes[pk.Key] = l
			e.parkedKeys.Add(1)
		}
		l.parked, l.reason, l.stored = true, pk.Reason, pk.Events
		sh.mu.Unlock()
		e.parked.Add(int64(pk.Events))
		e.restored.Add(uint64(pk.Events))
	}
	return nil
}

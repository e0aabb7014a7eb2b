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

// replayPage is the most parked events a replay loads at once. A replay
// from a store whose events do not count against the backlog (a durable
// one) loads fewer when there is less room, and waits for room when there
// is none.
const replayPage = 256

// roomPoll is how long a replay that found no room waits before it looks
// again.
const roomPoll = 5 * time.Millisecond

// replayState tracks a replay: the park is loaded a page at a time, after
// the Seq of the last event loaded, each page once the previous one has
// reached its outcomes.
type replayState struct {
	req *request
	// after is the Seq of the last event loaded.
	after uint64
	// loaded is the number of loaded events without an outcome.
	loaded int
	// done is the number of loaded events that reached their outcome.
	done int
	// more is false once the store had no more events.
	more bool
	// room is the total backlog room a durable park's replay holds and has
	// not filled with loaded events: it keeps the room of the events it
	// finishes for its next page, and gives it back when it ends.
	room int64
}

// wantsPage reports whether l's replay waits for its next page: the store
// may have more and no loaded event is queued (the lane's queue starts with
// its loaded events; held ones wait for a later event, which may be in the
// next page).
func (l *lane[K, E]) wantsPage() bool {
	return l.replay != nil && l.replay.more && (l.q.len() == 0 || !l.q.front().replayed)
}

// isReplayed reports whether it was loaded from its key's park.
func isReplayed[E any](it *item[E]) bool { return it.replayed }

// finishedOne records that a loaded event reached its outcome.
func (r *replayState) finishedOne() {
	if r != nil {
		r.loaded--
		r.done++
	}
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
		e.dropReplayRoom(failedReplay)
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
	e.parkedTotal.Add(uint64(n))
	if e.parksCount() {
		// Still counted, now as parked: a submitter waiting for this key's
		// room must look again, and will find that only an operator makes it.
		e.release(0)
	} else {
		e.release(n) // in the store: no longer held against the backlog
	}
	for _, it := range items {
		e.report(l.key, it.tag, Parked)
	}
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

// completeReplay answers Replay once every event of the park has been
// loaded and reached its outcome; l's shard is locked.
func (w *worker[K, E]) completeReplay(l *lane[K, E]) {
	if r := l.replay; r != nil && r.loaded == 0 && !r.more {
		l.replay = nil
		w.e.dropReplayRoom(r)
		w.e.cfg.Logger.Info("ordergen: key replayed", "engine", w.e.cfg.Name, "key", l.key, "events", r.done)
		r.req.reply(r.done, nil)
	}
}

// loadPage loads the next page of l's park for its replay, in front of the
// lane; l is running and its shard locked (unlocked around the store).
func (w *worker[K, E]) loadPage(l *lane[K, E]) next {
	e := w.e
	sh := l.shard
	r := l.replay
	page := int64(min(replayPage, l.stored))
	if l.stored == 0 {
		// Every event the engine knows of is loaded: look for others (an
		// earlier read that failed, another process's), one, loading none.
		page = 1
	} else if !e.parksCount() {
		// Within the room the replay holds, and the key's limit as far as
		// it is not left to the park (while it is replayed its events count
		// against it; see lane.count).
		page = min(page, int64(e.cfg.Backlog.PerKey-l.pending()), r.room)
		if page <= 0 {
			w.armTimer(l, roomPoll)
			return waitForTimer
		}
	}
	after := r.after
	sh.mu.Unlock()
	events, err := e.cfg.Parks.Read(e.base, l.key, after, int(page))
	sh.mu.Lock()
	if err != nil {
		e.dropReplayRoom(r)
		// The replay stops; what it did not load stays parked.
		l.replay = nil
		l.parked = true
		l.reason = "replay stopped: read park: " + err.Error()
		e.parkedKeys.Add(1)
		r.req.reply(r.done, fmt.Errorf("%s: replay key %v: read park: %w", e.cfg.Name, l.key, err))
		return keepRunning
	}
	n := int64(len(events))
	if l.stored == 0 {
		// A look for events the engine did not know of.
		if n == 0 {
			r.more = false
			w.completeReplay(l)
		} else {
			l.stored = 1 // at least: the next page loads it within the room
			e.parked.Add(1)
			e.restored.Add(1) // found in the store, like a park left at start
		}
		return keepRunning
	}
	if n == 0 {
		// The store had fewer than the engine counted.
		e.parked.Add(-int64(l.stored))
		l.stored = 0
		return keepRunning
	}
	if !e.parksCount() {
		e.keepReplayRoom(r, -n) // the loaded events fill the room they were read into
	}
	l.stored = max(0, l.stored-len(events))
	e.parked.Add(-n)
	// Replayed events go before anything that arrived meanwhile.
	now := e.now()
	for i := len(events) - 1; i >= 0; i-- {
		ev := &events[i]
		l.q.pushFront(item[E]{ev: ev.Event, at: now, tag: ev.Tag, seq: ev.Seq, replayed: true})
	}
	r.after = events[len(events)-1].Seq
	r.loaded += len(events)
	w.c.replayed.Add(uint64(n))
	return keepRunning
}

// serve runs l's operator request; l is running and its shard locked.
func (w *worker[K, E]) serve(l *lane[K, E]) next {
	e := w.e
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
	if req.discard {
		l.req = nil
		w.discard(l, req)
		return keepRunning
	}
	var room int64
	if !e.parksCount() {
		// A durable park's events take room in the total only as they are
		// loaded. The replay takes a page's room before it starts, and
		// keeps it until it ends (see settle): events that arrive behind
		// it can then never take all the room it needs to go on. Without
		// room the key stays parked (arrivals go on joining the store) and
		// the request waits.
		if room = e.reserveUpTo(int64(min(replayPage, max(l.stored, 1)))); room == 0 {
			w.armTimer(l, roomPoll)
			return waitForTimer
		}
	}
	l.req = nil
	l.parked, l.reason = false, ""
	e.parkedKeys.Add(-1)
	l.replay = &replayState{req: req, more: true}
	e.keepReplayRoom(l.replay, room)
	return keepRunning
}

// discard drops l's park for req; l is running and its shard locked
// (unlocked around the store).
func (w *worker[K, E]) discard(l *lane[K, E], req *request) {
	e := w.e
	sh := l.shard
	key := l.key
	sh.mu.Unlock()
	// Read first: each discarded event reports Dropped with its tag.
	var tags []uint64
	var err error
	for after := uint64(0); ; {
		var page []ParkedEvent[E]
		page, err = e.cfg.Parks.Read(e.base, key, after, replayPage)
		if err != nil || len(page) == 0 {
			break
		}
		for _, ev := range page {
			tags = append(tags, ev.Tag)
		}
		after = page[len(page)-1].Seq
	}
	n := 0
	if err == nil {
		n, err = e.cfg.Parks.Clear(e.base, key)
	}
	sh.mu.Lock()
	if err != nil {
		req.reply(0, fmt.Errorf("%s: discard key %v: %w", e.cfg.Name, key, err))
		return
	}
	stored := int64(l.stored)
	e.parked.Add(-stored)
	e.parkedKeys.Add(-1)
	w.c.dropped.Add(uint64(stored))
	w.c.discarded.Add(uint64(stored))
	l.stored, l.parked, l.reason = 0, false, ""
	if e.parksCount() {
		e.release(stored)
	}
	for _, tag := range tags {
		e.report(key, tag, Dropped)
	}
	e.cfg.Logger.Warn("ordergen: parked key discarded", "engine", e.cfg.Name, "key", key, "events", n)
	req.reply(n, nil)
}

// Replay re-runs key's parked events in order, through the handler and the
// Retry policy, and unparks the key when every one has an outcome. It loads
// the park a page at a time, each page once the previous one finished, and
// from a store outside the process only as the backlog has room. Events
// submitted for the key meanwhile wait behind the whole park. Replay returns
// nil when the replay succeeded, an error wrapping ErrParkedAgain when an
// event failed again (the key is parked again, from that event on),
// ErrNotParked, ErrReplayInProgress or ErrClosed. If ctx ends first Replay
// returns ctx's error; the replay goes on.
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
	sh := e.shardFor(key)
	sh.mu.Lock()
	l := sh.lanes[key]
	switch {
	case sh.closed:
		// Checked under the shard's lock, which Close takes to close the
		// shard before it waits for the lanes: a request either sees the
		// engine closed or is scheduled before Close looks.
		sh.mu.Unlock()
		return 0, e.errClosed
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

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
	// park, when set, asks for the key to park now with that reason
	// (ParkNow, operator.go).
	park string
	done chan reply
}

type reply struct {
	n   int
	err error
}

func (r *request) reply(n int, err error) { r.done <- reply{n, err} }

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
	// reserve is the room in the total backlog that a durable park's
	// replay holds and has not filled with loaded events: it keeps the room
	// of the events it finishes for its next page, and gives it back when
	// it ends.
	reserve int64
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

// keepReserve records that a durable replay now holds n more room it
// has not filled (n < 0: it filled or gave back some).
func (e *Engine[K, E]) keepReserve(r *replayState, n int64) {
	r.reserve += n
	e.replayReserve.Add(n)
}

// endReserve gives back the room r, l's durable replay, holds and has
// not filled (it ended, or failed): a retirement of no event (retire.go);
// l's shard is locked.
func (w *worker[K, E]) endReserve(l *lane[K, E], r *replayState) {
	room := r.reserve
	w.e.keepReserve(r, -room)
	w.e.retire(books[K, E]{w: w, sh: l.shard}, &tally{}, room, l.key, nil)
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

// Discard removes key's parked events (their outcome: Discarded) and
// unparks the key. It returns how many events it removed.
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

// serve runs l's operator request; l is running and its shard locked.
func (w *worker[K, E]) serve(l *lane[K, E]) turnStep {
	e := w.e
	req := l.req
	if req.park != "" {
		return w.parkNow(l)
	}
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
		// keeps it until it ends (see endTake): events that arrive behind
		// it can then never take all the room it needs to go on. Without
		// room the key stays parked (arrivals go on joining the store) and
		// the request waits.
		if room = e.takeRoomUpTo(int64(min(replayPage, max(l.stored, 1)))); room == 0 {
			w.armTimer(l, roomPoll)
			return waitForTimer
		}
	}
	l.req = nil
	l.parked, l.reason = false, ""
	e.parkedKeys.Add(-1)
	l.replay = &replayState{req: req, more: true}
	e.keepReserve(l.replay, room)
	return keepRunning
}

// loadPage loads the next page of l's park for its replay, in front of the
// lane; l is running and its shard locked (unlocked around the store).
func (w *worker[K, E]) loadPage(l *lane[K, E]) turnStep {
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
		page = min(page, int64(e.cfg.Backlog.PerKey-l.pending()), r.reserve)
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
		w.endReserve(l, r)
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
		e.keepReserve(r, -n) // the loaded events fill the room they were read into
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

// completeReplay answers Replay once every event of the park has been
// loaded and reached its outcome; l's shard is locked.
func (w *worker[K, E]) completeReplay(l *lane[K, E]) {
	if r := l.replay; r != nil && r.loaded == 0 && !r.more {
		l.replay = nil
		w.endReserve(l, r)
		w.e.cfg.Logger.Info("ordergen: key replayed", "engine", w.e.cfg.Name, "key", l.key, "events", r.done)
		r.req.reply(r.done, nil)
	}
}

// discard removes l's park for req; l is running and its shard locked
// (unlocked around the store).
func (w *worker[K, E]) discard(l *lane[K, E], req *request) {
	e := w.e
	sh := l.shard
	key := l.key
	sh.mu.Unlock()
	// Read first: each discarded event reports Discarded with its tag.
	var gone []item[E]
	var err error
	for after := uint64(0); ; {
		var page []ParkedEvent[E]
		page, err = e.cfg.Parks.Read(e.base, key, after, replayPage)
		if err != nil || len(page) == 0 {
			break
		}
		for _, ev := range page {
			gone = append(gone, item[E]{tag: ev.Tag, out: Discarded})
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
	// The park leaves the key's count (and the parked events'); retire
	// counts what the engine knew of it, and reports what the store held.
	stored := int64(l.stored)
	e.parked.Add(-stored)
	e.parkedKeys.Add(-1)
	l.stored, l.parked, l.reason = 0, false, ""
	room := int64(0) // a park outside memory held none
	if e.parksCount() {
		room = stored
	}
	e.retire(books[K, E]{w: w, sh: sh}, &tally{discarded: uint64(stored)}, room, key, gone)
	e.cfg.Logger.Warn("ordergen: parked key discarded", "engine", e.cfg.Name, "key", key, "events", n)
	req.reply(n, nil)
}

package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// The operator's actions on a stuck key: see what runs (KeyStatus), end
// the running attempt's context (CancelAttempt), and park the key now with
// its backlog (ParkNow), which takes the key's events away from a handler
// that may never return.
//
// What runs is found through the attempts' contexts (attemptctx.go): a
// worker publishes each attempt's context, with the address of its event,
// before the handler starts, so that whoever holds the key's shard lock
// can compare that address with the key's events (the turn its lane's
// worker took, or the inline event the watchdog gave a lane) and read the
// event. An engine whose attempts have no context of their own (no
// Config.Timeout, no OnOutcome: the handler gets the engine's context) can
// tell that a key runs, not what, and cannot cancel it.
//
// ParkNow takes a running turn over when the attempt's context says the
// handler has not returned (take and returned decide who is first): the
// key's events from the running one on move, in order, to a new lane of
// the key that replaces the old one in the shard's map and parks them; the
// old lane stays its worker's, marked seized, and when the handler
// returns, whenever that is, the worker's call reports the attempt
// withdrawn and its settle drops what the new lane took (turn.go), so that
// every event still reaches exactly one outcome.

var (
	// ErrNotRunning is returned by CancelAttempt when no attempt of the key
	// runs whose context it could end.
	ErrNotRunning = errors.New("ordergen: no attempt of the key runs that could be cancelled")
	// ErrNothingPending is returned by ParkNow when the key has no pending
	// event to park.
	ErrNothingPending = errors.New("ordergen: the key has no pending event")
	// ErrOperatorCancel is the cause (context.Cause) of an attempt's
	// context ended by ParkNow, or by CancelAttempt without a cause of its
	// own; causes given to CancelAttempt should wrap it.
	ErrOperatorCancel = errors.New("ordergen: cancelled by an operator")
)

// hasAttemptContexts reports whether every attempt gets a context of its
// own (attempt.go's call).
func (e *Engine[K, E]) hasAttemptContexts() bool {
	return e.cfg.Timeout > 0 || e.cfg.OnOutcome != nil
}

// runningAttempt finds the attempt of key's handler in progress: its
// context, its worker and its event (of a batch, the first); all nil when
// none runs, or when attempts have no context. l is key's lane (nil: it
// has none); sh.mu is held.
func (e *Engine[K, E]) runningAttempt(sh *shard[K, E], key K, l *lane[K, E]) (*attemptCtx, *worker[K, E], *item[E]) {
	var one *item[E] // the running event, when known before looking
	switch {
	case l != nil && l.state != laneRunning:
		return nil, nil, nil
	case l != nil && l.owned:
		one = l.ownedIt
	case l == nil:
		b := sh.cur
		if b == nil {
			return nil, nil, nil
		}
		p := b.pos.Load()
		if p < 0 || p >= int64(len(b.entries)) || b.entries[p].it.moved || b.entries[p].key != key {
			return nil, nil, nil
		}
		one = &b.entries[p].it
	}
	for _, w := range e.workerList() {
		c := w.running.current()
		if c == nil {
			continue
		}
		// Only addresses are compared: another shard's events are not
		// read under this shard's lock.
		if one != nil {
			if c.item == unsafe.Pointer(one) {
				return c, w, one
			}
			continue
		}
		for k := range l.taken {
			if c.item == unsafe.Pointer(&l.taken[k]) {
				return c, w, &l.taken[k]
			}
		}
	}
	return nil, nil, nil
}

// running fills ks's fields about the attempt in progress; sh.mu is held.
func (e *Engine[K, E]) running(sh *shard[K, E], key K, l *lane[K, E], ks *KeyStatus[E]) {
	c, _, it := e.runningAttempt(sh, key, l)
	if c == nil {
		// Without attempt contexts, only that a worker runs the key's
		// events is known.
		if l != nil {
			ks.Running = l.state == laneRunning && l.inflight > 0
		} else if b := sh.cur; b != nil {
			p := b.pos.Load()
			ks.Running = p >= 0 && p < int64(len(b.entries)) && !b.entries[p].it.moved && b.entries[p].key == key
		}
		return
	}
	ks.Running, ks.Event, ks.Attempt = true, it.ev, int(c.attempt)
	ks.Started = e.clock.wall(c.start)
	ks.Batch = 1
	if e.batch != nil && l != nil {
		ks.Batch = len(l.taken)
	}
	ks.Ended = c.endedBecause()
}

// endedBecause says why c ended while its attempt runs: nil when it did
// not; the operator's cause; DeadlineExceeded; Canceled.
func (c *attemptCtx) endedBecause() error {
	ended := c.ended.Load()
	switch {
	case ended&endCause == 0:
		return nil
	case ended&(endOperator|endWithdrawn) != 0:
		if w := c.waiters.Load(); w != nil {
			if cause := w.cause.Load(); cause != nil {
				return context.Cause(*cause)
			}
		}
	case ended&endCause == endDeadline:
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// operatorCause adds the operator's cause to err, the result of an attempt
// whose context an operator ended, unless err says it already: a park's
// reason then says who stopped the attempt.
func operatorCause(c *attemptCtx, err error) error {
	cause := c.endedBecause()
	if cause == nil || errors.Is(err, cause) || isVerdicts(err) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, cause)
}

// CancelAttempt ends the context of the attempt of key's handler in
// progress with context.Canceled and cause (nil: ErrOperatorCancel), which
// the handler sees as context.Cause(ctx). What follows is the engine's
// policy, as for any failed attempt: the handler's error is retried, and
// once the attempts are used up the key parks (Config.OnExhausted). A
// handler that ignores its context goes on; ParkNow then takes its key's
// events away from it.
//
// It returns an error wrapping ErrNotRunning when no attempt of key runs,
// or its context ended already (at its deadline, say: its handler has not
// returned), and one wrapping ErrInvalidConfig when the engine gives
// attempts no context of their own (Config.Timeout zero, OnOutcome nil).
func (e *Engine[K, E]) CancelAttempt(key K, cause error) error {
	if cause == nil {
		cause = ErrOperatorCancel
	}
	if !e.hasAttemptContexts() {
		return fmt.Errorf("%s: cancel key %v: %w: its attempts have no context of their own (set Config.Timeout)", e.cfg.Name, key, ErrInvalidConfig)
	}
	sh := e.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c, _, _ := e.runningAttempt(sh, key, sh.lanes[key])
	if c == nil {
		return fmt.Errorf("%s: cancel key %v: %w", e.cfg.Name, key, ErrNotRunning)
	}
	if !c.endWith(cause, endCanceled|endOperator) {
		return fmt.Errorf("%s: cancel key %v: %w: its context ended already (%v) and its handler has not returned",
			e.cfg.Name, key, ErrNotRunning, c.endedBecause())
	}
	e.cfg.Logger.Warn("ordergen: attempt cancelled by an operator", "engine", e.cfg.Name, "key", key,
		"attempt", c.attempt, "cause", cause)
	return nil
}

// ParkNow parks key now with all its pending events, in order, under
// reason (empty: "parked by an operator"), as if its oldest had failed for
// good: later events of key join the park, and Replay and Discard act on
// it. When the key's handler is in an attempt, the attempt is withdrawn:
// its event parks first, its context ends (Canceled, with
// ErrOperatorCancel as its cause), and whatever the handler returns,
// whenever it does, is ignored, so that a handler that never returns holds
// up nothing but its own goroutine (Flush and Close still wait for it). That
// handler runs on: it may still run when the key's events are replayed, the
// one exception to never two events of a key at once, which an operator
// makes.
// ParkNow writes the park store itself, so that it parks a key even when
// every worker is stuck in a handler. An engine whose attempts have no
// context of their own (Config.Timeout zero, OnOutcome nil) cannot tell
// what runs: there ParkNow waits for the running event's handler to
// return, and parks what follows.
//
// ParkNow returns how many events it parked once they are in the park
// store, or ctx's error while it waits for a worker (the park goes on). It
// returns an error wrapping ErrNothingPending when key has no pending
// event, ErrReplayInProgress while a Replay or Discard of key waits to be
// served, or ErrClosed; when the park store fails, the events stay pending
// and the engine retries the park, as after any failed park.
func (e *Engine[K, E]) ParkNow(ctx context.Context, key K, reason string) (int, error) {
	if reason == "" {
		reason = "parked by an operator"
	}
	sh := e.shardFor(key)
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return 0, e.errClosed
	}
	l, ready := e.laneOf(sh, key, nil)
	var req *request
	n, err := 0, error(nil)
	switch {
	case l == nil || (l.pending() == 0 && l.state != laneRunning):
		err = fmt.Errorf("%s: park key %v: %w", e.cfg.Name, key, ErrNothingPending)
	case l.req != nil:
		err = fmt.Errorf("%s: park key %v: %w", e.cfg.Name, key, ErrReplayInProgress)
	case l.state == laneRunning:
		if c, w, it := e.runningAttempt(sh, key, l); c != nil && c.take() {
			l = e.seize(sh, l, w, c, it)
			c.endWith(ErrOperatorCancel, endCanceled|endOperator)
			n, err = e.parkHere(l, reason)
			break
		}
		// Between two events, or in a handler whose attempt has no
		// context: the worker serves the request before its next event.
		req = &request{park: reason, done: make(chan reply, 1)}
		l.req = req
		l.interrupt.Store(true)
	case l.state == laneQueued:
		// A worker is on its way: it serves the request first.
		req = &request{park: reason, done: make(chan reply, 1)}
		l.req = req
	default:
		// Idle, or waiting for its timer (a backoff, a linger, room for a
		// replay page), which ends now: ParkNow runs the lane's park as a
		// worker would.
		if l.state == laneWaiting {
			e.stopTimer(l.timer) // if it fired, its function finds the lane not waiting
			l.lingering = false
		} else {
			sh.busy++
		}
		l.state = laneRunning
		n, err = e.parkHere(l, reason)
	}
	sh.mu.Unlock()
	e.rq.pushLanes(ready)
	if req == nil {
		return n, err
	}
	select {
	case r := <-req.done:
		return r.n, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// parkHere parks everything l holds, in ParkNow's goroutine: l is running
// for it (counted busy), and its shard locked (unlocked around the park
// store). It leaves l as a worker's turn would, and returns how many
// events it parked.
func (e *Engine[K, E]) parkHere(l *lane[K, E], reason string) (int, error) {
	sh := l.shard
	if len(l.withdraws) > 0 {
		e.serveWithdrawals(l)
	}
	n := len(l.held) + l.q.len()
	w := &worker[K, E]{e: e} // it runs no handler: park needs only its engine
	if w.park(l, reason) != keepRunning {
		// The store failed: the lane waits to park again (see park).
		return 0, fmt.Errorf("%s: park key %v: the park store failed; the engine retries the park (see its log)", e.cfg.Name, l.key)
	}
	l.failErr = nil
	if l.runnable() {
		// Events, a request or a withdrawal came while the store wrote.
		l.state = laneQueued // still busy
		e.rq.pushLanes([]*lane[K, E]{l})
	} else {
		l.state = laneIdle
		e.idle(sh)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: park key %v: %w", e.cfg.Name, l.key, ErrNothingPending)
	}
	return n, nil
}

// laneOf returns key's lane, making one that holds its events waiting in
// sh's inline batch or inbox (nil when there are none); ready gets the
// lanes this made ready, for the caller to push. sh.mu is held.
func (e *Engine[K, E]) laneOf(sh *shard[K, E], key K, ready []*lane[K, E]) (*lane[K, E], []*lane[K, E]) {
	if l := sh.lanes[key]; l != nil {
		return l, ready
	}
	if b := sh.cur; b != nil && batchHolds(b, key) {
		// As Withdraw does: the batch's rest and the inbox go to lanes;
		// the running event's key gets a lane its worker owns.
		ready = e.spillBatch(sh, b, ready)
		return sh.lanes[key], ready
	}
	var l *lane[K, E]
	kept := sh.inbox[:0]
	for _, en := range sh.inbox {
		if en.key != key {
			kept = append(kept, en)
			continue
		}
		if l == nil {
			l = sh.newLane(key)
		}
		l.q.pushBack(en.it)
	}
	clear(sh.inbox[len(kept):])
	sh.inbox = kept
	if l != nil && e.schedule(l) {
		ready = append(ready, l)
	}
	return l, ready
}

// batchHolds reports whether b has an event of key from its position on;
// its shard is locked.
func batchHolds[K comparable, E any](b *inlineBatch[K, E], key K) bool {
	p := b.pos.Load()
	if p < -1 {
		return false // done or spilled
	}
	for i := max(p, 0); i < int64(len(b.entries)); i++ {
		if en := &b.entries[i]; !en.it.moved && en.key == key {
			return true
		}
	}
	return false
}

// seize takes the turn of l, whose worker w is in the attempt c of the
// event it, which ParkNow took (c.take): the key's held events, that
// event, the rest of the turn and l's queue move, in that order, to a new
// lane of the key, which replaces l in the map with l's park, replay and
// waiting withdrawals. l
// stays w's, seized: its endTake leaves alone what moved. The new lane is
// returned running, counted busy, for the caller to park (parkHere). sh.mu
// is held.
//
// Reading w's turn is safe: w wrote it before it published c (an atomic
// store that the load of c saw), and w touches it again only in settle,
// under sh.mu, except the attempts of a batch, which are c's.
func (e *Engine[K, E]) seize(sh *shard[K, E], l *lane[K, E], w *worker[K, E], c *attemptCtx, it *item[E]) *lane[K, E] {
	n := sh.newLane(l.key) // in l's place in the map
	n.held, l.held = l.held, nil
	e.stopHoldTimer(l)
	if !l.owned {
		// Events this turn held back before the running one (settle would
		// have moved them to l.held).
		n.held = append(n.held, w.held...)
		e.held.Add(int64(len(w.held)))
		clear(w.held)
		w.held = w.held[:0]
	}
	running := time.Duration(e.clock.coarse() - c.start).Round(time.Millisecond)
	if !l.owned {
		e.retireBefore(l, w, it)
	}
	moved := func(from *item[E], attempts int32) item[E] {
		return item[E]{ev: from.ev, at: from.at, tag: from.tag, seq: from.seq, replayed: from.replayed, attempts: attempts}
	}
	n.q.pushBack(moved(it, int32(c.attempt)))
	if !l.owned {
		after := false
		for k := range l.taken {
			t := &l.taken[k]
			switch {
			case t == it:
				after = true
			case after && e.batch != nil:
				n.q.pushBack(moved(t, int32(c.attempt))) // a batch shares its attempt
			case after:
				n.q.pushBack(moved(t, t.attempts))
			}
		}
	}
	for _, q := range l.q.popInto(nil, l.q.len()) {
		n.q.pushBack(q)
	}
	n.parked, n.reason, n.stored = l.parked, l.reason, l.stored
	l.parked, l.reason, l.stored = false, "", 0
	n.replay, l.replay = l.replay, nil
	n.withdraws, l.withdraws = l.withdraws, nil
	if len(n.withdraws) > 0 {
		n.interrupt.Store(true)
	}
	// The withdrawals moved: l, recycled once its worker is done with it,
	// must not keep interrupting the turns of the key it serves next.
	l.interrupt.Store(false)
	n.holdCheck, l.holdCheck = l.holdCheck, false
	n.failErr = fmt.Errorf("attempt %d withdrawn by an operator after running %v", c.attempt, running)
	l.inflight, l.taken = 0, nil
	l.seized = true
	n.state = laneRunning
	sh.busy++
	return n
}

// retireBefore retires the events of l's turn that finished before it
// (their tally is w's), as the worker's endTake would have (turn.go): they
// leave the backlog, their outcomes are counted and reported now, not when
// a handler that may never return does. l is running and seized; its
// shard is locked.
func (e *Engine[K, E]) retireBefore(l *lane[K, E], w *worker[K, E], it *item[E]) {
	i := 0
	for i < len(l.taken) && &l.taken[i] != it {
		i++
	}
	before := l.taken[:i]
	room, kept := int64(0), int64(0)
	for k := range before {
		if t := &before[k]; t.out != 0 {
			room++
			if t.replayed && l.replay != nil {
				l.replay.finishedOne()
				kept++
			}
		}
	}
	if r := l.replay; r != nil && !e.parksCount() {
		// A durable park's replay keeps the room of its finished events.
		e.keepReserve(r, kept)
		room -= kept
	}
	e.retire(books[K, E]{w: w, sh: l.shard}, &w.t, room, l.key, before)
	w.t = tally{}
}

// parkNow serves ParkNow's request: l parks with everything it holds; l is
// running and its shard locked (unlocked around the park store).
func (w *worker[K, E]) parkNow(l *lane[K, E]) turnStep {
	req := l.req
	n := len(l.held) + l.q.len()
	if n > 0 {
		if step := w.park(l, req.park); step != keepRunning {
			return step // the store failed: the request stays for the next turn
		}
	}
	l.req = nil
	l.failErr = nil
	if len(l.withdraws) == 0 {
		l.interrupt.Store(false)
	}
	if n == 0 {
		// What ran finished meanwhile, and nothing followed it.
		req.reply(0, fmt.Errorf("%s: park key %v: %w", w.e.cfg.Name, l.key, ErrNothingPending))
		return keepRunning
	}
	req.reply(n, nil)
	return keepRunning
}

// CancelAttempt ends, in every subscriber where a handler of key is in an
// attempt, that attempt's context with cause (see Engine.CancelAttempt).
// It returns nil when it ended one, and otherwise an error wrapping
// ErrNotRunning (or the subscribers' other errors, joined).
func (t *Topic[K, E]) CancelAttempt(key K, cause error) error {
	var errs []error
	cancelled := false
	for _, s := range t.Subscribers() {
		err := s.CancelAttempt(key, cause)
		switch {
		case err == nil:
			cancelled = true
		case !errors.Is(err, ErrNotRunning):
			errs = append(errs, err)
		}
	}
	if !cancelled && len(errs) == 0 {
		return fmt.Errorf("cancel %v: %w in any subscriber", key, ErrNotRunning)
	}
	return errors.Join(errs...)
}

// ParkNow parks key now with its pending events in every subscriber where
// it has any (see Engine.ParkNow), and returns how many events it parked in
// all. It returns an error wrapping ErrNothingPending when key has no
// pending event in any subscriber; the subscribers' other errors, joined,
// each naming its subscriber.
func (t *Topic[K, E]) ParkNow(ctx context.Context, key K, reason string) (int, error) {
	var errs []error
	total, pending := 0, false
	for _, s := range t.Subscribers() {
		n, err := s.ParkNow(ctx, key, reason)
		if errors.Is(err, ErrNothingPending) {
			continue
		}
		pending = true
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("park %v in %s: %w", key, s.cfg.Name, err))
		}
	}
	if !pending {
		return 0, fmt.Errorf("park %v: %w in any subscriber", key, ErrNothingPending)
	}
	return total, errors.Join(errs...)
}

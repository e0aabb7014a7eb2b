package runtime

// resultKind says how a run of process ended.
type resultKind uint8

const (
	// ranAll: every taken event reached an outcome or was held.
	ranAll resultKind = iota
	// reoffer: an event was handled while events are held; the rest of the
	// taken events go back to the front, behind the held ones.
	reoffer
	// retryLater: the event at stopAt failed and waits for its backoff.
	retryLater
	// parkNow: the event at stopAt exhausted its attempts under ParkKey.
	parkNow
	// interrupted: a withdrawal came; events from stopAt go back, unstarted.
	interrupted
	// abandoned: Close gave up; events from stopAt go back unfinished.
	abandoned
)

// result is how a run of process (or processBatch) ended, for endTake.
type result struct {
	kind   resultKind
	stopAt int    // index in w.buf of the first event without an outcome
	done   int    // events that reached an outcome
	reason string // park reason
	err    error  // the failure that parks the key
}

// drive is a lane's turn: l is running and its shard locked; drive unlocks
// it. It reports whether the lane used its budget while other tasks wait
// and must go to the back of the run queue (it is then marked queued).
func (w *worker[K, E]) drive(l *lane[K, E]) (yielded bool) {
	e := w.e
	sh := l.shard
	handled := 0
	for {
		if e.aborted.Load() {
			// Close gave up: leave the lane as it is; Close reports it.
			l.state = laneIdle
			e.idle(sh)
			sh.mu.Unlock()
			return false
		}
		if len(l.withdraws) > 0 {
			e.serveWithdrawals(l)
			continue
		}
		if l.req != nil {
			if w.serve(l) == waitForTimer { // unlocks and relocks around store I/O
				sh.mu.Unlock()
				return false
			}
			continue
		}
		if l.holdCheck {
			l.holdCheck = false
			if w.holdExpired(l) {
				if w.boundHit(l, w.holdParkReason(l), "max_wait", e.cfg.MaxHold) == waitForTimer && w.waits(l) {
					sh.mu.Unlock()
					return false
				}
				continue
			}
		}
		if l.resync {
			switch w.resync(l) { // unlocks and relocks around the call
			case waitForTimer:
				if w.waits(l) {
					sh.mu.Unlock()
					return false
				}
			case giveUp:
				l.state = laneIdle
				e.idle(sh)
				sh.mu.Unlock()
				return false
			}
			continue
		}
		if l.parked {
			if l.q.len() == 0 {
				break
			}
			if w.park(l, l.reason) == waitForTimer && w.waits(l) {
				sh.mu.Unlock()
				return false
			}
			continue
		}
		if l.wantsPage() {
			if w.loadPage(l) == waitForTimer && w.waits(l) {
				sh.mu.Unlock()
				return false
			}
			continue
		}
		if l.q.len() == 0 {
			break
		}
		if handled >= laneBudget && (e.rq.crowded() || w.local.len() > 0) {
			l.state = laneQueued // still busy
			sh.mu.Unlock()
			return true
		}
		if e.batch != nil && w.linger(l) {
			sh.mu.Unlock() // it waits for more events, or its oldest to age
			return false
		}
		take := takeSize
		switch {
		case e.batch != nil:
			take = e.cfg.BatchSize
		case e.cfg.Conflate:
			take = 1 // leave the rest queued, where a newer event can replace it
		case handled < laneBudget:
			take = min(take, laneBudget-handled)
		}
		if r := l.replay; r != nil && r.more {
			// While the store may hold more of a replay, only loaded
			// events: they go before everything that arrived meanwhile.
			w.buf = l.q.popWhile(w.buf[:0], take, isReplayed[E])
		} else {
			w.buf = l.q.popInto(w.buf[:0], take)
		}
		l.inflight, l.taken = len(w.buf), w.buf
		w.laneHeld = len(l.held) > 0
		l.inflightAt = w.buf[0].at
		sh.mu.Unlock()

		var res result
		if e.batch != nil {
			res = w.processBatch(l)
		} else {
			res = w.process(l)
		}

		sh.mu.Lock()
		handled += res.done
		switch w.endTake(l, res) {
		case keepRunning:
		case waitForTimer:
			if w.waits(l) {
				sh.mu.Unlock()
				return false
			}
		case giveUp:
			l.state = laneIdle
			e.idle(sh)
			sh.mu.Unlock()
			return false
		}
	}
	if l.removable() {
		sh.removeLane(l)
	} else {
		l.state = laneIdle
	}
	e.idle(sh)
	sh.mu.Unlock()
	return false
}

// process handles w.buf in order without holding the lane's lock.
func (w *worker[K, E]) process(l *lane[K, E]) result {
	w.held = w.held[:0]
	done := 0
	for i := range w.buf {
		if l.interrupt.Load() {
			return result{kind: interrupted, stopAt: i, done: done}
		}
		if w.e.boxed && i+prefetchAhead < len(w.buf) {
			prefetch(boxOf(&w.buf[i+prefetchAhead].ev, w.e.boxAt))
		}
		it := &w.buf[i]
		err := w.attempt(l.key, it, notStarted{interrupt: &l.interrupt})
		v, reason, failure := w.judge(it, err, false)
		if res, stop := w.apply(l, i, i+1, v, reason, failure, &done); stop {
			return res
		}
	}
	return result{kind: ranAll, stopAt: len(w.buf), done: done}
}

// processBatch hands w.buf to the batch handler as one unit: the batch
// shares one attempt, and its verdict.
func (w *worker[K, E]) processBatch(l *lane[K, E]) result {
	w.held = w.held[:0]
	if l.interrupt.Load() {
		return result{kind: interrupted}
	}
	w.batch = w.batch[:0]
	for i := range w.buf {
		w.batch = append(w.batch, w.buf[i].ev)
	}
	first := &w.buf[0]
	err := w.call(l.key, first, notStarted{interrupt: &l.interrupt}, true)
	clear(w.batch)
	for i := range w.buf {
		w.buf[i].attempts = first.attempts
	}
	// Verdicts are the guard's decisions, whatever happened meanwhile: the
	// events it handled were applied.
	if verdicts, ok, bad := batchVerdicts(err, len(w.buf)); ok {
		if bad == nil {
			return w.judgeBatch(l, verdicts)
		}
		err = bad
	}
	v, reason, failure := w.judge(first, err, true)
	done := 0
	if res, stop := w.apply(l, 0, len(w.buf), v, reason, failure, &done); stop {
		return res
	}
	return result{kind: ranAll, stopAt: len(w.buf), done: done}
}

// endTake applies a result to the lane; its shard is locked. The finished
// events leave the lane's count, then retire (retire.go).
func (w *worker[K, E]) endTake(l *lane[K, E], res result) turnStep {
	e := w.e
	rest := w.buf[res.stopAt:]
	if l.seized {
		// ParkNow settled the turn's finished events and moved the rest to
		// the key's new lane (operator.go).
		rest, res.stopAt, res.done, l.seized = nil, 0, 0, false
	}
	l.inflight, l.taken = 0, nil
	if len(w.held) > 0 {
		l.held = append(l.held, w.held...)
		e.held.Add(int64(len(w.held)))
		clear(w.held)
		w.held = w.held[:0]
		w.armHoldTimer(l)
	}
	l.q.prependAll(rest)
	room := int64(res.done)
	if r := l.replay; r != nil {
		kept := 0
		for i := range w.buf[:res.stopAt] {
			if it := &w.buf[i]; it.out != 0 && it.replayed {
				r.finishedOne()
				kept++
			}
		}
		if !e.parksCount() {
			// A durable park's replay keeps the room of its finished
			// events for its next page (see replayState.room).
			e.keepReserve(r, int64(kept))
			room -= int64(kept)
		}
	}
	e.retire(books[K, E]{w: w, sh: l.shard}, &w.t, room, l.key, w.buf[:res.stopAt])
	w.t = tally{}
	clear(w.buf)
	w.completeReplay(l)
	switch res.kind {
	case reoffer:
		// Offer the held events again first: the handled event may have
		// filled their gap. The rest follow, in order.
		w.reofferHeld(l)
	case retryLater:
		if len(l.withdraws) > 0 {
			// Serve a Withdraw now rather than after the backoff: it may
			// take the failed event, and then there is nothing to wait for.
			e.serveWithdrawals(l)
			if l.q.len() == 0 || l.q.front().attempts == 0 {
				return keepRunning
			}
		}
		w.c.retried.Add(1)
		w.armTimer(l, e.cfg.Retry.delay(int(l.q.front().attempts)))
		return waitForTimer
	case parkNow:
		l.failErr = res.err
		return w.park(l, res.reason)
	case abandoned:
		return giveUp
	}
	if len(l.held) > e.cfg.MaxHeld {
		return w.boundHit(l, "resequencer full ("+itoa(len(l.held))+" events held): "+l.held[0].reason, "max", e.cfg.MaxHeld)
	}
	return keepRunning
}

// reofferHeld moves every held event back to the front of the lane, in
// arrival order, so the handler sees them again; sh.mu is held.
func (w *worker[K, E]) reofferHeld(l *lane[K, E]) {
	if len(l.held) == 0 {
		return
	}
	for i := len(l.held) - 1; i >= 0; i-- {
		l.q.pushFront(l.held[i].item)
	}
	w.e.held.Add(-int64(len(l.held)))
	clear(l.held)
	l.held = l.held[:0]
	w.e.stopHoldTimer(l)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// turnStep says what a lane's turn does after a step that may stop it
// (ending a take, parking, serving a request, loading a replay page).
type turnStep uint8

const (
	keepRunning  turnStep = iota // the turn goes on
	waitForTimer                 // the lane waits for its timer; still busy (see waits)
	giveUp                       // Close gave up: the lane stops where it is
)

// waits reports whether l, whose step armed its timer (a retry's backoff,
// a failed park store, room for a replay page), waits for it now. It does
// not when an operator's request came during the step and waits for this
// worker (a ParkNow while the attempt or resync could not be taken): the
// timer is stopped and drive serves the request next, instead of after a
// whole delay that nothing else would cut short. The waits of serving a
// request itself (serve) wait: serving again at once would repeat them.
func (w *worker[K, E]) waits(l *lane[K, E]) bool {
	if l.req == nil || l.state != laneWaiting || w.e.aborted.Load() {
		return true
	}
	w.e.stopTimer(l.timer) // if it fired, its function finds the lane running
	l.state = laneRunning
	return false
}

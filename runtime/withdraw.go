package runtime

import (
	"context"
	goruntime "runtime"
)

// withdrawal is a Withdraw request for a lane whose worker is in a handler:
// the worker serves it before it starts another event of the lane.
type withdrawal struct {
	match func(tag uint64) bool
	done  chan int // buffered: the worker never blocks
}

// withdraw is TransportEngine.Withdraw, whose comment says what it does.
func (e *Engine[K, E]) withdraw(ctx context.Context, match func(tag uint64) bool) (int, error) {
	n := 0
	var waits []*withdrawal
	var ready []*lane[K, E]
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		if e.aborted.Load() {
			// Close gave up: its workers are gone, and what they left stays
			// unfinished (its CloseError counted it). A withdrawal would wait
			// for a worker that never comes; those registered before were
			// answered by abort, which set aborted before it looked.
			sh.mu.Unlock()
			break
		}
		ready = ready[:0]
		if b := sh.cur; b != nil {
			// The inline batch moves to lanes, where it can be filtered; its
			// running event's key gets a lane its worker owns.
			ready = e.spillBatch(sh, b, ready)
		}
		n += e.withdrawInbox(sh, match)
		for _, l := range sh.lanes {
			if l.state != laneRunning {
				n += e.withdrawFrom(l, match, true)
				if e.retryWithdrawn(l) {
					ready = append(ready, l)
				}
				if l.state == laneIdle && l.removable() {
					sh.removeLane(l)
				}
				continue
			}
			// Its worker does not touch the queue and the held events
			// without the lock; what it took, and its park (which it may be
			// moving, loading or clearing), it serves itself, before it
			// starts another event: Withdraw waits for that, so it returns
			// only once the selected events it took have finished or been
			// withdrawn.
			n += e.withdrawFrom(l, match, false)
			if l.takesSelected(func(tag uint64, replayed bool) bool { return e.withdrawable(match, tag, replayed) }) || l.parked || (e.parksCount() && l.stored > 0) {
				wd := &withdrawal{match: match, done: make(chan int, 1)}
				l.withdraws = append(l.withdraws, wd)
				l.interrupt.Store(true)
				waits = append(waits, wd)
			}
		}
		sh.mu.Unlock()
		e.rq.pushLanes(ready)
	}
	if e.cfg.OnOutcome != nil {
		e.awaitUnreported()
	}
	for _, wd := range waits {
		select {
		case k := <-wd.done:
			n += k
		case <-ctx.Done():
			e.cancelRunning(match, withdrawCause(ctx))
			return n, ctx.Err()
		}
	}
	return n, nil
}

// withdrawable reports whether Withdraw with match takes the event tagged
// tag. A replayed event from a durable park is never taken (it is safe in
// the store, which need not keep its tag): neither withdrawn, nor waited
// for, nor cancelled.
func (e *Engine[K, E]) withdrawable(match func(uint64) bool, tag uint64, replayed bool) bool {
	return match(tag) && (!replayed || e.parksCount())
}

// cancelRunning cancels the contexts of the running attempts that Withdraw
// with match takes, with cause (nil: none).
func (e *Engine[K, E]) cancelRunning(match func(uint64) bool, cause error) {
	if e.cfg.OnOutcome == nil {
		return
	}
	ws := e.workerList()
	for _, w := range ws {
		w.running.cancelIf(func(tag uint64, replayed bool) bool { return e.withdrawable(match, tag, replayed) }, cause)
	}
}

// withdrawCause is the cause that a withdrawal whose ctx ended gives the
// attempts it cancels: ctx's own (context.WithCancelCause and the like),
// or nil when it has none beyond its error.
func withdrawCause(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != ctx.Err() {
		return cause
	}
	return nil
}

// withdrawInbox removes the selected events of sh's inbox; sh.mu is held.
func (e *Engine[K, E]) withdrawInbox(sh *shard[K, E], match func(uint64) bool) int {
	var gone []entry[K, E]
	kept := sh.inbox[:0]
	for _, en := range sh.inbox {
		if match(en.it.tag) {
			gone = append(gone, en)
		} else {
			kept = append(kept, en)
		}
	}
	clear(sh.inbox[len(kept):])
	sh.inbox = kept
	for i := range gone {
		gone[i].it.out = Withdrawn
		e.retire(books[K, E]{sh: sh}, &tally{withdrawn: 1}, 1, gone[i].key, []item[E]{gone[i].it})
	}
	return len(gone)
}

// withdrawFrom removes the selected events of l that are not running: its
// queue, its held events and, with park set, its park in memory; l's shard
// is locked, and l is not running unless park is false or its worker serves
// the withdrawal.
func (e *Engine[K, E]) withdrawFrom(l *lane[K, E], match func(uint64) bool, park bool) int {
	var taken []item[E]
	gone := func(it item[E]) {
		it.out = Withdrawn
		taken = append(taken, it)
	}
	// A replayed event leaves its park with it.
	l.q.filter(func(it *item[E]) bool {
		return e.withdrawable(match, it.tag, it.replayed)
	}, func(it item[E]) {
		if it.replayed {
			_ = e.memParks.Remove(e.base, l.key, it.seq) // memory: never fails
			l.replay.finishedOne()
		}
		gone(it)
	})
	if len(l.held) > 0 {
		kept := l.held[:0]
		for _, h := range l.held {
			if e.withdrawable(match, h.tag, h.replayed) {
				if h.replayed {
					_ = e.memParks.Remove(e.base, l.key, h.seq)
					l.replay.finishedOne()
				}
				gone(h.item)
			} else {
				kept = append(kept, h)
			}
		}
		e.held.Add(-int64(len(l.held) - len(kept)))
		clear(l.held[len(kept):])
		l.held = kept
		if len(kept) == 0 {
			e.stopHoldTimer(l)
		}
	}
	if park && e.parksCount() && l.stored > 0 {
		parked := e.memParks.withdraw(l.key, match)
		for _, ev := range parked {
			taken = append(taken, item[E]{tag: ev.Tag, out: Withdrawn})
		}
		l.stored -= len(parked)
		e.parked.Add(-int64(len(parked)))
		if l.parked && l.stored == 0 && l.q.len() == 0 && len(l.held) == 0 {
			l.parked, l.reason = false, ""
			e.parkedKeys.Add(-1)
		}
	}
	if len(taken) == 0 {
		return 0
	}
	n := len(taken)
	e.retire(books[K, E]{sh: l.shard}, &tally{withdrawn: uint64(n)}, int64(n), l.key, taken)
	return n
}

// retryWithdrawn ends the backoff of a lane whose failed event was just
// withdrawn: nothing is left to retry. The lane becomes idle, or ready when
// it holds other events, which it reports (the caller pushes it); l's shard
// is locked and l is not running.
func (e *Engine[K, E]) retryWithdrawn(l *lane[K, E]) bool {
	if l.state != laneWaiting || l.replay != nil || l.parked || l.resync || (l.q.len() > 0 && l.q.front().attempts > 0) {
		return false // still a retry, a park to store, room to wait for, or a resync
	}
	e.stopTimer(l.timer) // if it fired, its function finds the lane not waiting
	if l.q.len() > 0 {
		l.state = laneQueued // still busy
		return true
	}
	l.state = laneIdle
	e.idle(l.shard)
	return false
}

// serveWithdrawals serves l's pending withdrawals; l is running (between two
// takes of its worker: nothing taken) and its shard locked.
func (e *Engine[K, E]) serveWithdrawals(l *lane[K, E]) {
	for _, wd := range l.withdraws {
		wd.done <- e.withdrawFrom(l, wd.match, true)
	}
	clear(l.withdraws)
	l.withdraws = l.withdraws[:0]
	l.interrupt.Store(false)
}

// awaitUnreported waits until no worker has an unreported outcome of an
// inline event it finished (worker.reporting). Withdraw has spilled every
// inline batch by then, so no worker can finish another inline event of
// what it selected; the one a worker finished before, whose outcome it
// reports right after claiming the next event (or ending the batch), must
// reach Config.OnOutcome before Withdraw returns, or a transport would
// settle that event's message as unfinished and it would run again
// elsewhere. The wait is short: no handler runs between the two.
func (e *Engine[K, E]) awaitUnreported() {
	for _, w := range e.workerList() {
		for w.reporting.Load() && !e.aborted.Load() {
			if e.cfg.onReportWait != nil {
				e.cfg.onReportWait()
			}
			goruntime.Gosched()
		}
	}
}

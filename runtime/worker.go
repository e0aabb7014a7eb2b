package runtime

import (
	"context"
	goruntime "runtime"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// laneBudget is how many events a worker handles from one lane before it
// lets a waiting task go first, when no worker is free: a hot key gets one
// worker, never all, and a few yields keep its serial path short. takeSize
// is how many events it takes from the lane at once, under the shard's lock.
const (
	laneBudget = 256
	takeSize   = 64
)

// worker runs lanes taken from the run queue. It owns a lane while it runs
// it, and keeps its buffers across lanes so steady-state dispatch does not
// allocate.
type worker[K comparable, E any] struct {
	e     *Engine[K, E]
	c     counters
	buf   []item[E] // events taken from the running lane
	batch []E       // the batch handler's argument
	held  []heldItem[E]
	lanes []*lane[K, E] // lanes made ready by a dispatch
	ib    inlineBatch[K, E]
	// local holds the lanes this worker dispatched and has not started
	// yet. It runs them itself, so a lane usually stays in one core's
	// cache, but an idle worker steals from it: a slow lane never holds up
	// the lanes queued behind it in the same worker.
	local deque[K, E]
	// runs counts the lanes this worker started; the watchdog compares it
	// between ticks to find a worker stuck in a handler.
	runs     atomic.Uint64
	lastRuns uint64 // the watchdog's last look (only it reads and writes)
	timing   timing
	skips    skipCounter
	// unflushed counts events this worker finished and has not yet
	// subtracted from Engine.pending (see flush).
	unflushed atomic.Int64
	// flushes is odd while flush moves unflushed into Engine.pending, so
	// that pendingNow can tell a consistent reading from a torn one.
	flushes atomic.Uint64
	_       [64]byte
}

func (e *Engine[K, E]) startWorker() {
	w := &worker[K, E]{e: e}
	e.wmu.Lock()
	e.ws = append(e.ws, w)
	e.wmu.Unlock()
	e.workers.Add(1)
	go w.loop()
}

func (w *worker[K, E]) loop() {
	defer w.e.workers.Done()
	defer w.e.exited.Add(1)
	for {
		if l := w.local.popFront(); l != nil {
			w.runs.Add(1)
			w.run(l)
			continue
		}
		t, more := w.e.rq.pop(w.beforeSleep)
		if t.s == nil && t.l == nil {
			if !more {
				w.flush()
				return
			}
			continue
		}
		w.runTask(t)
	}
}

// runTask runs one task from the run queue.
func (w *worker[K, E]) runTask(t task[K, E]) {
	switch {
	case t.s != nil && w.e.inline:
		w.dispatchInline(t.s)
	case t.s != nil:
		w.dispatch(t.s)
	case t.l != nil:
		w.run(t.l)
	}
}

// dispatch moves a shard's inbox into lanes: each event joins its key's
// lane, made here when the key has none, and the lanes that became ready go
// to the run queue together.
func (w *worker[K, E]) dispatch(sh *shard[K, E]) {
	e := w.e
	w.lanes = w.lanes[:0]
	sh.mu.Lock()
	for i := range sh.inbox {
		en := &sh.inbox[i]
		l := sh.lanes[en.key]
		if l == nil {
			l = sh.newLane(en.key)
			sh.lanes[en.key] = l
		}
		if e.cfg.Conflate && l.conflatable() {
			old := l.q.back()
			e.report(en.key, old.tag, Conflated)
			sh.conflated++
			old.ev, old.tag = en.it.ev, en.it.tag
			e.finishMisc(1)
		} else {
			l.q.pushBack(en.it)
		}
		if e.schedule(l) {
			w.lanes = append(w.lanes, l)
		}
	}
	clear(sh.inbox)
	sh.inbox = sh.inbox[:0]
	sh.queued = false
	e.idle(sh)
	sh.mu.Unlock()
	if len(w.lanes) > 0 {
		if w.local.pushAll(w.lanes) >= eagerSteal {
			e.rq.wakeThief() // plenty for two: an idle worker shares it
		}
		clear(w.lanes)
	}
}

// eagerSteal is the length of a worker's deque at which it wakes a thief at
// once. Below it, the watchdog wakes one when the worker makes no progress
// for a tick: a few fast lanes are cheaper run by one worker than shared,
// and a slow one still holds up the others by at most a tick.
const eagerSteal = 16

// watch runs on each clock tick: a worker that started no lane since the
// last tick while lanes wait in its deque is stuck in a handler, so a
// sleeping worker is woken to steal them.
func (e *Engine[K, E]) watch() {
	e.watchBatches()
	e.wmu.Lock()
	ws := e.ws
	e.wmu.Unlock()
	for _, w := range ws {
		runs := w.runs.Load()
		stuck := runs == w.lastRuns
		w.lastRuns = runs
		if stuck && w.local.len() > 0 {
			e.rq.wakeThief()
		}
	}
}

// beforeSleep runs when the run queue is empty: the worker publishes its
// finished count, then tries to steal lanes from a busy worker. It reports
// whether it found work.
func (w *worker[K, E]) beforeSleep() bool {
	w.flush()
	e := w.e
	e.wmu.Lock()
	ws := e.ws
	e.wmu.Unlock()
	for _, v := range ws {
		if v != w && v.local.stealHalf(&w.local, &w.lanes) {
			return true
		}
	}
	return false
}

// run works on l until it has nothing runnable, must wait for a retry, or
// used its budget while other lanes wait.
func (w *worker[K, E]) run(l *lane[K, E]) {
	l.shard.mu.Lock()
	l.state = laneRunning
	w.drive(l, 0)
}

// drive is run's loop: l is running and its shard locked; drive unlocks it.
// handled counts the events handled so far in this turn.
func (w *worker[K, E]) drive(l *lane[K, E], handled int) {
	e := w.e
	sh := l.shard
	for {
		if e.aborted.Load() {
			// Close gave up: leave the lane as it is; Close reports it.
			l.state = laneIdle
			e.idle(sh)
			sh.mu.Unlock()
			return
		}
		if l.req != nil {
			if w.serve(l) == waitForTimer { // unlocks and relocks around store I/O
				sh.mu.Unlock()
				return
			}
			continue
		}
		if l.holdCheck {
			l.holdCheck = false
			if w.holdExpired(l) {
				if !e.closing.Load() {
					e.cfg.Logger.Warn("ordergen: resequencer bound hit: parking the key", "engine", e.cfg.Name, "key", l.key,
						"held", len(l.held), "max_wait", e.cfg.MaxHold, "reason", l.held[0].reason)
				}
				if w.park(l, w.holdParkReason(l)) == waitForTimer {
					sh.mu.Unlock()
					return
				}
				continue
			}
		}
		if l.parked {
			if l.q.len() == 0 {
				break
			}
			if w.park(l, l.reason) == waitForTimer {
				sh.mu.Unlock()
				return
			}
			continue
		}
		if l.q.len() == 0 {
			break
		}
		if handled >= laneBudget && e.rq.crowded() {
			// Let the oldest waiting task have this worker: the lane goes to
			// the front of the run queue, for the next worker that frees up.
			l.state = laneQueued
			sh.mu.Unlock()
			if t, ok := e.rq.swapFront(task[K, E]{l: l}); ok {
				w.runTask(t)
			}
			return
		}
		take := takeSize
		if e.batch != nil {
			take = e.cfg.BatchSize
		} else if e.cfg.Conflate {
			take = 1 // leave the rest pending, where a newer event can replace it
		}
		w.buf = l.q.popInto(w.buf[:0], take)
		l.inflight = len(w.buf)
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
		switch w.settle(l, res) {
		case keepRunning:
		case waitForTimer:
			sh.mu.Unlock()
			return
		case giveUp:
			l.state = laneIdle
			e.idle(sh)
			sh.mu.Unlock()
			return
		}
	}
	if l.removable() {
		sh.removeLane(l)
	} else {
		l.state = laneIdle
	}
	e.idle(sh)
	sh.mu.Unlock()
}

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
	// parkNow: the event at stopAt exhausted its attempts under Park.
	parkNow
	// abandoned: Close gave up; events from stopAt go back unfinished.
	abandoned
)

type result struct {
	kind   resultKind
	stopAt int    // index in w.buf of the first event without an outcome
	done   int    // events that reached an outcome
	reason string // park reason
	err    error  // the failure that parks the key
}

// process handles w.buf in order without holding the lane's lock.
func (w *worker[K, E]) process(l *lane[K, E]) result {
	w.held = w.held[:0]
	done := 0
	for i := range w.buf {
		it := &w.buf[i]
		if res, stop := w.judge(l, it, w.attempt(l.key, it), i, &done); stop {
			return res
		}
	}
	return result{kind: ranAll, stopAt: len(w.buf), done: done}
}

// judge applies the result err of an attempt of it, the event at index i of
// w.buf, counting outcomes in *done. It reports whether processing stops
// there, and how.
func (w *worker[K, E]) judge(l *lane[K, E], it *item[E], err error, i int, done *int) (result, bool) {
	e := w.e
	if err == nil {
		w.c.handled.Add(1)
		e.report(l.key, it.tag, Handled)
		*done++
		w.finished(l, it)
		if len(l.held) > 0 || len(w.held) > 0 {
			return result{kind: reoffer, stopAt: i + 1, done: *done}, true
		}
		return result{}, false
	}
	if e.aborted.Load() {
		return result{kind: abandoned, stopAt: i, done: *done}, true
	}
	if reason, ok := IsSkip(err); ok {
		w.c.skipped.Add(1)
		if e.metrics != nil {
			w.skips.add(reason)
		}
		e.report(l.key, it.tag, Skipped)
		*done++
		w.finished(l, it)
		return result{}, false
	}
	if reason, ok := IsHold(err); ok {
		w.held = append(w.held, heldItem[E]{item: *it, reason: reason, heldAt: e.now()})
		return result{}, false
	}
	if w.retryable(it, err) {
		return result{kind: retryLater, stopAt: i, done: *done}, true
	}
	switch e.cfg.OnExhausted {
	case Drop:
		w.c.dropped.Add(1)
		e.report(l.key, it.tag, Dropped)
	case DeadLetter:
		if err := w.deadLetter(l, it, err); err != nil {
			return result{kind: parkNow, stopAt: i, done: *done, reason: parkReason(it, err), err: err}, true
		}
	default:
		return result{kind: parkNow, stopAt: i, done: *done, reason: parkReason(it, err), err: err}, true
	}
	*done++
	w.finished(l, it)
	return result{}, false
}

// processBatch hands w.buf to the batch handler as one unit.
func (w *worker[K, E]) processBatch(l *lane[K, E]) result {
	e := w.e
	w.held = w.held[:0]
	w.batch = w.batch[:0]
	for i := range w.buf {
		w.batch = append(w.batch, w.buf[i].ev)
	}
	first := &w.buf[0]
	err := w.call(l.key, first, func(ctx context.Context) error { return e.batch(ctx, l.key, w.batch) })
	clear(w.batch)
	for i := range w.buf {
		w.buf[i].attempts = first.attempts
	}
	if err == nil {
		w.c.handled.Add(uint64(len(w.buf)))
		w.reportAll(l, Handled)
		w.finishedAll(l)
		return result{kind: ranAll, stopAt: len(w.buf), done: len(w.buf)}
	}
	if e.aborted.Load() {
		return result{kind: abandoned}
	}
	if _, ok := IsSkip(err); ok {
		w.c.skipped.Add(uint64(len(w.buf)))
		w.reportAll(l, Skipped)
		w.finishedAll(l)
		return result{kind: ranAll, stopAt: len(w.buf), done: len(w.buf)}
	}
	if _, ok := IsHold(err); ok {
		err = Permanent(err)
	}
	if w.retryable(first, err) {
		return result{kind: retryLater}
	}
	switch e.cfg.OnExhausted {
	case Drop:
		w.c.dropped.Add(uint64(len(w.buf)))
		w.reportAll(l, Dropped)
	case DeadLetter:
		for i := range w.buf {
			if err := w.deadLetter(l, &w.buf[i], err); err != nil {
				return result{kind: parkNow, stopAt: i, done: i, reason: parkReason(&w.buf[i], err), err: err}
			}
			w.finished(l, &w.buf[i])
		}
		return result{kind: ranAll, stopAt: len(w.buf), done: len(w.buf)}
	default:
		return result{kind: parkNow, reason: parkReason(first, err), err: err}
	}
	w.finishedAll(l)
	return result{kind: ranAll, stopAt: len(w.buf), done: len(w.buf)}
}

func (w *worker[K, E]) reportAll(l *lane[K, E], o Outcome) {
	for i := range w.buf {
		w.e.report(l.key, w.buf[i].tag, o)
	}
}

func (w *worker[K, E]) finishedAll(l *lane[K, E]) {
	for i := range w.buf {
		w.finished(l, &w.buf[i])
	}
}

// attempt runs the handler once for it.
func (w *worker[K, E]) attempt(key K, it *item[E]) error {
	return w.call(key, it, func(ctx context.Context) error { return w.e.handle(ctx, key, it.ev) })
}

// call runs fn as one attempt of it: with the per-attempt timeout, and with
// a panic turned into a PanicError.
func (w *worker[K, E]) call(key K, it *item[E], fn func(context.Context) error) (err error) {
	e := w.e
	it.attempts++
	ctx := e.base
	if e.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.cfg.Timeout)
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() == context.DeadlineExceeded && e.base.Err() == nil {
				w.logTimeout(key, it)
			}
		}()
	}
	if e.metrics != nil && w.timing.sample() {
		start := time.Now()
		defer func() {
			w.recordAttempt(time.Since(start), err, ctx.Err() == context.DeadlineExceeded)
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// logTimeout tells the operator about an attempt that ran out of its
// timeout, at most once a second.
func (w *worker[K, E]) logTimeout(key K, it *item[E]) {
	e := w.e
	if ok, n := e.timeoutLog.allow(e.now()); ok {
		e.cfg.Logger.Warn("ordergen: handler exceeded its timeout", "engine", e.cfg.Name, "key", key,
			"timeout", e.cfg.Timeout, "attempt", it.attempts, "timeouts", n)
	}
}

// next says what run does after settling a result.
type next uint8

const (
	keepRunning  next = iota
	waitForTimer      // the lane waits for its retry timer; still busy
	giveUp            // Close gave up: the lane stops where it is
)

// settle applies a result to the lane; its shard is locked.
func (w *worker[K, E]) settle(l *lane[K, E], res result) next {
	e := w.e
	rest := w.buf[res.stopAt:]
	l.inflight = 0
	if res.done > 0 {
		w.finish(int64(res.done))
	}
	if len(w.held) > 0 {
		l.held = append(l.held, w.held...)
		e.held.Add(int64(len(w.held)))
		clear(w.held)
		w.held = w.held[:0]
		w.armHoldTimer(l)
	}
	l.q.prependAll(rest)
	clear(w.buf)
	w.completeReplay(l)
	switch res.kind {
	case reoffer:
		// Offer the held events again first: the handled event may have
		// filled their gap. The rest follow, in order.
		w.reofferHeld(l)
	case retryLater:
		w.c.retried.Add(1)
		l.state = laneWaiting
		w.armRetry(l, e.cfg.Retry.delay(int(l.q.front().attempts)))
		return waitForTimer
	case parkNow:
		l.failErr = res.err
		return w.park(l, res.reason)
	case abandoned:
		return giveUp
	}
	if len(l.held) > e.cfg.MaxHeld {
		e.cfg.Logger.Warn("ordergen: resequencer bound hit: parking the key", "engine", e.cfg.Name, "key", l.key,
			"held", len(l.held), "max", e.cfg.MaxHeld, "reason", l.held[0].reason)
		return w.park(l, "resequencer full ("+itoa(len(l.held))+" events held): "+l.held[0].reason)
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
	w.stopHoldTimer(l)
}

// finish records that n pending events reached an outcome. The worker
// subtracts them from Engine.pending in batches, so that the goroutine that
// submits keeps that counter's cache line; a submitter waiting for room gets
// them at once.
func (w *worker[K, E]) finish(n int64) {
	if w.unflushed.Add(n) >= 64 || w.e.space.waiters.Load() > 0 {
		w.flush()
	}
}

// flush subtracts the events this worker finished from Engine.pending. The
// two counters cannot change together, so flushes brackets the move and
// pendingNow retries a reading taken in the middle of one: a reader never
// sees the events counted twice (a quiescent engine with one pending event)
// or not at all. Only the worker itself calls flush.
func (w *worker[K, E]) flush() {
	n := w.unflushed.Load()
	if n == 0 {
		return
	}
	w.flushes.Add(1)
	w.unflushed.Add(-n)
	w.e.pending.Add(-n)
	w.flushes.Add(1)
	w.e.space.broadcastIfWaiting()
}

// finishMisc records that n pending events reached an outcome outside the
// workers' counted paths.
func (e *Engine[K, E]) finishMisc(n int64) {
	e.pending.Add(-n)
	e.space.broadcastIfWaiting()
}

// pendingNow returns the exact number of pending events: Engine.pending less
// what the workers finished and have not subtracted yet.
func (e *Engine[K, E]) pendingNow() int64 {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	for {
		if n, ok := e.readPending(); ok {
			return n
		}
		goruntime.Gosched() // a worker is in the middle of flush: a few instructions
	}
}

// readPending reads Engine.pending less every worker's unflushed count. It
// reports false when a worker's flush overlapped the reading (its flushes
// count was odd, or moved); e.wmu is held.
func (e *Engine[K, E]) readPending() (int64, bool) {
	seqs := e.flushSeqs[:0]
	for _, w := range e.ws {
		s := w.flushes.Load()
		if s&1 != 0 {
			return 0, false
		}
		seqs = append(seqs, s)
	}
	e.flushSeqs = seqs
	n := e.pending.Load()
	for _, w := range e.ws {
		n -= w.unflushed.Load()
	}
	for i, w := range e.ws {
		if w.flushes.Load() != seqs[i] {
			return 0, false
		}
	}
	return n, true
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

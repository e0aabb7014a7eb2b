package runtime

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The scheduler.
//
// The life of an event:
//
//  1. Submit locks the key's shard. A conflating engine replaces the key's
//     newest queued event (conflation at the door). Otherwise the shard
//     checks the key's count against Backlog.PerKey and the engine reserves
//     room in Backlog.Total (Engine.load); without room the FullPolicy
//     decides. The event joins its key's lane when the key has one (in a
//     conflating engine every key gets one here), or else the shard's
//     inbox.
//  2. The lane, or the shard's inbox, becomes a task in the run queue: a
//     ready task, ahead of tasks that already used a whole turn (yielded).
//     A lane of a lane engine goes to its shard's ready list instead, and
//     the shard becomes the task.
//  3. A worker takes the task. An inbox is run inline, in order, without
//     lanes (inline.go); in an engine whose keys run in lanes (a batch
//     handler, conflation) the shard's task hands its inbox, moved into
//     lanes, and its ready lanes to the worker's own deque, which an idle
//     worker steals from (dispatchLanes). An event that fails or is held
//     gives its key a lane, with the key's later events. A lane's turn
//     takes its events a few at a time, runs them without the lock, and
//     settles them under it.
//  4. Settling releases each finished event's room (per key, then total),
//     wakes blocked submitters, and only then reports the outcome: a
//     transport that learns of an outcome finds the room released.
//  5. A failed attempt waits for its backoff on a timer that holds no
//     worker, then the lane is ready again. A held event waits in its
//     lane's resequencer. An event out of attempts parks its key (park.go,
//     parking.go): its events leave in order for the park, which counts
//     against the limits while it is in memory.
//  6. A turn ends when the lane is empty (it is removed), waits for a timer,
//     or has used its budget while tasks wait (in the run queue, or in the
//     worker's deque): it then goes to the back of the run queue and the
//     worker returns to its loop. The watchdog wakes or starts a worker to
//     steal from the deque of one stuck in a handler. Nothing runs a
//     task from inside another: the stack never grows with work done.
//
// The lock rule: a shard's mutex guards its inbox, its lanes' map and every
// field of its lanes (but interrupt, an atomic hint), and the per-key
// counts; a worker owns the events it took from a lane (w.buf) and claims
// the events of an inline batch one by one with a compare-and-swap on the
// batch's position. Only one shard's mutex is held at a time. The run
// queue's, the room's, the deques' and the workers' list's mutexes are
// taken after a shard's or alone, never before one. Handlers, park stores and the
// dead-letter sink are called without any lock; OnOutcome is called under
// a shard's lock.

// laneBudget is how many events a worker handles in one turn of a lane or
// an inbox before it lets waiting tasks go first, when no worker is free: a
// hot key gets one worker, never all, and no key waits for more than one
// turn per worker. takeSize is how many events a worker takes from a lane
// at once, under the shard's lock.
const (
	laneBudget = 256
	takeSize   = 64
)

// worker runs tasks taken from the run queue. It owns a lane while it runs
// it, and keeps its buffers across lanes so steady-state dispatch does not
// allocate.
type worker[K comparable, E any] struct {
	e     *Engine[K, E]
	c     counters
	buf   []item[E] // events taken from the running lane
	batch []E       // the batch handler's argument
	held  []heldItem[E]
	ib    inlineBatch[K, E]
	// hot is dispatchLanes' and stealWork's scratch space.
	hot []*lane[K, E]
	// local holds lanes this worker dispatched (engines whose keys run in
	// lanes) and has not started: it runs them itself, so a lane usually
	// stays in one core's cache and no global lock is taken per lane; an
	// idle worker steals half of them. runs counts the tasks it started,
	// for the watchdog to see a worker stuck in a handler with lanes
	// waiting behind it (lastRuns is its last look).
	local    deque[K, E]
	runs     atomic.Uint64
	lastRuns uint64
	// laneHeld says whether the running lane held events when its events
	// were taken: judge reads it instead of the lane, which Withdraw may
	// change meanwhile.
	laneHeld bool
	// running is the attempt in progress, for Withdraw to cancel (only when
	// Config.OnOutcome is set: a transport tracks its events).
	running runningAttempt
	// timing and skips serve the metrics.
	timing timing
	skips  skipCounter
	_      [64]byte
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
	// Only engines whose keys run in lanes use the deques: an inline
	// engine's stay empty, so its workers neither look in them nor steal.
	lanes := !w.e.inline
	var steal func() bool
	if lanes {
		steal = w.stealWork
	}
	for {
		if lanes {
			if l := w.local.popFront(); l != nil {
				if w.e.aborted.Load() {
					return
				}
				w.runs.Add(1)
				w.runLane(l)
				continue
			}
		}
		t, ok := w.e.rq.pop(steal)
		if !ok || w.e.aborted.Load() {
			// Close gave up: no new task starts. (A batch the worker left
			// when it gave up stays its shard's current one, for Close's
			// report; running another would reuse its buffers.)
			return
		}
		if t.s == nil && t.l == nil {
			continue // it stole lanes into its deque
		}
		w.runs.Add(1)
		w.runTask(t)
	}
}

// stealWork moves half of a busy worker's waiting lanes into this one's
// deque, before this one sleeps. It reports whether it found any.
func (w *worker[K, E]) stealWork() bool {
	e := w.e
	ws := e.workerList()
	for _, v := range ws {
		if v != w && v.local.stealHalf(&w.local, &w.hot) {
			return true
		}
	}
	return false
}

// eagerSteal is the length of a worker's deque at which it wakes a thief at
// once. Below it, the watchdog wakes or starts one when the worker starts
// nothing for a tick: a few fast lanes are cheaper run by one worker than
// shared, and a slow one holds up the others by at most a tick.
const eagerSteal = 16

// runTask runs one task: an inbox inline, or a lane's turn. Running an
// inbox may leave this worker owning a lane (an inline event's key got one
// that this worker must go on with); it takes that lane's turn next.
func (w *worker[K, E]) runTask(t task[K, E]) {
	l := t.l
	switch {
	case t.s != nil && !w.e.inline:
		w.dispatchLanes(t.s)
		return
	case t.s != nil:
		if l = w.dispatchInline(t.s); l == nil {
			return
		}
	}
	w.runLane(l)
}

// runLane takes l's turn; a lane that used its budget goes to the back of
// the run queue.
func (w *worker[K, E]) runLane(l *lane[K, E]) {
	l.shard.mu.Lock()
	l.state = laneRunning
	if w.drive(l) {
		w.e.rq.pushYielded(task[K, E]{l: l})
	}
}

// dispatchLanes hands the work of sh to this worker, for an engine whose
// keys run in lanes: the inbox's events join their keys' lanes, made here
// when a key has none (with a batch handler, so the submitting goroutine
// never makes lanes), and those lanes and the ones submitters made ready
// (sh.ready) go to this worker's deque together.
func (w *worker[K, E]) dispatchLanes(sh *shard[K, E]) {
	e := w.e
	ready := w.hot[:0]
	sh.mu.Lock()
	ready = append(ready, sh.ready...)
	clear(sh.ready)
	sh.ready = sh.ready[:0]
	ready = e.inboxToLanes(sh, ready)
	sh.mu.Unlock()
	if len(ready) > 0 && w.local.pushAll(ready) >= eagerSteal {
		e.rq.startThief() // plenty for two
	}
	clear(ready)
	w.hot = ready[:0]
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
				if w.boundHit(l, w.holdParkReason(l), "max_wait", e.cfg.MaxHold) == waitForTimer {
					sh.mu.Unlock()
					return false
				}
				continue
			}
		}
		if l.resync {
			switch w.resync(l) { // unlocks and relocks around the call
			case waitForTimer:
				sh.mu.Unlock()
				return false
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
			if w.park(l, l.reason) == waitForTimer {
				sh.mu.Unlock()
				return false
			}
			continue
		}
		if l.wantsPage() {
			if w.loadPage(l) == waitForTimer {
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
		switch w.settle(l, res) {
		case keepRunning:
		case waitForTimer:
			sh.mu.Unlock()
			return false
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
	// interrupted: a withdrawal came; events from stopAt go back, unstarted.
	interrupted
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
		if l.interrupt.Load() {
			return result{kind: interrupted, stopAt: i, done: done}
		}
		it := &w.buf[i]
		if res, stop := w.judge(l, it, w.attempt(l.key, it, notStarted{interrupt: &l.interrupt}), i, &done); stop {
			return res
		}
	}
	return result{kind: ranAll, stopAt: len(w.buf), done: done}
}

// judge applies the result err of an attempt of it, the event at index i of
// w.buf, counting outcomes in *done and recording each in it.out (settle
// reports them). It reports whether processing stops there, and how.
func (w *worker[K, E]) judge(l *lane[K, E], it *item[E], err error, i int, done *int) (result, bool) {
	e := w.e
	if err == nil {
		w.c.handled.Add(1)
		w.finished(l, it, Handled, done)
		if w.laneHeld || len(w.held) > 0 {
			return result{kind: reoffer, stopAt: i + 1, done: *done}, true
		}
		return result{}, false
	}
	if e.aborted.Load() {
		return result{kind: abandoned, stopAt: i, done: *done}, true
	}
	if err == errWithdrawing {
		return result{kind: interrupted, stopAt: i, done: *done}, true
	}
	if reason, ok := IsSkip(err); ok {
		w.c.skipped.Add(1)
		if e.metrics != nil {
			w.skips.add(reason)
		}
		w.finished(l, it, Skipped, done)
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
		w.finished(l, it, Dropped, done)
	case DeadLetter:
		if err := w.deadLetter(l, it, err); err != nil {
			return result{kind: parkNow, stopAt: i, done: *done, reason: parkReason(it, err), err: err}, true
		}
		w.finished(l, it, DeadLettered, done)
	default:
		return result{kind: parkNow, stopAt: i, done: *done, reason: parkReason(it, err), err: err}, true
	}
	return result{}, false
}

// processBatch hands w.buf to the batch handler as one unit.
func (w *worker[K, E]) processBatch(l *lane[K, E]) result {
	e := w.e
	w.held = w.held[:0]
	if l.interrupt.Load() {
		return result{kind: interrupted}
	}
	w.batch = w.batch[:0]
	for i := range w.buf {
		w.batch = append(w.batch, w.buf[i].ev)
	}
	first := &w.buf[0]
	err := w.call(l.key, first, notStarted{interrupt: &l.interrupt}, func(ctx context.Context) error { return e.batch(ctx, l.key, w.batch) })
	clear(w.batch)
	for i := range w.buf {
		w.buf[i].attempts = first.attempts
	}
	all := func(o Outcome) result {
		done := 0
		for i := range w.buf {
			w.finished(l, &w.buf[i], o, &done)
		}
		return result{kind: ranAll, stopAt: len(w.buf), done: done}
	}
	if err == nil {
		w.c.handled.Add(uint64(len(w.buf)))
		return all(Handled)
	}
	// Verdicts are the handler's decisions, whatever happened meanwhile:
	// the events it handled were applied.
	if verdicts, ok, bad := batchVerdicts(err, len(w.buf)); ok {
		if bad == nil {
			return w.judgeBatch(l, verdicts)
		}
		err = bad
	}
	if e.aborted.Load() {
		return result{kind: abandoned}
	}
	if err == errWithdrawing {
		return result{kind: interrupted}
	}
	if _, ok := IsSkip(err); ok {
		w.c.skipped.Add(uint64(len(w.buf)))
		return all(Skipped)
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
		return all(Dropped)
	case DeadLetter:
		done := 0
		for i := range w.buf {
			if err := w.deadLetter(l, &w.buf[i], err); err != nil {
				return result{kind: parkNow, stopAt: i, done: done, reason: parkReason(&w.buf[i], err), err: err}
			}
			w.finished(l, &w.buf[i], DeadLettered, &done)
		}
		return result{kind: ranAll, stopAt: len(w.buf), done: done}
	}
	return result{kind: parkNow, reason: parkReason(first, err), err: err}
}

// finished records the outcome o of it and counts it in *done. A replayed
// event also leaves the park store here (without the lane's lock: the
// worker owns the event).
func (w *worker[K, E]) finished(l *lane[K, E], it *item[E], o Outcome, done *int) {
	it.out = o
	*done++
	if !it.replayed {
		return
	}
	e := w.e
	if err := e.cfg.Parks.Remove(e.base, l.key, it.seq); err != nil {
		// The event has its outcome; left in the store, a later replay
		// offers it again and the version guard skips it.
		e.cfg.Logger.Error("ordergen: park store failed to remove a replayed event",
			"engine", e.cfg.Name, "key", l.key, "error", err)
	}
}

// attempt runs the handler once for it.
func (w *worker[K, E]) attempt(key K, it *item[E], ns notStarted) error {
	return w.call(key, it, ns, func(ctx context.Context) error { return w.e.handle(ctx, key, it.ev) })
}

// errWithdrawing is what call returns for an attempt that a withdrawal
// stopped: it did not start, or Withdraw cancelled it. The event goes back
// unjudged (no retry, no park), for the withdrawal to take.
var errWithdrawing = errors.New("ordergen: withdrawing")

// notStarted tells call whether a withdrawal came for the event between
// the moment the worker took it and the start of its attempt: the lane's
// interrupt flag, or an inline batch that was stolen from the event's
// position.
type notStarted struct {
	interrupt *atomic.Bool
	pos       *atomic.Int64
	at        int64
}

func (n notStarted) now() bool {
	return (n.interrupt != nil && n.interrupt.Load()) || (n.pos != nil && n.pos.Load() != n.at)
}

// call runs fn as one attempt of it: with the per-attempt timeout, and with
// a panic turned into a PanicError.
func (w *worker[K, E]) call(key K, it *item[E], ns notStarted, fn func(context.Context) error) (err error) {
	e := w.e
	it.attempts++
	ctx := e.base
	var cancel context.CancelFunc
	switch {
	case e.cfg.Timeout > 0:
		ctx, cancel = context.WithTimeout(ctx, e.cfg.Timeout)
		defer func() {
			if err != nil && ctx.Err() == context.DeadlineExceeded && e.base.Err() == nil {
				w.logTimeout(key, it)
			}
		}()
	case e.cfg.OnOutcome != nil:
		ctx, cancel = context.WithCancel(ctx) // Withdraw may cancel it
	}
	if cancel != nil {
		defer cancel()
	}
	if e.cfg.OnOutcome != nil {
		w.running.begin(it.tag, it.replayed, cancel)
		defer w.running.end()
		// Withdraw marks the lane (or steals the batch) before it cancels
		// the running attempts: an attempt it could not see yet does not
		// start, and one it cancelled goes back to be withdrawn.
		if ns.now() {
			it.attempts--
			return errWithdrawing
		}
		defer func() {
			// A batch's Verdicts stand: the events it handled were applied.
			if err != nil && w.running.wasCancelled() && !isVerdicts(err) {
				err = errWithdrawing
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

// runningAttempt is a worker's attempt in progress: its event's tag and
// the cancel function of its context.
type runningAttempt struct {
	mu        sync.Mutex
	tag       uint64
	replayed  bool
	cancel    context.CancelFunc
	cancelled bool // by Withdraw
}

func (r *runningAttempt) begin(tag uint64, replayed bool, cancel context.CancelFunc) {
	r.mu.Lock()
	r.tag, r.replayed, r.cancel, r.cancelled = tag, replayed, cancel, false
	r.mu.Unlock()
}

// wasCancelled reports whether Withdraw cancelled the attempt.
func (r *runningAttempt) wasCancelled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cancelled
}

func (r *runningAttempt) end() {
	r.mu.Lock()
	r.cancel = nil
	r.mu.Unlock()
}

// cancelIf cancels the attempt in progress if sel selects its event.
func (r *runningAttempt) cancelIf(sel func(tag uint64, replayed bool) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil && sel(r.tag, r.replayed) {
		r.cancel()
		r.cancelled = true
	}
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

// next says what a turn does after settling a result.
type next uint8

const (
	keepRunning  next = iota
	waitForTimer      // the lane waits for its timer; still busy
	giveUp            // Close gave up: the lane stops where it is
)

// settle applies a result to the lane; its shard is locked. The finished
// events leave the lane's count and release their room before their
// outcomes are reported.
func (w *worker[K, E]) settle(l *lane[K, E], res result) next {
	e := w.e
	rest := w.buf[res.stopAt:]
	l.inflight, l.taken = 0, nil
	if len(w.held) > 0 {
		l.held = append(l.held, w.held...)
		e.held.Add(int64(len(w.held)))
		clear(w.held)
		w.held = w.held[:0]
		w.armHoldTimer(l)
	}
	l.q.prependAll(rest)
	kept := int64(0)
	if r := l.replay; r != nil && !e.parksCount() {
		// A durable park's replay keeps the room of its finished events
		// for its next page (see replayState.room).
		for i := range w.buf[:res.stopAt] {
			if it := &w.buf[i]; it.out != 0 && it.replayed {
				kept++
			}
		}
		e.keepReplayRoom(r, kept)
	}
	e.release(int64(res.done) - kept)
	for i := range w.buf[:res.stopAt] {
		if it := &w.buf[i]; it.out != 0 {
			if it.replayed {
				l.replay.finishedOne()
			}
			e.report(l.key, it.tag, it.out)
		}
	}
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

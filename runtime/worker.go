package runtime

import (
	"sync/atomic"
)

// worker runs tasks taken from the run queue. It owns a lane while it runs
// it, and keeps its buffers across lanes so steady-state dispatch does not
// allocate. Its fields are its own goroutine's, but for c, runs and
// reporting (atomics that Stats, the watchdog and Withdraw read), running
// (an atomic pointer that Withdraw, Close and the watchdog read), local and
// skips (with locks of their own), lastRuns (the watchdog's alone), ib
// (see inlineBatch), and buf, whose events' tags Withdraw reads under the
// lane's shard's lock (lane.taken).
type worker[K comparable, E any] struct {
	e *Engine[K, E]
	c counters
	// t counts the outcomes of the events in buf until they retire.
	t     tally
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
	// reporting is set while the worker has not reported the outcome of an
	// inline event it finished, which it reports once it claimed the next
	// one (or ended the batch): Withdraw waits until it has, so that a
	// transport ending an ownership learns every outcome that came before.
	reporting atomic.Bool
	// running is the attempt in progress, for Withdraw to cancel (only when
	// Config.OnOutcome is set: a transport tracks its events).
	running runningAttempt
	// ctxs is what is left of the slab the worker cuts its attempts'
	// contexts from (newAttemptCtx).
	ctxs []attemptCtx
	// inBatch says that the worker's task is an inline batch, counted in
	// the run queue's inBatch until it comes back for a task or leaves the
	// batch for a lane.
	inBatch bool
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
		t, ok := w.e.rq.pop(steal, w.inBatch)
		w.inBatch = ok && t.s != nil && w.e.inline
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
		// The batch handed this worker a lane, whose turn may be long: it
		// is no longer a worker that comes back soon.
		w.inBatch = false
		w.e.rq.leaveBatch()
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

// workerList returns the workers started so far.
func (e *Engine[K, E]) workerList() []*worker[K, E] {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	return e.ws
}

// laneBudget is how many events a worker handles in one turn of a lane
// before it lets waiting tasks go first, when no worker is free: a hot key
// gets one worker, never all, and new work waits for at most one turn per
// worker and one more (see runQueue). An inline batch has no budget: it is
// the inbox as the worker found it (see inline.go). takeSize is how many
// events a worker takes from a lane at once, under the shard's lock.
const (
	laneBudget = 256
	takeSize   = 64
)

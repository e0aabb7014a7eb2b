package runtime

import (
	"sync"
	"sync/atomic"
)

// task is one unit of work for a worker: a lane to run, or a shard whose
// inbox is to be run inline.
type task[K comparable, E any] struct {
	l *lane[K, E]
	s *shard[K, E]
}

// readyFirst is how many ready tasks a worker takes in a row while a
// yielded task waits: newly runnable keys go ahead of keys that already had
// a turn, but a yielded key still gets a turn after at most this many.
const readyFirst = 4

// runQueue holds the tasks that wait for a worker, in two FIFOs: ready
// tasks became runnable (a key's first event, a retry that is due, an
// operator request) and yielded tasks used a whole budget and still have
// work. A worker takes a ready task first, and a yielded task at least once
// every readyFirst+1 tasks, so a hot key keeps being served: a task that
// becomes ready while none waits ahead of it waits for the turns in
// progress and at most one yielded turn more (the first pick after it may
// be the yielded task's, when readyFirst ready tasks went just before).
//
// Workers are started on demand, up to max, and sleep on the condition when
// there is nothing to run: an idle engine costs no CPU, and a task pushed
// while every worker is busy starts another worker if the limit allows.
type runQueue[K comparable, E any] struct {
	// Set by init, then read only.
	max   int
	start func() // starts a worker; called with mu held (it takes Engine.wmu)
	clock *clock
	// inline: the engine runs its inboxes inline, and a shard's task is
	// an inline batch (see pushInbox).
	inline bool

	// queued and asleep mirror the queues' length and sleepy for readers
	// without the lock (written under it).
	queued, asleep atomic.Int32

	// mu guards the fields below; cond waits on it.
	mu             sync.Mutex
	cond           sync.Cond
	ready, yielded ring[task[K, E]]
	readyRun       int // ready tasks taken in a row while yielded ones waited
	sleepy         int // workers waiting on cond and not yet signalled
	workers        int // workers started
	// draining: workers exit once the queues are empty; aborting: at once.
	draining, aborting bool
	// inBatch counts the workers running an inline batch, who come back
	// for a task when it ends; returnedAt is the coarse time at which a
	// worker last came back (pop). skipped says that a task was queued
	// without a wake (pushInbox), for the tick's fallback (wakeWaiting).
	inBatch    int
	returnedAt int64
	skipped    bool
	// onPick, set by the runtime's own tests, sees every task a worker
	// takes, at the moment it is taken.
	onPick func(task[K, E])
}

func (r *runQueue[K, E]) init(max int, start func(), c *clock, inline bool) {
	r.cond.L = &r.mu
	r.max = max
	r.start = start
	r.clock = c
	r.inline = inline
}

// push appends a ready task.
func (r *runQueue[K, E]) push(t task[K, E]) {
	r.mu.Lock()
	r.ready.pushBack(t)
	r.changed()
	r.wakeOne()
	r.mu.Unlock()
}

// pushInbox appends the task of a shard whose inbox an inline engine runs.
// It wakes nobody while the workers in inline batches are at least as many
// as the tasks waiting and one of them came back for a task within the
// last tick: they take the task when their batch ends, which, for batches
// that end that often, is about when a woken worker would (a wake-up costs
// a thread woken in the kernel, and was most of what separated the engine
// from a plain worker pool on fast handlers). A batch whose handler
// blocks does not come back: once no worker came back for a tick, every
// task wakes a worker again, and the tick's fallback (wakeWaiting) wakes
// sleeping workers for the tasks queued without a wake that still wait, so
// a new key waits at most about a tick behind blocked handlers.
func (r *runQueue[K, E]) pushInbox(t task[K, E]) {
	r.mu.Lock()
	r.ready.pushBack(t)
	r.changed()
	if r.comingBack() {
		r.skipped = true
	} else {
		r.wakeOne()
	}
	r.mu.Unlock()
}

// comingBack reports whether workers in inline batches will take the
// tasks waiting: they are at least as many, one came back within the last
// tick, and a worker is awake to see the queue (not under a test's manual
// clock, whose time stands still); r.mu is held.
func (r *runQueue[K, E]) comingBack() bool {
	return r.inBatch > 0 && r.ready.len()+r.yielded.len() <= r.inBatch &&
		r.clock.manual == nil && r.clock.coarse()-r.returnedAt <= int64(tick) &&
		!r.draining
}

// leaveBatch takes out of inBatch a worker whose inline batch handed it a
// lane to run.
func (r *runQueue[K, E]) leaveBatch() {
	r.mu.Lock()
	r.inBatch--
	r.mu.Unlock()
}

// wakeWaiting is the tick's fallback for tasks queued without a wake
// (pushInbox): while such tasks wait, it wakes a sleeping worker, or starts
// one, for each, as far as there are workers to wake or start.
func (r *runQueue[K, E]) wakeWaiting() {
	if r.queued.Load() == 0 {
		return
	}
	r.mu.Lock()
	if r.skipped {
		r.skipped = false
		for n := r.ready.len() + r.yielded.len(); n > 0 && (r.sleepy > 0 || r.workers < r.max && !r.draining); n-- {
			r.wakeOne()
		}
	}
	r.mu.Unlock()
}

// pushLanes appends a ready task for each lane, waking or starting as many
// workers as useful.
func (r *runQueue[K, E]) pushLanes(ls []*lane[K, E]) {
	if len(ls) == 0 {
		return
	}
	r.mu.Lock()
	for _, l := range ls {
		r.ready.pushBack(task[K, E]{l: l})
		r.wakeOne()
	}
	r.changed()
	r.mu.Unlock()
}

// pushYielded appends a task that used its budget: it goes behind every
// task already waiting.
func (r *runQueue[K, E]) pushYielded(t task[K, E]) {
	r.mu.Lock()
	r.yielded.pushBack(t)
	r.changed()
	r.wakeOne()
	r.mu.Unlock()
}

// changed refreshes queued; r.mu is held.
func (r *runQueue[K, E]) changed() {
	r.queued.Store(int32(r.ready.len() + r.yielded.len()))
}

// wakeOne makes sure a worker will take the task just queued: it signals a
// sleeping worker, or starts one while fewer than max run; r.mu is held.
func (r *runQueue[K, E]) wakeOne() {
	switch {
	case r.sleepy > 0:
		r.sleepy--
		r.asleep.Store(int32(r.sleepy))
		r.cond.Signal()
		r.clock.wakeUp()
	case r.workers < r.max && !r.draining:
		r.workers++
		r.start()
		r.clock.wakeUp()
	}
}

// crowded reports, without the lock, whether tasks wait while no worker
// sleeps: a worker that used its budget on one key then lets them go first.
func (r *runQueue[K, E]) crowded() bool {
	return r.queued.Load() > 0 && r.asleep.Load() == 0
}

// sleepers reports whether a worker sleeps.
func (r *runQueue[K, E]) sleepers() bool { return r.asleep.Load() > 0 }

// pick takes the task to run next, if any; r.mu is held.
func (r *runQueue[K, E]) pick() (task[K, E], bool) {
	var t task[K, E]
	switch {
	case r.ready.len() > 0 && (r.yielded.len() == 0 || r.readyRun < readyFirst):
		if r.yielded.len() > 0 {
			r.readyRun++
		}
		t = r.ready.popFront()
	case r.yielded.len() > 0:
		r.readyRun = 0
		t = r.yielded.popFront()
	default:
		return t, false
	}
	r.changed()
	if r.onPick != nil {
		r.onPick(t)
	}
	return t, true
}

// pop returns the next task, sleeping while there is none; false when the
// worker must exit. Before it sleeps it calls steal, if not nil, without
// the lock; when steal found work elsewhere (lanes stolen into the
// worker's deque), pop returns the zero task and true. fromBatch says
// that the worker comes back from an inline batch (inBatch).
func (r *runQueue[K, E]) pop(steal func() bool, fromBatch bool) (task[K, E], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fromBatch {
		r.inBatch--
	}
	r.returnedAt = r.clock.coarse()
	looked := false
	for {
		if r.aborting {
			return task[K, E]{}, false
		}
		if t, ok := r.pick(); ok {
			if t.s != nil && r.inline {
				r.inBatch++
			}
			return t, true
		}
		if !looked && steal != nil {
			r.mu.Unlock()
			found := steal()
			r.mu.Lock()
			if found && !r.aborting {
				return task[K, E]{}, true
			}
			looked = true
			continue
		}
		if r.draining {
			return task[K, E]{}, false
		}
		r.sleepy++
		r.asleep.Store(int32(r.sleepy))
		if r.sleepy == r.workers {
			r.clock.sleep()
		}
		r.cond.Wait()
		looked = false
	}
}

// startThief makes sure a worker comes to steal lanes from a busy one's
// deque: it wakes a sleeping worker, or starts one while fewer than max
// run. The watchdog calls it for a worker stuck with lanes waiting behind
// it.
func (r *runQueue[K, E]) startThief() {
	r.mu.Lock()
	r.wakeOne()
	r.mu.Unlock()
}

// stop makes workers exit: after the queues empty, or at once with abort.
func (r *runQueue[K, E]) stop(abort bool) {
	r.mu.Lock()
	r.draining = true
	r.aborting = r.aborting || abort
	r.sleepy = 0
	r.asleep.Store(0)
	r.cond.Broadcast()
	r.mu.Unlock()
}

// started returns how many workers the queue started.
func (r *runQueue[K, E]) started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workers
}

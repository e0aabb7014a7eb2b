package runtime

import (
	"sync"
	"sync/atomic"
)

// task is one unit of work for a worker: a lane to run, or a shard whose
// inbox is to be dispatched into lanes.
type task[K comparable, E any] struct {
	l *lane[K, E]
	s *shard[K, E]
}

// runQueue is the FIFO of tasks that wait for a worker. Workers are started
// on demand, up to max, and sleep on the condition when there is nothing to
// run, so an idle engine costs no CPU and a busy one wakes a worker only
// when work arrives while every worker is asleep.
type runQueue[K comparable, E any] struct {
	mu     sync.Mutex
	cond   sync.Cond
	q      ring[task[K, E]]
	sleepy int // workers waiting on cond and not yet signalled
	// queued and asleep mirror q.len() and sleepy for readers without the
	// lock (written under it).
	queued, asleep atomic.Int32
	workers        int
	max            int
	start          func()
	clock          *clock
	// draining: workers exit once the queue is empty; aborting: at once.
	draining, aborting bool
}

func (r *runQueue[K, E]) init(max int, start func(), c *clock) {
	r.cond.L = &r.mu
	r.max = max
	r.start = start
	r.clock = c
}

// push appends a task.
func (r *runQueue[K, E]) push(t task[K, E]) {
	r.mu.Lock()
	r.q.pushBack(t)
	r.queued.Store(int32(r.q.len()))
	r.wakeOne()
	r.mu.Unlock()
}

// pushLanes appends a task for each lane, waking as many workers as useful.
func (r *runQueue[K, E]) pushLanes(ls []*lane[K, E]) {
	if len(ls) == 0 {
		return
	}
	r.mu.Lock()
	for _, l := range ls {
		r.q.pushBack(task[K, E]{l: l})
		r.queued.Store(int32(r.q.len()))
		r.wakeOne()
	}
	r.mu.Unlock()
}

// wakeOne makes sure a worker will take the task just queued; r.mu is held.
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

// wakeThief wakes a sleeping worker, if any, to steal lanes from a busy one.
func (r *runQueue[K, E]) wakeThief() {
	r.mu.Lock()
	if r.sleepy > 0 {
		r.sleepy--
		r.asleep.Store(int32(r.sleepy))
		r.cond.Signal()
		r.clock.wakeUp()
	}
	r.mu.Unlock()
}

// sleepers returns the number of sleeping workers.
func (r *runQueue[K, E]) sleepers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sleepy
}

// crowded reports, without the lock, whether tasks wait while no worker
// sleeps: a worker that used its budget on one lane then lets them go first.
func (r *runQueue[K, E]) crowded() bool {
	return r.queued.Load() > 0 && r.asleep.Load() == 0
}

// swapFront takes the oldest task and puts t at the front in its place, so
// that the next worker to free up takes t. With no task waiting it queues t
// and reports false.
func (r *runQueue[K, E]) swapFront(t task[K, E]) (task[K, E], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.q.len() == 0 || r.aborting {
		r.q.pushBack(t)
		r.queued.Store(int32(r.q.len()))
		r.wakeOne()
		return task[K, E]{}, false
	}
	old := r.q.popFront()
	r.q.pushFront(t)
	return old, true
}

// pop returns the next task; the zero task with more false when the worker
// must exit, or with more true when beforeSleep found work elsewhere (a
// steal). Before it sleeps it calls beforeSleep without the lock held.
func (r *runQueue[K, E]) pop(beforeSleep func() bool) (t task[K, E], more bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	flushed := false
	for {
		if r.aborting {
			return task[K, E]{}, false
		}
		if r.q.len() > 0 {
			t := r.q.popFront()
			r.queued.Store(int32(r.q.len()))
			return t, true
		}
		if !flushed {
			r.mu.Unlock()
			found := beforeSleep()
			r.mu.Lock()
			if found && !r.aborting {
				return task[K, E]{}, true
			}
			flushed = true
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
		flushed = false
	}
}

// stop makes workers exit: after the queue empties, or at once with abort.
func (r *runQueue[K, E]) stop(abort bool) {
	r.mu.Lock()
	r.draining = true
	r.aborting = r.aborting || abort
	r.sleepy = 0
	r.asleep.Store(0)
	r.cond.Broadcast()
	r.mu.Unlock()
}

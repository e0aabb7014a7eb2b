package runtime

import "sync"

// runQueue is the FIFO of lanes that have work and no worker. Workers are
// started on demand, up to max, and sleep on the condition when there is
// nothing to run, so an idle engine costs no CPU and a busy one wakes a
// worker only when a lane becomes ready and every worker is asleep.
type runQueue[K comparable, E any] struct {
	mu      sync.Mutex
	cond    sync.Cond
	q       ring[*lane[K, E]]
	sleepy  int // workers waiting on cond and not yet signalled
	workers int
	max     int
	start   func()
	// draining: workers exit once the queue is empty; aborting: at once.
	draining, aborting bool
}

func (r *runQueue[K, E]) init(max int, start func()) {
	r.cond.L = &r.mu
	r.max = max
	r.start = start
}

// push appends a lane that was just marked queued.
func (r *runQueue[K, E]) push(l *lane[K, E]) {
	r.mu.Lock()
	r.q.pushBack(l)
	switch {
	case r.sleepy > 0:
		r.sleepy--
		r.cond.Signal()
	case r.workers < r.max && !r.draining:
		r.workers++
		r.start()
	}
	r.mu.Unlock()
}

// waiting reports whether lanes wait for a worker (a hint; no lock).
func (r *runQueue[K, E]) waiting() bool {
	r.mu.Lock()
	n := r.q.len()
	r.mu.Unlock()
	return n > 0
}

// pop returns the next lane to run, or nil when the worker must exit.
func (r *runQueue[K, E]) pop() *lane[K, E] {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if r.aborting {
			return nil
		}
		if r.q.len() > 0 {
			return r.q.popFront()
		}
		if r.draining {
			return nil
		}
		r.sleepy++
		r.cond.Wait()
	}
}

// stop makes workers exit: after the queue empties, or at once with abort.
func (r *runQueue[K, E]) stop(abort bool) {
	r.mu.Lock()
	r.draining = true
	r.aborting = r.aborting || abort
	r.sleepy = 0
	r.cond.Broadcast()
	r.mu.Unlock()
}

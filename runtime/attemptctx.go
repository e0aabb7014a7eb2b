package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// An attempt's context, without a timer or a context tree per attempt.
//
// An attempt that has a deadline (Config.Timeout) or that Withdraw may
// cancel (Config.OnOutcome) gets an attemptCtx of its own, 48 bytes that
// its worker cuts from a slab of attemptSlab contexts (one allocation per
// attemptSlab attempts; a context is never reused, so one that a handler
// keeps keeps its slab). Its deadline is checked by the engine's clock,
// whose tick already runs once a millisecond while workers work
// (watchdog.go), instead of a timer armed and stopped per attempt; its Done
// channel is made only when somebody asks for it. It is not a child of the
// engine's base context: Close's abort ends the running attempts' contexts
// itself. When the attempt returns its context ends (Canceled, as a
// deferred cancel would), so a goroutine the handler left behind sees it
// done.
//
// A handler can derive from it as from any context: it implements the
// AfterFunc method that the context package uses to propagate cancellation
// to a child without a goroutine, and it holds no cancelCtx the package
// could find, so context.Cause gives its Err: DeadlineExceeded when the
// timeout passed, Canceled otherwise. The exception is an attempt that
// Withdraw cancelled with a cause (a transport whose ownership of the
// event's message ended says why: its lease was lost, say): Value then
// hands the context package a cancelled context that holds the cause, so
// context.Cause of the attempt's context, and of every context derived
// from it, returns it. That costs an allocation only when it happens.

// attemptSlab is how many attempt contexts a worker allocates at once.
const attemptSlab = 32

// attemptEnv is what the attempt contexts of one engine share.
type attemptEnv struct {
	engine any    // the value of engineKey (fromOwnHandler)
	clock  *clock // the engine's, for Deadline
}

// How an attempt's context ended (attemptCtx.ended): 0 while it runs.
const (
	endCanceled  uint32 = 1 // context.Canceled
	endDeadline  uint32 = 2 // context.DeadlineExceeded
	endCause     uint32 = 3 // the bits that say which
	endWithdrawn uint32 = 4 // with endCanceled: Withdraw ended it
)

// attemptCtx is the context of one attempt.
type attemptCtx struct {
	// Set before the attempt starts, then read only.
	env      *attemptEnv
	due      int64  // the deadline on the engine's clock; 0: none
	tag      uint64 // the event's tag and whether it is replayed, for
	replayed bool   // Withdraw to select the attempt
	// ended is 0 while the context runs, then how it ended (endCanceled or
	// endDeadline, and endWithdrawn): it changes once, from 0, so Err is
	// one atomic load.
	ended atomic.Uint32
	// waiters is made by the first Done or AfterFunc, under mu; end looks
	// at it after it set ended, and they after they made it, so that one
	// of the two always sees the other (see end).
	waiters atomic.Pointer[ctxWaiters]
	// mu guards the fields of waiters.
	mu sync.Mutex
}

// ctxWaiters is what an attempt's context keeps for those who wait for its
// end, and the cause of a withdrawal; mu of its context guards it.
type ctxWaiters struct {
	done   chan struct{} // made by the first Done, closed when it ends
	afters []*afterFunc  // run, each in a goroutine, when it ends
	// cause, when set, is a cancelled context whose cause is the one a
	// withdrawal gave. It is set before ended says endWithdrawn and never
	// changes after, so Value reads it without the lock once it saw that.
	cause context.Context
}

// afterFunc is a function registered with attemptCtx.AfterFunc.
type afterFunc struct{ f func() }

// closedChan is the Done channel of a context that ended before anybody
// asked for its channel.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// newAttemptCtx returns a new, zero attempt context from the worker's
// slab.
func (w *worker[K, E]) newAttemptCtx() *attemptCtx {
	if len(w.ctxs) == 0 {
		w.ctxs = make([]attemptCtx, attemptSlab)
	}
	c := &w.ctxs[0]
	w.ctxs = w.ctxs[1:]
	return c
}

// Deadline implements context.Context.
func (c *attemptCtx) Deadline() (time.Time, bool) {
	if c.due == 0 {
		return time.Time{}, false
	}
	return c.env.clock.wall(c.due), true
}

// waitersLocked returns c's waiters, made if need be; c.mu is held.
func (c *attemptCtx) waitersLocked() *ctxWaiters {
	w := c.waiters.Load()
	if w == nil {
		w = new(ctxWaiters)
		c.waiters.Store(w)
	}
	return w
}

// Done implements context.Context.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waitersLocked()
	if w.done == nil {
		if c.ended.Load() != 0 {
			return closedChan
		}
		w.done = make(chan struct{})
	}
	return w.done
}

// Err implements context.Context.
func (c *attemptCtx) Err() error {
	switch c.ended.Load() & endCause {
	case endCanceled:
		return context.Canceled
	case endDeadline:
		return context.DeadlineExceeded
	}
	return nil
}

// Value implements context.Context: the context carries its engine, and
// nothing else, but for the cause of a withdrawal (see the top of the
// file): the context package asks for it with a key of its own, which the
// cancelled context that holds the cause answers.
func (c *attemptCtx) Value(key any) any {
	if key == (engineKey{}) {
		return c.env.engine
	}
	if c.ended.Load()&endWithdrawn != 0 {
		if w := c.waiters.Load(); w != nil && w.cause != nil {
			return w.cause.Value(key)
		}
	}
	return nil
}

// AfterFunc arranges for f to run in its own goroutine once c ends, as
// context.AfterFunc does; the context package calls it to cancel a child
// context without starting a goroutine per child.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waitersLocked()
	if c.ended.Load() != 0 {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	w.afters = append(w.afters, a)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, b := range w.afters {
			if b == a {
				w.afters = append(w.afters[:i], w.afters[i+1:]...)
				return true
			}
		}
		return false
	}
}

// end ends c with how (endCanceled or endDeadline, with endWithdrawn for
// an end by Withdraw), unless it ended already, and reports whether this
// call ended it. Done and AfterFunc make c's waiters before they look at
// ended, and end sets ended before it looks for waiters (sequentially
// consistent atomics), so a waiter that end does not see has seen ended:
// an attempt that nobody waits for ends with one compare-and-swap.
func (c *attemptCtx) end(how uint32) bool {
	if !c.ended.CompareAndSwap(0, how) {
		return false
	}
	if c.waiters.Load() == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.waiters.Load()
	if w.done != nil {
		close(w.done)
	}
	for _, a := range w.afters {
		go a.f()
	}
	w.afters = nil
	return true
}

// wasWithdrawn reports whether Withdraw ended c.
func (c *attemptCtx) wasWithdrawn() bool {
	return c.ended.Load()&endWithdrawn != 0
}

// timedOut reports whether c ended at its deadline.
func (c *attemptCtx) timedOut() bool {
	return c.ended.Load()&endCause == endDeadline
}

// runningAttempt is the context of a worker's attempt in progress, for the
// watchdog (its deadline) and for Withdraw and Close (to end it). The
// worker stores it before the attempt starts and clears it after; the
// others load it.
type runningAttempt struct {
	ctx atomic.Pointer[attemptCtx]
}

func (r *runningAttempt) begin(c *attemptCtx) { r.ctx.Store(c) }

func (r *runningAttempt) finish() { r.ctx.Store(nil) }

// expire ends the running attempt's context with DeadlineExceeded if its
// deadline is at or before now (engine clock) and reports whether it did.
func (r *runningAttempt) expire(now int64) bool {
	c := r.ctx.Load()
	return c != nil && c.due != 0 && c.due <= now && c.end(endDeadline)
}

// cancelIf ends the running attempt's context if sel selects its event,
// marking it withdrawn, with cause as its cause when it is not nil.
func (r *runningAttempt) cancelIf(sel func(tag uint64, replayed bool) bool, cause error) {
	if c := r.ctx.Load(); c != nil && sel(c.tag, c.replayed) {
		if cause != nil {
			c.setCause(cause)
		}
		c.end(endCanceled | endWithdrawn)
	}
}

// setCause keeps cause for a withdrawal about to end c, unless c ended
// already or holds a cause: the first withdrawal's stays. It is stored
// before end sets ended, so whoever sees endWithdrawn sees it.
func (c *attemptCtx) setCause(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended.Load() != 0 {
		return
	}
	w := c.waitersLocked()
	if w.cause == nil {
		cctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		w.cause = cctx
	}
}

// cancel ends the running attempt's context (Close gave up).
func (r *runningAttempt) cancel() {
	if c := r.ctx.Load(); c != nil {
		c.end(endCanceled)
	}
}

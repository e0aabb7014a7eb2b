package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
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
// timeout passed, Canceled otherwise. The exception is an attempt ended
// with a cause: by Withdraw (a transport whose ownership of the event's
// message ended says why: its lease was lost, say) or by an operator
// (CancelAttempt, ParkNow). Value then hands the context package a
// cancelled context that holds the cause, so context.Cause of the
// attempt's context, and of every context derived from it, returns it.
// That costs an allocation only when it happens.
//
// An attempt's context also tells who is done with the attempt first (see
// returned and take): its worker, once the handler returned, or an
// operator's ParkNow, which parks the attempt's event while the handler
// runs and has the worker ignore its result (operator.go). Its start, its
// number and its event say what runs, for an operator to see.

// attemptSlab is how many attempt contexts a worker allocates at once.
const attemptSlab = 32

// attemptEnv is what the attempt contexts of one engine share.
type attemptEnv struct {
	engine  any    // the value of engineKey (fromOwnHandler)
	clock   *clock // the engine's, for Deadline
	timeout int64  // Config.Timeout; 0: none
}

// How an attempt's context ended (attemptCtx.ended): no endCause bit while
// it runs; and who is done with the attempt first.
const (
	endCanceled  uint32 = 1 // context.Canceled
	endDeadline  uint32 = 2 // context.DeadlineExceeded
	endCause     uint32 = 3 // the bits that say which
	endWithdrawn uint32 = 4 // with endCanceled: Withdraw ended it
	endOperator  uint32 = 8 // with endCanceled: an operator did, with a cause
	// attemptReturned: the worker is done with the attempt (its handler
	// returned, or never started); attemptTaken: ParkNow took it first,
	// and the worker ignores its result. The first of the two set wins.
	attemptReturned uint32 = 16
	attemptTaken    uint32 = 32
)

// attemptCtx is the context of one attempt.
type attemptCtx struct {
	// Set before the attempt starts, then read only.
	env      *attemptEnv
	start    int64  // on the engine's coarse clock; the deadline is start + env.timeout
	tag      uint64 // the event's tag and whether it is replayed, for
	replayed bool   // Withdraw to select the attempt
	attempt  uint16 // its number, from 1 (at most 65535), for an operator
	// ended has no endCause bit while the context runs, then says how it
	// ended (endCanceled or endDeadline, and endWithdrawn or endOperator):
	// its endCause bits are set once, so Err is one atomic load. The
	// attemptReturned and attemptTaken bits are set on their own (see
	// returned and take).
	ended atomic.Uint32
	// waiters is made by the first Done or AfterFunc (or an operator's
	// cancel); end looks at it after it set ended, and they after they
	// made it, so that one of the two always sees the other (see end).
	waiters atomic.Pointer[ctxWaiters]
	// item is the attempt's *item[E] (of a batch, its first), for an
	// operator to find what runs (operator.go): only its address is
	// compared, and its event read under its shard's lock.
	item unsafe.Pointer
}

// ctxWaiters is what an attempt's context keeps for those who wait for its
// end. It holds the mutex, so that the contexts nobody waits for stay
// small.
type ctxWaiters struct {
	// mu guards done and afters.
	mu     sync.Mutex
	done   chan struct{} // made by the first Done, closed when it ends
	afters []*afterFunc  // run, each in a goroutine, when it ends
	// cause, set before a withdrawal or an operator ends the context with
	// a cause, is a context cancelled with it, which Value answers for.
	cause atomic.Pointer[context.Context]
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
	if c.env.timeout == 0 {
		return time.Time{}, false
	}
	return c.env.clock.wall(c.start + c.env.timeout), true
}

// waitersMade returns c's waiters, made if need be.
func (c *attemptCtx) waitersMade() *ctxWaiters {
	if w := c.waiters.Load(); w != nil {
		return w
	}
	w := new(ctxWaiters)
	if c.waiters.CompareAndSwap(nil, w) {
		return w
	}
	return c.waiters.Load()
}

// Done implements context.Context.
func (c *attemptCtx) Done() <-chan struct{} {
	w := c.waitersMade()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done == nil {
		if c.ended.Load()&endCause != 0 {
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
// nothing else, but for the cause it ended with (see the top of the file):
// the context package asks for it with a key of its own, which the
// cancelled context that holds the cause answers.
func (c *attemptCtx) Value(key any) any {
	if key == (engineKey{}) {
		return c.env.engine
	}
	if w := c.waiters.Load(); w != nil {
		if cause := w.cause.Load(); cause != nil {
			return (*cause).Value(key)
		}
	}
	return nil
}

// AfterFunc arranges for f to run in its own goroutine once c ends, as
// context.AfterFunc does; the context package calls it to cancel a child
// context without starting a goroutine per child.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	w := c.waitersMade()
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.ended.Load()&endCause != 0 {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	w.afters = append(w.afters, a)
	return func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
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
	for old := c.ended.Load(); old&endCause == 0; old = c.ended.Load() {
		if c.ended.CompareAndSwap(old, old|how) {
			c.wake()
			return true
		}
	}
	return false
}

// returned tells that the worker is done with the attempt, and ends its
// context (Canceled, unless it ended already), as a deferred cancel would.
// It reports whether ParkNow took the attempt first: then the attempt's
// events are parked already, and its result must be ignored. An attempt
// that nobody ended, waited for or took costs one compare-and-swap.
func (c *attemptCtx) returned() (taken bool) {
	if c.ended.CompareAndSwap(0, endCanceled|attemptReturned) {
		c.wake()
		return false
	}
	old := c.ended.Or(attemptReturned)
	c.end(endCanceled)
	return old&attemptTaken != 0
}

// take claims the attempt for ParkNow, unless its worker is done with it
// (returned), and reports whether it did.
func (c *attemptCtx) take() bool {
	return c.ended.Or(attemptTaken)&attemptReturned == 0
}

// endWith ends c with how (endCanceled with endWithdrawn or endOperator)
// and cause, and reports whether it did (false: it ended already, or
// another cause came first). The cause is stored before ended says how, so
// whoever sees c ended sees it.
func (c *attemptCtx) endWith(cause error, how uint32) bool {
	if c.ended.Load()&endCause != 0 {
		return false
	}
	cc, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	w := c.waitersMade()
	if !w.cause.CompareAndSwap(nil, &cc) {
		return false // another operator's cause came first
	}
	if !c.end(how) {
		w.cause.CompareAndSwap(&cc, nil) // it ended otherwise meanwhile
		return false
	}
	return true
}

// wake closes c's Done channel and starts its AfterFunc functions, if
// anybody asked for them; c has just ended.
func (c *attemptCtx) wake() {
	w := c.waiters.Load()
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done != nil {
		close(w.done)
	}
	for _, a := range w.afters {
		go a.f()
	}
	w.afters = nil
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
// watchdog (its deadline), for Withdraw and Close (to end it) and for an
// operator (to find what runs). The worker stores it before the attempt
// starts and leaves it there after: a context whose attempt returned
// (attemptReturned, set when its handler returned) no longer runs, and
// current skips it. Its end bits are set by then, so ending it again would
// do nothing anyway. Clearing it after each attempt cost an atomic store,
// a fifth of what an attempt context costs.
type runningAttempt struct {
	ctx atomic.Pointer[attemptCtx]
}

func (r *runningAttempt) begin(c *attemptCtx) { r.ctx.Store(c) }

// current returns the context of the attempt in progress, nil when none
// runs.
func (r *runningAttempt) current() *attemptCtx {
	if c := r.ctx.Load(); c != nil && c.ended.Load()&attemptReturned == 0 {
		return c
	}
	return nil
}

// expire ends the running attempt's context with DeadlineExceeded if its
// deadline is at or before now (engine clock) and reports whether it did.
func (r *runningAttempt) expire(now int64) bool {
	c := r.current()
	return c != nil && c.env.timeout != 0 && c.start+c.env.timeout <= now && c.end(endDeadline)
}

// cancelIf ends the running attempt's context if sel selects its event,
// marking it withdrawn, with cause as its cause when it is not nil.
func (r *runningAttempt) cancelIf(sel func(tag uint64, replayed bool) bool, cause error) {
	if c := r.current(); c != nil && sel(c.tag, c.replayed) {
		if cause != nil {
			c.endWith(cause, endCanceled|endWithdrawn)
			return
		}
		c.end(endCanceled | endWithdrawn)
	}
}

// cancel ends the running attempt's context (Close gave up).
func (r *runningAttempt) cancel() {
	if c := r.current(); c != nil {
		c.end(endCanceled)
	}
}

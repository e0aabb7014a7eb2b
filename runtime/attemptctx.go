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
// cancel (Config.OnOutcome) gets an attemptCtx of its own: one small
// allocation. Its deadline is checked by the engine's clock, whose tick
// already runs once a millisecond while workers work (watchdog.go), instead
// of a timer armed and stopped per attempt; its Done channel is made only
// when somebody asks for it. It is not a child of the engine's base
// context: Close's abort ends the running attempts' contexts itself. When
// the attempt returns its context ends (Canceled, as a deferred cancel
// would), so a goroutine the handler left behind sees it done.
//
// A handler can derive from it as from any context: it implements the
// AfterFunc method that the context package uses to propagate cancellation
// to a child without a goroutine, and it holds no cancelCtx the package
// could find, so context.Cause gives its Err: DeadlineExceeded when the
// timeout passed, Canceled otherwise.

// attemptCtx is the context of one attempt.
type attemptCtx struct {
	// Set before the attempt starts, then read only.
	engine   any    // the engine, the value of engineKey (fromOwnHandler)
	clock    *clock // the engine's, for Deadline
	due      int64  // the deadline on the engine's clock; 0: none
	tag      uint64 // the event's tag and whether it is replayed, for
	replayed bool   // Withdraw to select the attempt

	// mu guards the fields below.
	mu        sync.Mutex
	err       error         // why the context ended; nil while it runs
	done      chan struct{} // made by the first Done, closed when it ends
	afters    []*afterFunc  // run, each in a goroutine, when it ends
	withdrawn bool          // ended by Withdraw
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

// Deadline implements context.Context.
func (c *attemptCtx) Deadline() (time.Time, bool) {
	if c.due == 0 {
		return time.Time{}, false
	}
	return c.clock.wall(c.due), true
}

// Done implements context.Context.
func (c *attemptCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
	}
	return c.done
}

// Err implements context.Context.
func (c *attemptCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value implements context.Context: the context carries its engine, and
// nothing else.
func (c *attemptCtx) Value(key any) any {
	if key == (engineKey{}) {
		return c.engine
	}
	return nil
}

// AfterFunc arranges for f to run in its own goroutine once c ends, as
// context.AfterFunc does; the context package calls it to cancel a child
// context without starting a goroutine per child.
func (c *attemptCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	c.afters = append(c.afters, a)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, b := range c.afters {
			if b == a {
				c.afters = append(c.afters[:i], c.afters[i+1:]...)
				return true
			}
		}
		return false
	}
}

// end ends c with err, unless it ended already; withdrawn marks an end by
// Withdraw. It reports whether this call ended it.
func (c *attemptCtx) end(err error, withdrawn bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.err, c.withdrawn = err, withdrawn
	if c.done != nil {
		close(c.done)
	}
	for _, a := range c.afters {
		go a.f()
	}
	c.afters = nil
	return true
}

// wasWithdrawn reports whether Withdraw ended c.
func (c *attemptCtx) wasWithdrawn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.withdrawn
}

// runningAttempt is the context of a worker's attempt in progress, for the
// watchdog (its deadline) and for Withdraw and Close (to end it). The
// worker stores it before the attempt starts and clears it after; the
// others load it.
type runningAttempt struct {
	ctx atomic.Pointer[attemptCtx]
	due atomic.Int64 // ctx's due, 0 when none runs: the watchdog's cheap look
}

func (r *runningAttempt) begin(c *attemptCtx) {
	r.ctx.Store(c)
	r.due.Store(c.due)
}

func (r *runningAttempt) finish() {
	r.due.Store(0)
	r.ctx.Store(nil)
}

// expire ends the running attempt's context with DeadlineExceeded if its
// deadline is at or before now (engine clock) and reports whether it did.
func (r *runningAttempt) expire(now int64) bool {
	if due := r.due.Load(); due == 0 || due > now {
		return false
	}
	c := r.ctx.Load()
	return c != nil && c.due != 0 && c.due <= now && c.end(context.DeadlineExceeded, false)
}

// cancelIf ends the running attempt's context if sel selects its event,
// marking it withdrawn.
func (r *runningAttempt) cancelIf(sel func(tag uint64, replayed bool) bool) {
	if c := r.ctx.Load(); c != nil && sel(c.tag, c.replayed) {
		c.end(context.Canceled, true)
	}
}

// cancel ends the running attempt's context (Close gave up).
func (r *runningAttempt) cancel() {
	if c := r.ctx.Load(); c != nil {
		c.end(context.Canceled, false)
	}
}

package runtime

import (
	"context"
	"errors"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"
)

// attempt runs the handler once for it.
func (w *worker[K, E]) attempt(key K, it *item[E], ns notStarted) error {
	return w.call(key, it, ns, false)
}

// errWithdrawing is what call returns for an attempt that a withdrawal
// stopped: it did not start, or Withdraw cancelled it. The event goes back
// unjudged (no retry, no park), for the withdrawal to take.
var errWithdrawing = errors.New("ordergen: withdrawing")

// notStarted tells call whether a withdrawal came for the event between
// the moment the worker took it and the start of its attempt: the lane's
// interrupt flag, or an inline batch that was spilled from the event's
// position.
type notStarted struct {
	interrupt *atomic.Bool
	pos       *atomic.Int64
	at        int64
}

func (n notStarted) now() bool {
	return (n.interrupt != nil && n.interrupt.Load()) || (n.pos != nil && n.pos.Load() != n.at)
}

// call runs one attempt of it (of w.batch, with batch set, whose first
// event it is): with its context (see attemptctx.go), and with a panic
// turned into a PanicError.
func (w *worker[K, E]) call(key K, it *item[E], ns notStarted, batch bool) (err error) {
	e := w.e
	it.attempts++
	if e.cfg.Timeout <= 0 && e.cfg.OnOutcome == nil {
		// Nothing ends this attempt but Close giving up, which cancels the
		// base context itself.
		return w.run(e.base, key, it, batch, nil)
	}
	c := w.newAttemptCtx()
	c.env, c.tag, c.replayed = &e.env, it.tag, it.replayed
	c.attempt, c.item = uint16(min(it.attempts, 1<<16-1)), unsafe.Pointer(it)
	// The coarse time, as the tick that checks the deadline keeps it:
	// reading the precise clock would cost more than the rest.
	c.start = e.clock.coarse()
	w.running.begin(c)
	defer func() {
		if c.returned() {
			// ParkNow took the attempt while its handler ran: its events
			// are parked, and its result is nobody's (operator.go).
			err = errWithdrawing
		}
	}()
	// Withdraw marks the lane (or spills the batch) before it cancels the
	// running attempts, and Close sets aborted before it ends them: an
	// attempt either is seen by them or sees their mark here.
	if e.cfg.OnOutcome != nil && ns.now() {
		it.attempts--
		return errWithdrawing
	}
	if e.aborted.Load() {
		c.end(endCanceled)
	}
	err = w.run(c, key, it, batch, c)
	if err != nil {
		if c.ended.Load()&endOperator != 0 {
			err = operatorCause(c, err) // a park's reason then says who stopped it
		}
		switch {
		case c.wasWithdrawn() && !isVerdicts(err):
			// A batch's Verdicts stand: the events it handled were applied.
			return errWithdrawing
		case e.cfg.Timeout > 0 && c.timedOut() && !e.aborted.Load():
			w.logTimeout(key, it)
		}
	}
	return err
}

// run calls the handler with ctx and it (the batch handler with w.batch,
// with batch set), recording its duration (sampled) when the engine has
// metrics; c, when not nil, is ctx's attemptCtx, which says whether the
// attempt timed out.
func (w *worker[K, E]) run(ctx context.Context, key K, it *item[E], batch bool, c *attemptCtx) (err error) {
	if tr := w.e.cfg.Tracer; tr != nil { // before the recover below, to see its error
		a := w.e.attemptOf(key, it)
		ctx = tr.StartAttempt(ctx, a)
		defer func() { tr.EndAttempt(ctx, a, err) }()
	}
	if w.e.metrics != nil && w.timing.sample() {
		start := time.Now()
		defer func() {
			w.recordAttempt(time.Since(start), err, c != nil && c.timedOut())
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	if batch {
		return w.e.batch(ctx, key, w.batch)
	}
	return w.e.handle(ctx, key, it.ev)
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

package runtime

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

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
		// Withdraw marks the lane (or spills the batch) before it cancels
		// the running attempts: an attempt it could not see yet does not
		// start, and one it cancelled goes back to be withdrawn.
		if ns.now() {
			it.attempts--
			return errWithdrawing
		}
		defer func() {
			if err != nil && w.running.wasCancelled() {
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
	// mu guards every field: the worker writes them, Withdraw reads them
	// and cancels.
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

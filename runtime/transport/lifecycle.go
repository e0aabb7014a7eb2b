package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// How a consumer runs and stops, the same on every broker: Run once; Close
// from any goroutine stops it cleanly (the drain of the running handlers
// bounded by Close's context and the transport's drain timeout, then the
// calls to the broker that settle what the drain left bounded by the same
// again); the end of Run's context stops it at once, as a crash. A broker
// that stopped answering never holds a stop longer than that.

// ErrRunning is returned by a consumer's Run when it already ran.
var ErrRunning = errors.New("ordergen: consumer already ran")

// Lifecycle is a consumer's Run and Close: Run may be called once, Close
// from any goroutine, before, during or after Run. Create it with
// NewLifecycle.
type Lifecycle struct {
	onClose  func()
	started  atomic.Bool
	once     sync.Once
	closing  chan struct{}
	closeCtx atomic.Pointer[context.Context]
	done     chan struct{}
	err      error // Run's, set before done closes
}

// NewLifecycle returns a lifecycle whose Close calls onClose (nil: nothing)
// once, after Closing is closed: to wake a receiver that does not watch
// Closing (a poll under way).
func NewLifecycle(onClose func()) *Lifecycle {
	return &Lifecycle{onClose: onClose, closing: make(chan struct{}), done: make(chan struct{})}
}

// Run runs run, the consumer's Run, once and returns its error; a second
// call returns ErrRunning at once.
func (l *Lifecycle) Run(run func() error) error {
	if !l.started.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer close(l.done)
	l.err = run()
	return l.err
}

// Close asks Run to stop cleanly, then waits until Run returned (and
// returns its error) or ctx ended (ctx's error). Close before Run makes Run
// stop at once. CloseContext returns ctx from then on.
func (l *Lifecycle) Close(ctx context.Context) error {
	l.once.Do(func() {
		l.closeCtx.Store(&ctx)
		close(l.closing)
		if l.onClose != nil {
			l.onClose()
		}
	})
	if !l.started.Load() {
		return nil
	}
	select {
	case <-l.done:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Closing is closed once Close was called.
func (l *Lifecycle) Closing() <-chan struct{} { return l.closing }

// Closed reports whether Close was called.
func (l *Lifecycle) Closed() bool { return IsClosed(l.closing) }

// CloseContext returns Close's context, or nil before Close.
func (l *Lifecycle) CloseContext() context.Context {
	if p := l.closeCtx.Load(); p != nil {
		return *p
	}
	return nil
}

// Sleep waits d, or until ctx ends or Close is called (it then returns
// false).
func (l *Lifecycle) Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-l.closing:
		return false
	}
}

// Check runs a consumer's first call to its broker (the check that its
// queue or subscription exists and orders): check is called until it
// returns nil, or an error that transient does not call a network's (the
// broker's own answer: Check returns it), or until ctx ends or closing is
// closed (Close: Check returns stopped). A broker that cannot be reached
// yet is tried again after a growing pause, with a warning, as the
// consumer's receiving would; each call of check gets a context that Close
// ends.
func Check(ctx context.Context, closing <-chan struct{}, log *slog.Logger, what string, transient func(error) bool, check func(context.Context) error) (stopped bool, err error) {
	pause := 100 * time.Millisecond
	for {
		cctx, cancel := UntilClosed(ctx, closing)
		err := check(cctx)
		cancel()
		switch {
		case ctx.Err() != nil || IsClosed(closing):
			return true, nil
		case err == nil || !transient(err):
			return false, err
		}
		log.Warn("ordergen: cannot reach the broker to check "+what+"; trying again", "error", err, "retry_in", pause)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-closing:
		}
		t.Stop()
		pause = min(2*pause, 5*time.Second)
	}
}

// ShutdownContext returns the context in which a consumer of system that
// stops ends its ownerships: done already when killed (Run's context
// ended: the running handlers are cancelled at once), otherwise closeCtx
// (Close's; Background when nil) bounded by drain. Its cause (StopCause)
// tells the handlers it cancels why, unless closeCtx ends first with a
// cause of its own.
func ShutdownContext(system string, killed bool, closeCtx context.Context, drain time.Duration) (context.Context, context.CancelFunc) {
	if killed {
		return Stopped(system, errors.New("Run's context ended")), func() {}
	}
	if closeCtx == nil {
		closeCtx = context.Background()
	}
	return context.WithTimeoutCause(closeCtx, drain,
		StopCause(system, fmt.Errorf("Close was called and the drain timeout (%v) passed", drain)))
}

// GiveUpAfter calls giveUp when closeCtx (Close's; Background when nil)
// ends or drain passes from now, whichever is first: how long a stopping
// consumer waits for the broker once the drain ended. The function it
// returns releases it.
func GiveUpAfter(closeCtx context.Context, drain time.Duration, giveUp func()) (release func()) {
	if closeCtx == nil {
		closeCtx = context.Background()
	}
	ctx, cancel := context.WithTimeout(closeCtx, drain)
	stop := context.AfterFunc(ctx, giveUp)
	return func() {
		stop()
		cancel()
	}
}

// StopCause is the cause (context.Cause) that the running handlers of a
// consumer of system that stops see when they are cancelled: why, as an
// error wrapping ErrOwnershipEnded.
func StopCause(system string, why error) error {
	return fmt.Errorf("%w: %s: the consumer stopped: %w", ErrOwnershipEnded, system, why)
}

// Stopped returns a context that is done already, with StopCause(system,
// why) as its cause: the context of an End for a consumer that stops as a
// crash would.
func Stopped(system string, why error) context.Context {
	return Ended(StopCause(system, why))
}

// Ended returns a context that is done already, with cause as its cause:
// the context of an End that must not wait for the running handlers (a
// lost partition, a lost channel), whose cause they see.
func Ended(cause error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	return ctx
}

// UntilClosed returns a context that ends with ctx or when closing is
// closed (a consumer's Close), for a call to the broker that Close must
// end; call cancel once done with it.
func UntilClosed(ctx context.Context, closing <-chan struct{}) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-closing:
			cancel()
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// IsClosed reports whether ch is closed.
func IsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

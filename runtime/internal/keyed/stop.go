package keyed

import (
	"context"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// How a consumer on the core stops. Close bounds the drain of the running
// handlers by its context and the transport's drain timeout, then the
// calls to the broker that settle what the drain left (deletes,
// acknowledgements) by the same again; the end of Run's context stops it
// at once, as a crash. A broker that stopped answering never holds a stop
// longer than that.

// ShutdownContext returns the context of Core.Shutdown when a consumer of
// system stops: done already when killed (Run's context ended: the running
// handlers are cancelled at once), otherwise closeCtx (Close's; Background
// when nil) bounded by drain. Its cause (StopCause) tells the handlers it
// cancels why, unless closeCtx ends first with a cause of its own.
func ShutdownContext(system string, killed bool, closeCtx context.Context, drain time.Duration) (context.Context, context.CancelFunc) {
	if killed {
		return Stopped(system, fmt.Errorf("Run's context ended")), func() {}
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
// error wrapping transport.ErrOwnershipEnded.
func StopCause(system string, why error) error {
	return fmt.Errorf("%w: %s: the consumer stopped: %w", transport.ErrOwnershipEnded, system, why)
}

// Stopped returns a context that is done already, with StopCause(system,
// why) as its cause: Shutdown's context for a consumer that stops as a
// crash would.
func Stopped(system string, why error) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(StopCause(system, why))
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

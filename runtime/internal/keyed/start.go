package keyed

import (
	"context"
	"log/slog"
	"time"
)

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

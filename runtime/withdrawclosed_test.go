package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// A Withdraw after a Close whose context was already done returns at once:
// Close gave up on the running event and stopped every worker, so nothing
// is left that could serve a withdrawal. (It used to register a withdrawal
// with the lane left running and wait for it until its own context ended.)
func TestWithdrawAfterAbortedCloseReturnsAtOnce(t *testing.T) {
	var log tagLog
	started := make(chan struct{})
	e, err := runtime.New(func(ctx context.Context, _ string, _ ev) error {
		close(started)
		<-ctx.Done() // runs until Close gives up on it
		return ctx.Err()
	}, runtime.Config[string, ev]{OnOutcome: log.on, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.EngineForTransport(e).SubmitTagged(context.Background(), "k", ev{Seq: 1}, 1); err != nil {
		t.Fatal(err)
	}
	if err := runtime.EngineForTransport(e).SubmitTagged(context.Background(), "k", ev{Seq: 2}, 3); err != nil {
		t.Fatal(err)
	}
	<-started
	done, cancel := context.WithCancel(context.Background())
	cancel()
	var ce *runtime.CloseError
	if err := e.Close(done); !errors.As(err, &ce) {
		t.Fatalf("Close with a done context returned %v, want a *CloseError", err)
	}
	// With the bug, this waited for the whole minute and returned
	// context.DeadlineExceeded.
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	if _, err := runtime.EngineForTransport(e).Withdraw(ctx, func(uint64) bool { return true }); err != nil {
		t.Fatalf("Withdraw after Close returned %v, want nil at once", err)
	}
}

package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// A handler that blocks holds up only its own key: the events that share
// its inline batch (or its shard) are moved to other workers by the
// watchdog, and all of them finish while it still blocks.
func TestBlockingHandlerDoesNotHoldItsBatch(t *testing.T) {
	release := make(chan struct{})
	blocked := make(chan struct{})
	var others atomic.Int64
	allDone := make(chan struct{})
	const n = 2000
	h := func(ctx context.Context, key string, x ev) error {
		if key == "slow" {
			close(blocked)
			select {
			case <-release:
			case <-ctx.Done(): // lets the test's cleanup stop it if it fails
			}
			return nil
		}
		if others.Add(1) == n {
			close(allDone)
		}
		return nil
	}
	e := mustNew(t, h, runtime.Config[string, ev]{MaxActive: 4})
	ctx := context.Background()
	if err := e.Submit(ctx, "slow", ev{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := e.Submit(ctx, fmt.Sprintf("key-%d", i), ev{}); err != nil {
			t.Fatal(err)
		}
	}
	<-blocked
	// A liveness bound, not a speed one: without the watchdog the events
	// batched behind "slow" would wait for it forever.
	select {
	case <-allDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d events finished while one handler blocked", others.Load(), n)
	}
	close(release)
	flush(t, e)
	checkInvariant(t, e.Stats())
}

package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"
)

// A new key's inbox task runs while every awake worker is blocked in a
// handler. The run queue does not wake a worker for an inbox's task while
// the workers in inline batches will take it when their batch ends
// (pushInbox); a batch whose handler blocks never ends, so the task must
// not be left to it: the tick's fallback wakes or starts a worker for it.
// Without the fallback (and the rule that stops skipping once no worker
// came back for a tick) the new key waits until the blocked handler
// returns, which here is only after the new key ran: the test then fails.
// The wait below only detects that hang; it times nothing.
func TestNewKeyRunsWhileAwakeWorkersAreBlocked(t *testing.T) {
	for _, asleep := range []bool{false, true} {
		t.Run(fmt.Sprintf("sleeping-workers=%v", asleep), func(t *testing.T) {
			newKeyRunsBesideBlockedWorker(t, asleep)
		})
	}
}

func newKeyRunsBesideBlockedWorker(t *testing.T, asleep bool) {
	started := make(chan string, 16)
	release := make(chan struct{})
	h := func(_ context.Context, key string, _ int) error {
		started <- key
		if key == "blocked" {
			<-release
		}
		return nil
	}
	e, err := New(h, Config[string, int]{Name: "wake", MaxActive: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	newKey := "new-0"
	for i := 1; e.shardFor(newKey) == e.shardFor("blocked"); i++ {
		newKey = fmt.Sprintf("new-%d", i)
	}
	if asleep {
		// Both workers start, then sleep: two keys of different shards
		// whose handlers run at once.
		hold := make(chan struct{})
		holding := true
		defer func() {
			if holding { // the test failed: let the workers go
				close(hold)
			}
		}()
		h2 := make(chan string, 2)
		e.handle = func(_ context.Context, key string, _ int) error {
			h2 <- key
			<-hold
			return nil
		}
		if err := e.Submit(ctx, "blocked", 0); err != nil {
			t.Fatal(err)
		}
		<-h2
		if err := e.Submit(ctx, newKey, 0); err != nil {
			t.Fatal(err)
		}
		waitFor(t, h2, "the second worker to start")
		close(hold)
		holding = false
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		e.handle = h
		if n := e.rq.started(); n != 2 {
			t.Fatalf("%d workers started, want 2", n)
		}
	}
	defer close(release)
	if err := e.Submit(ctx, "blocked", 1); err != nil {
		t.Fatal(err)
	}
	if k := waitFor(t, started, "the blocking handler to start"); k != "blocked" {
		t.Fatalf("handler of %q ran first", k)
	}
	if err := e.Submit(ctx, newKey, 1); err != nil {
		t.Fatal(err)
	}
	if k := waitFor(t, started, "the new key to run beside the blocked handler"); k != newKey {
		t.Fatalf("handler of %q ran, want %q", k, newKey)
	}
}

// waitFor returns what ch gives, failing the test if nothing comes for
// long: only a hang gets there.
func waitFor(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case k := <-ch:
		return k
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
		return ""
	}
}

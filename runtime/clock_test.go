package runtime_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// The engine's own time drives its watchdog and its timers: with a test
// clock, a stuck inline batch is shared, a retry runs and a held event
// parks its key exactly when the test moves the clock, and never before.

// slowScenario is an engine on a test clock whose key "slow" blocks in its
// handler until release is closed, with five keys of its shard submitted
// behind its running batch; allDone is closed once those are handled.
type slowScenario struct {
	e       *runtime.Engine[string, ev]
	release chan struct{}
	allDone chan struct{}
	others  *atomic.Int64
}

func blockedBehindSlow(t *testing.T, clk *runtime.TestClock) slowScenario {
	t.Helper()
	started := make(chan struct{})
	sc := slowScenario{release: make(chan struct{}), allDone: make(chan struct{}), others: new(atomic.Int64)}
	const n = 5
	h := func(ctx context.Context, key string, _ ev) error {
		if key == "slow" {
			close(started)
			select {
			case <-sc.release:
			case <-ctx.Done():
			}
			return nil
		}
		if sc.others.Add(1) == n {
			close(sc.allDone)
		}
		return nil
	}
	cfg := runtime.Config[string, ev]{MaxActive: 2}
	runtime.UseTestClock(&cfg, clk)
	sc.e = mustNew(t, h, cfg)
	ctx := context.Background()
	if err := sc.e.Submit(ctx, "slow", ev{}); err != nil {
		t.Fatal(err)
	}
	<-started
	for _, k := range runtime.KeysInShardOf(sc.e, "slow", keyRange("k", 2000))[:n] {
		if err := sc.e.Submit(ctx, k, ev{}); err != nil {
			t.Fatal(err)
		}
	}
	return sc
}

func TestWatchdogOnTheTestClock(t *testing.T) {
	clk := new(runtime.TestClock)
	sc := blockedBehindSlow(t, clk)
	// Two ticks without progress: the watchdog moves them to lanes that
	// another worker runs while the slow handler still blocks.
	clk.Advance(2 * time.Millisecond)
	mustHappen(t, sc.allDone, "the events behind a blocked inline event handled by another worker")
	close(sc.release)
	flush(t, sc.e)
	checkInvariant(t, sc.e.Stats())
}

// While goroutines wait for a processor, an inline batch without progress
// may only wait for its worker's turn on a CPU: the watchdog spills it only
// after ContendedTicks ticks without progress, and then the events behind
// a blocked handler still run.
func TestWatchdogWaitsUnderContention(t *testing.T) {
	clk := new(runtime.TestClock)
	clk.Contend(true)
	sc := blockedBehindSlow(t, clk)
	// The first tick records the batch's position; each later one finds
	// it there.
	clk.Advance(runtime.ContendedTicks * time.Millisecond)
	if !runtime.HasBatch(sc.e, "slow") || sc.others.Load() != 0 {
		t.Fatalf("spilled after %d ticks under contention: batch %v, %d others handled", runtime.ContendedTicks, runtime.HasBatch(sc.e, "slow"), sc.others.Load())
	}
	clk.Advance(time.Millisecond)
	if runtime.HasBatch(sc.e, "slow") {
		t.Fatal("not spilled after ContendedTicks ticks without progress")
	}
	mustHappen(t, sc.allDone, "the events behind a blocked inline event handled by another worker")
	close(sc.release)
	flush(t, sc.e)
	checkInvariant(t, sc.e.Stats())
}

func TestRetryBackoffOnTheTestClock(t *testing.T) {
	clk := new(runtime.TestClock)
	var calls atomic.Int64
	handled := make(chan struct{})
	h := func(context.Context, string, ev) error {
		if calls.Add(1) == 1 {
			return errors.New("fails once")
		}
		close(handled)
		return nil
	}
	// A minute, not more: the test clock ticks through every millisecond it
	// advances (an hour took seconds).
	cfg := runtime.Config[string, ev]{Retry: runtime.Retry{Attempts: 2, Initial: time.Minute, Max: time.Minute, NoJitter: true}}
	runtime.UseTestClock(&cfg, clk)
	e := mustNew(t, h, cfg)
	if err := e.Submit(context.Background(), "k", ev{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return e.Stats().Retried == 1 }, "the first attempt failing")
	// Timer functions run inside Advance: a retry due now would already
	// be queued when Advance returns.
	clk.Advance(time.Minute - time.Millisecond)
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d attempts before the backoff ended", got)
	}
	clk.Advance(time.Millisecond)
	mustHappen(t, handled, "the retry once the backoff ended")
	flush(t, e)
	if s := e.Stats(); s.Handled != 1 || s.Retried != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestHoldLimitOnTheTestClock(t *testing.T) {
	clk := new(runtime.TestClock)
	logger, msgs := newSignalLogger()
	h := func(context.Context, string, ev) error { return runtime.Hold("waiting for a gap") }
	cfg := runtime.Config[string, ev]{MaxHold: time.Minute, Logger: logger}
	runtime.UseTestClock(&cfg, clk)
	e := mustNew(t, h, cfg)
	if err := e.Submit(context.Background(), "k", ev{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return e.Stats().Held == 1 }, "the event held")
	clk.Advance(time.Minute - time.Millisecond)
	if s := e.Stats(); s.Held != 1 || s.ParkedKeys != 0 {
		t.Fatalf("before MaxHold: %+v", s)
	}
	clk.Advance(time.Millisecond)
	waitFor(msgs, "ordergen: key parked")
	flush(t, e)
	if s := e.Stats(); s.Held != 0 || s.Parked != 1 {
		t.Fatalf("after MaxHold: %+v", s)
	}
}

// waitUntil waits until cond holds, looking again whenever the scheduler
// lets it; the hang detector ends it.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	done := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for !cond() {
			select {
			case <-stop:
				return
			default:
				time.Sleep(50 * time.Microsecond) // polling a condition nothing signals
			}
		}
		close(done)
	}()
	mustHappen(t, done, what)
}

func keyRange(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

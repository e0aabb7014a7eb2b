package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/genimpl"
)

// batchGuard is a batch handler with a version guard like the generated
// one: it decides each event of a batch (Verdicts), hands the ones to
// apply to the batch's single "write", and ends a batch at a gap it must
// not span.
type batchGuard struct {
	mu      sync.Mutex
	stored  map[string]int
	batches map[string][][]int // the applied events of each call
}

func newBatchGuard() *batchGuard {
	return &batchGuard{stored: map[string]int{}, batches: map[string][][]int{}}
}

func (g *batchGuard) handle(_ context.Context, key string, events []ev) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	last := g.stored[key]
	var apply []int
	verdicts := make([]error, 0, len(events))
	for _, x := range events {
		switch {
		case x.Seq <= last:
			verdicts = append(verdicts, runtime.Skip("duplicate or stale version"))
		case x.Seq > last+1:
			verdicts = append(verdicts, runtime.Hold(fmt.Sprintf("version %d waits for %d", x.Seq, last+1)))
		default:
			apply = append(apply, x.Seq)
			last = x.Seq
			verdicts = append(verdicts, nil)
		}
	}
	if len(apply) > 0 {
		g.batches[key] = append(g.batches[key], apply)
	}
	g.stored[key] = last
	return genimpl.Verdicts(verdicts)
}

func (g *batchGuard) got(key string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprint(g.batches[key])
}

func mustNewBatch(t *testing.T, h runtime.BatchHandler[string, ev], cfg runtime.Config[string, ev]) *runtime.Engine[string, ev] {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	e, err := runtime.NewBatch(h, cfg)
	if err != nil {
		t.Fatalf("NewBatch: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e
}

// A batch guard's verdicts: duplicates skipped one by one, an early event
// held and applied in the batch after the one that fills its gap, every
// batch's applied versions consecutive.
func TestBatchVerdicts(t *testing.T) {
	g := newBatchGuard()
	clk := new(runtime.TestClock) // a long linger gathers whole batches
	cfg := runtime.Config[string, ev]{BatchSize: 8, Linger: time.Second}
	runtime.UseTestClock(&cfg, clk)
	e := mustNewBatch(t, g.handle, cfg)
	submitBatch := func(seqs ...int) {
		t.Helper()
		for _, seq := range seqs {
			if err := e.Submit(context.Background(), "a", ev{Seq: seq}); err != nil {
				t.Fatal(err)
			}
		}
		waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
		clk.Advance(time.Second)
		flush(t, e)
	}
	submitBatch(1, 2, 2, 4, 3, 1)
	// [1 2] applied, 2 skipped, 4 held, 3 applied, 1 skipped; then 4.
	if got := g.got("a"); got != "[[1 2 3] [4]]" {
		t.Fatalf("batches %s", got)
	}
	s := e.Stats()
	if s.Handled != 4 || s.Skipped != 2 || s.Held != 0 || s.Lanes != 0 {
		t.Fatalf("stats %+v", s)
	}
	submitBatch(6, 7)
	if s := e.Stats(); s.Held != 2 || g.got("a") != "[[1 2 3] [4]]" {
		t.Fatalf("before the gap fills: %+v, batches %s", s, g.got("a"))
	}
	submitBatch(5)
	if got := g.got("a"); got != "[[1 2 3] [4] [5] [6 7]]" {
		t.Fatalf("batches %s", got)
	}
	checkInvariant(t, e.Stats())
}

// Verdicts shorter than the batch end it there: the rest comes first in
// the next batch, in order.
func TestBatchVerdictsSplit(t *testing.T) {
	var mu sync.Mutex
	var calls [][]int
	h := func(_ context.Context, _ string, events []ev) error {
		var seqs []int
		for _, x := range events {
			seqs = append(seqs, x.Seq)
		}
		mu.Lock()
		calls = append(calls, seqs)
		mu.Unlock()
		if len(events) > 2 {
			return genimpl.Verdicts([]error{nil, runtime.Skip("not needed")}) // the rest next time
		}
		return nil
	}
	clk := new(runtime.TestClock)
	cfg := runtime.Config[string, ev]{BatchSize: 8, Linger: time.Second}
	runtime.UseTestClock(&cfg, clk)
	e := mustNewBatch(t, h, cfg)
	submitSeqs(t, e, "a", 1, 2, 3, 4, 5)
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	clk.Advance(time.Second)
	flush(t, e)
	mu.Lock()
	got := fmt.Sprint(calls)
	mu.Unlock()
	if got != "[[1 2 3 4 5] [3 4 5] [5]]" {
		t.Fatalf("calls %s", got)
	}
	if s := e.Stats(); s.Handled != 3 || s.Skipped != 2 || s.Retried != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// Unusable verdicts fail the whole batch permanently: it parks, saying why.
func TestBatchVerdictsMisused(t *testing.T) {
	for _, c := range []struct {
		verdicts []error
		reason   string
	}{
		{nil, "decided none"},
		{[]error{nil, nil, nil}, "3 verdicts for 2 events"},
		{[]error{errors.New("disk full")}, "verdict 0 is neither nil, a Skip nor a Hold: disk full"},
	} {
		h := func(context.Context, string, []ev) error { return genimpl.Verdicts(c.verdicts) }
		clk := new(runtime.TestClock)
		cfg := runtime.Config[string, ev]{BatchSize: 8, Linger: time.Second}
		runtime.UseTestClock(&cfg, clk)
		e := mustNewBatch(t, h, cfg)
		submitSeqs(t, e, "a", 1, 2)
		waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
		clk.Advance(time.Second)
		flush(t, e)
		keys, err := e.ParkedKeys(context.Background())
		if err != nil || len(keys) != 1 || !strings.Contains(keys[0].Reason, c.reason) {
			t.Errorf("verdicts %v: parked %+v, %v", c.verdicts, keys, err)
		}
		if s := e.Stats(); s.Parked != 2 || s.Retried != 0 {
			t.Errorf("verdicts %v: stats %+v", c.verdicts, s)
		}
	}
}

// Linger on the test clock: a batch goes when its oldest event has waited
// Linger, or at once when it is full.
func TestBatchLinger(t *testing.T) {
	var mu sync.Mutex
	var calls [][]int
	called := make(chan struct{}, 10)
	h := func(_ context.Context, _ string, events []ev) error {
		var seqs []int
		for _, x := range events {
			seqs = append(seqs, x.Seq)
		}
		mu.Lock()
		calls = append(calls, seqs)
		mu.Unlock()
		called <- struct{}{}
		return nil
	}
	got := func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(calls)
	}
	clk := new(runtime.TestClock)
	cfg := runtime.Config[string, ev]{BatchSize: 4, Linger: 100 * time.Millisecond}
	runtime.UseTestClock(&cfg, clk)
	e := mustNewBatch(t, h, cfg)
	submitSeqs(t, e, "a", 1)
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	clk.Advance(60 * time.Millisecond)
	submitSeqs(t, e, "a", 2)
	clk.Advance(39 * time.Millisecond)
	if c := got(); c != "[]" {
		t.Fatalf("called %s before the oldest event waited Linger", c)
	}
	clk.Advance(time.Millisecond)
	<-called
	if c := got(); c != "[[1 2]]" {
		t.Fatalf("calls %s", c)
	}
	// A full batch does not wait.
	submitSeqs(t, e, "a", 3)
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	submitSeqs(t, e, "a", 4, 5, 6)
	<-called
	if c := got(); c != "[[1 2] [3 4 5 6]]" {
		t.Fatalf("calls %s", c)
	}
	// Close does not linger.
	submitSeqs(t, e, "a", 7)
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	done := make(chan error, 1)
	go func() { done <- e.Close(context.Background()) }()
	clk.Advance(100 * time.Millisecond) // the wait already armed ends
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := got(); c != "[[1 2] [3 4 5 6] [7]]" {
		t.Fatalf("calls %s", c)
	}
	checkInvariant(t, e.Stats())
}

// Regression (found by TestStress): a Withdraw that cancels a running batch
// whose handler still returns Verdicts must not take its events back: the
// handler applied the ones it handled.
func TestBatchVerdictsStandWhenWithdrawCancels(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	h := func(ctx context.Context, _ string, events []ev) error {
		once.Do(func() {
			close(started)
			<-ctx.Done() // Withdraw cancels it
		})
		return genimpl.Verdicts(make([]error, len(events))) // both applied
	}
	var mu sync.Mutex
	outcomes := map[runtime.Outcome]int{}
	clk := new(runtime.TestClock)
	cfg := runtime.Config[string, ev]{BatchSize: 2, Linger: time.Second, OnOutcome: func(_ string, _ uint64, o runtime.Outcome) {
		mu.Lock()
		outcomes[o]++
		mu.Unlock()
	}}
	runtime.UseTestClock(&cfg, clk)
	e := mustNewBatch(t, h, cfg)
	ctx := context.Background()
	for seq := 1; seq <= 2; seq++ { // a full batch: no lingering
		if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "a", ev{Seq: seq}, uint64(seq)); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := runtime.EngineForTransport(e).Withdraw(ended, func(uint64) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Withdraw: %v", err)
	}
	flush(t, e)
	mu.Lock()
	defer mu.Unlock()
	if s := e.Stats(); s.Handled != 2 || s.Withdrawn != 0 || outcomes[runtime.Handled] != 2 || outcomes[runtime.Withdrawn] != 0 {
		t.Fatalf("stats %+v, outcomes %v", s, outcomes)
	}
}

// A SkipApplied verdict moves the key on as a handled one does: the events
// held on the gap it filled are offered again at once, not when their hold
// times out. (A generated group-commit handler skips an unimplemented event
// or a late transition with SkipApplied, having stored its version.)
func TestBatchSkipAppliedReoffersTheHeld(t *testing.T) {
	g := newBatchGuard()
	applied := func(ctx context.Context, key string, events []ev) error {
		if events[0].Seq != 3 {
			return g.handle(ctx, key, events)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.stored[key] = 3 // stored, not handled: as for an unimplemented event
		return genimpl.Verdicts([]error{runtime.SkipApplied(genimpl.ReasonUnimplemented)})
	}
	clk := new(runtime.TestClock)
	cfg := runtime.Config[string, ev]{BatchSize: 8, Linger: time.Second, MaxHold: time.Hour}
	runtime.UseTestClock(&cfg, clk)
	e := mustNewBatch(t, applied, cfg)
	for _, seq := range []int{1, 2, 4} {
		if err := e.Submit(context.Background(), "a", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	clk.Advance(time.Second)
	flush(t, e)
	if s := e.Stats(); s.Held != 1 {
		t.Fatalf("before 3: %+v", s)
	}
	if err := e.Submit(context.Background(), "a", ev{Seq: 3}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return runtime.Lingering(e, "a") }, "the lane lingering")
	clk.Advance(time.Second)
	flush(t, e)
	if got, s := g.got("a"), e.Stats(); got != "[[1 2] [4]]" || s.Held != 0 || s.Skipped != 1 {
		t.Fatalf("after 3 was skipped as applied: batches %s, stats %+v", got, s)
	}
	checkInvariant(t, e.Stats())
}

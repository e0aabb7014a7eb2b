package groupcommit_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

func TestASlowKeyLeavesItsGroup(t *testing.T) {
	cfg := calm()
	cfg.MaxWork = 200 * time.Millisecond
	mp := metricstest.New()
	cfg.MeterProvider = mp
	h := newHarness(t, cfg)
	release, plugged := h.plug("plug")
	matesCommitted := make(chan struct{})
	causes := make(chan error, 2)
	first := true
	work := func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		if first {
			// In the group: it runs until it is evicted, and returns only
			// once its mates committed without it.
			first = false
			<-ctx.Done()
			causes <- context.Cause(ctx)
			<-matesCommitted
			return groupcommit.Result{}, ctx.Err()
		}
		// Alone: applied in a transaction of its own.
		return apply("slow", 1)(ctx, tx, read)
	}
	a := h.doQueued("a", 1, apply("a", 1))
	s := h.doQueued("slow", 1, work)
	b := h.doQueued("b", 1, apply("b", 1))
	release()
	for _, d := range []<-chan error{a, b, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	// a and b committed while the slow work still ran.
	if va, vb, vs := h.store.version("a"), h.store.version("b"), h.store.version("slow"); va != 1 || vb != 1 || vs != 0 {
		t.Fatalf("versions a %d, b %d, slow %d; want 1, 1, 0", va, vb, vs)
	}
	close(matesCommitted)
	if err := wait(t, s); err != nil {
		t.Fatalf("evicted key's Do: %v", err)
	}
	if cause := <-causes; !errors.Is(cause, groupcommit.ErrEvicted) {
		t.Fatalf("slow work's context ended with %v, want ErrEvicted", cause)
	}
	groups, alone, _, _, _, _ := h.store.history()
	if want := [][]string{{"plug"}, {"a", "slow", "b"}, {"a", "b"}}; fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	if fmt.Sprint(alone) != "[slow]" {
		t.Fatalf("keys run alone %v, want [slow]", alone)
	}
	if v, apps := h.store.version("slow"), h.store.appsOf("slow"); v != 1 || apps[1] != 1 {
		t.Fatalf("slow at version %d, applications %v; want 1 applied once", v, apps)
	}
	st := h.c.Stats()
	if st.Evictions != 1 || st.EvictionRollbacks != 1 || st.Alone != 1 {
		t.Fatalf("stats %+v", st)
	}
	m := mp.Collect()
	if n, _ := m.Sum(groupcommit.MetricEvictions); n != 1 {
		t.Fatalf("%s = %v, want 1", groupcommit.MetricEvictions, n)
	}
	if n, _ := m.Sum(groupcommit.MetricRollbacks, meter.Attribute{Key: groupcommit.AttrReason, Value: "eviction"}); n != 1 {
		t.Fatalf("%s{eviction} = %v, want 1", groupcommit.MetricRollbacks, n)
	}
	if n, _ := m.Sum(groupcommit.MetricCommitted); n != 2 {
		t.Fatalf("%s = %v, want 2 (the plug's group and a, b)", groupcommit.MetricCommitted, n)
	}
	if n, _ := m.Sum(groupcommit.MetricSize); n != 3 {
		t.Fatalf("%s sums to %v, want 3 events", groupcommit.MetricSize, n)
	}
}

func TestAPanicInWorkFailsOnlyItsKey(t *testing.T) {
	cfg := calm()
	mp := metricstest.New()
	cfg.MeterProvider = mp
	h := newHarness(t, cfg)
	release, plugged := h.plug("plug")
	a := h.doQueued("a", 1, apply("a", 1))
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		_ = h.c.Do(context.Background(), "p", 1, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
			_ = tx.Apply("p", 1)
			panic("boom")
		})
	}()
	h.waitQueued("p")
	b := h.doQueued("b", 1, apply("b", 1))
	release()
	if v := <-panicked; v != "boom" {
		t.Fatalf("Do of the panicking work recovered %v, want the work's panic", v)
	}
	for _, d := range []<-chan error{a, b, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	if va, vb, vp := h.store.version("a"), h.store.version("b"), h.store.version("p"); va != 1 || vb != 1 || vp != 0 {
		t.Fatalf("versions a %d, b %d, p %d; want 1, 1, 0", va, vb, vp)
	}
	if apps := h.store.appsOf("p"); len(apps) != 0 {
		t.Fatalf("the panicking work's writes committed: %v", apps)
	}
	if s := h.c.Stats(); s.Failed != 1 || s.FailureRollbacks != 1 {
		t.Fatalf("stats %+v", s)
	}
	m := mp.Collect()
	if n, _ := m.Sum(groupcommit.MetricRollbacks, meter.Attribute{Key: groupcommit.AttrReason, Value: "failure"}); n != 1 {
		t.Fatalf("%s{failure} = %v, want 1", groupcommit.MetricRollbacks, n)
	}
	if n, _ := m.Sum(groupcommit.MetricRollbacks, meter.Attribute{Key: meter.AttrSystem, Value: "ordergen"}); n != 1 {
		t.Fatalf("%s{messaging.system} = %v, want 1", groupcommit.MetricRollbacks, n)
	}
}

func TestCloseAnswersQueuedAndWaitsForRunning(t *testing.T) {
	h := newHarness(t, calm())
	release, plugged := h.plug("plug")
	var queued []<-chan error
	for i := range 3 {
		key := fmt.Sprint("k", i)
		queued = append(queued, h.doQueued(key, 1, apply(key, 1)))
	}
	closed := make(chan error, 1)
	go func() { closed <- h.c.Close() }()
	// The queued keys are answered at once, while the plug still runs.
	for _, d := range queued {
		if err := wait(t, d); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("queued Do returned %v, want ErrClosed", err)
		}
	}
	release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	// Close returned after the running group committed.
	if v := h.store.version("plug"); v != 1 {
		t.Fatalf("plug at version %d when Close returned, want 1", v)
	}
	if err := wait(t, plugged); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Do(context.Background(), "late", 1, apply("late", 1)); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Do after Close returned %v, want ErrClosed", err)
	}
	if err := h.c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestContextEndsWhileQueued(t *testing.T) {
	h := newHarness(t, calm())
	release, plugged := h.plug("plug")
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	done := h.do(ctx, "k", 1, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		ran = true
		return groupcommit.Result{}, nil
	})
	h.waitQueued("k")
	other := h.doQueued("other", 1, apply("other", 1))
	cancel()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do returned %v, want context.Canceled", err)
	}
	if s := h.c.Stats(); s.Queued != 1 {
		t.Fatalf("%d queued after the cancel, want 1 (other)", s.Queued)
	}
	release()
	for _, d := range []<-chan error{plugged, other} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, _, _, _, _ := h.store.history()
	if want := [][]string{{"plug"}, {"other"}}; fmt.Sprint(groups) != fmt.Sprint(want) || ran {
		t.Fatalf("groups %v, work ran: %v; want %v and no run", groups, ran, want)
	}
}

func TestAConflictRunsTheGroupAgain(t *testing.T) {
	cfg := calm()
	mp := metricstest.New()
	cfg.MeterProvider = mp
	h := newHarness(t, cfg)
	conflicts := 2
	h.store.commitHook = func([]durable.KeyWrite) error {
		if conflicts > 0 {
			conflicts--
			return fmt.Errorf("deadlock: %w", errConflict)
		}
		return nil
	}
	calls := map[string]int{}
	release, plugged := h.plug("plug") // its group conflicts twice too
	a := h.doQueued("a", 1, counted(calls, "a", apply("a", 1)))
	b := h.doQueued("b", 1, counted(calls, "b", apply("b", 1)))
	release()
	for _, d := range []<-chan error{a, b, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	if want := map[string]int{"a": 1, "b": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	groups, _, _, _, _, _ := h.store.history()
	if want := [][]string{{"plug"}, {"plug"}, {"plug"}, {"a", "b"}}; fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
	if s := h.c.Stats(); s.ConflictRollbacks != 2 || s.Committed != 2 {
		t.Fatalf("stats %+v", s)
	}
	if n, _ := mp.Collect().Sum(groupcommit.MetricRollbacks, meter.Attribute{Key: groupcommit.AttrReason, Value: "conflict"}); n != 2 {
		t.Fatalf("%s{conflict} = %v, want 2", groupcommit.MetricRollbacks, n)
	}
	for _, k := range []string{"plug", "a", "b"} {
		if v, apps := h.store.version(k), h.store.appsOf(k); v != 1 || apps[1] != 1 {
			t.Fatalf("%s at version %d, applications %v; want 1 applied once", k, v, apps)
		}
	}
}

func TestConflictsPastMaxRetriesReachEveryDo(t *testing.T) {
	cfg := calm()
	cfg.MaxRetries = 3
	h := newHarness(t, cfg)
	release, plugged := h.plug("plug")
	begins := 0
	h.store.beginHook = func(context.Context, []string) error {
		begins++
		return fmt.Errorf("busy: %w", errConflict)
	}
	a := h.doQueued("a", 1, apply("a", 1))
	b := h.doQueued("b", 1, apply("b", 1))
	release()
	if err := wait(t, plugged); err != nil { // it began before the hook
		t.Fatal(err)
	}
	for _, d := range []<-chan error{a, b} {
		if err := wait(t, d); !errors.Is(err, errConflict) {
			t.Fatalf("Do returned %v, want the conflict", err)
		}
	}
	if begins != 1+3 {
		t.Fatalf("%d BeginGroup calls, want 4 (one and MaxRetries more)", begins)
	}
}

func TestACommitErrorReachesEveryDo(t *testing.T) {
	h := newHarness(t, calm())
	errDisk := errors.New("disk full")
	fail := false
	h.store.commitHook = func([]durable.KeyWrite) error {
		if fail {
			return errDisk
		}
		return nil
	}
	release, plugged := h.plug("plug")
	var dones []<-chan error
	for i := range 4 {
		key := fmt.Sprint("k", i)
		dones = append(dones, h.doQueued(key, 1, apply(key, 1)))
	}
	fail = true
	release()
	for _, d := range append(dones, plugged) {
		if err := wait(t, d); !errors.Is(err, errDisk) {
			t.Fatalf("Do returned %v, want the commit's error", err)
		}
	}
	groups, _, _, _, _, _ := h.store.history()
	if len(groups) != 2 {
		t.Fatalf("groups %v: a commit error that is no conflict runs nothing again", groups)
	}
	for i := range 4 {
		if v := h.store.version(fmt.Sprint("k", i)); v != 0 {
			t.Fatalf("k%d at version %d after a failed commit", i, v)
		}
	}
}

// logRecords is a slog handler that keeps the records' messages and keys.
type logRecords struct {
	mu   sync.Mutex
	keys map[string][]string // message -> the key attributes
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "key" {
			h.keys[r.Message] = append(h.keys[r.Message], a.Value.String())
		}
		return true
	})
	return nil
}

// A regression test: the runner named an evicted key in its log after the
// key's Do could have returned and its request been reused by another Do
// (a race the stress test found).
func TestAnEvictionIsLoggedWithItsKey(t *testing.T) {
	cfg := calm()
	cfg.MaxWork = 50 * time.Millisecond
	logs := &logRecords{keys: map[string][]string{}}
	cfg.Logger = slog.New(logs)
	h := newHarness(t, cfg)
	first := true
	err := h.c.Do(context.Background(), "slow", 1, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		if first {
			first = false
			<-ctx.Done() // evicted
			return groupcommit.Result{}, ctx.Err()
		}
		return apply("slow", 1)(ctx, tx, read)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The next Do reuses the evicted one's request at once.
	if err := h.c.Do(context.Background(), "next", 1, apply("next", 1)); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Close(); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if got := logs.keys["groupcommit: work evicted from its group"]; fmt.Sprint(got) != "[slow]" {
		t.Fatalf("evictions logged for keys %v, want [slow]", got)
	}
}

package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

func TestOutcomesAreReportedWithTags(t *testing.T) {
	var mu sync.Mutex
	got := map[uint64]runtime.Outcome{}
	r := gated()
	cfg := runtime.Config[string, ev]{
		Retry:     fastRetry,
		Conflate:  true,
		OnOutcome: func(_ string, tag uint64, o runtime.Outcome) { mu.Lock(); got[tag] = o; mu.Unlock() },
	}
	e := mustNew(t, r.handle, cfg)
	ctx := context.Background()
	submit := func(key string, x ev, tag uint64) {
		t.Helper()
		if err := e.SubmitTagged(ctx, key, x, tag); err != nil {
			t.Fatal(err)
		}
	}
	submit("a", ev{Seq: 1}, 1)
	<-r.started
	submit("a", ev{Seq: 2}, 2) // replaced by 3 while 1 runs
	submit("a", ev{Seq: 3, Permanent: true}, 3)
	submit("a", ev{Seq: 4}, 4) // 3 is still pending: 4 replaces it
	r.release(2)               // events 1 and 4 run
	flush(t, e)
	mu.Lock()
	defer mu.Unlock()
	want := map[uint64]runtime.Outcome{1: runtime.Handled, 2: runtime.Conflated, 3: runtime.Conflated, 4: runtime.Handled}
	for tag, o := range want {
		if got[tag] != o {
			t.Errorf("tag %d: outcome %v, want %v (all: %v)", tag, got[tag], o, got)
		}
	}
}

func TestParkedOutcome(t *testing.T) {
	var mu sync.Mutex
	got := map[uint64]runtime.Outcome{}
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{
		OnOutcome: func(_ string, tag uint64, o runtime.Outcome) { mu.Lock(); got[tag] = o; mu.Unlock() },
	})
	ctx := context.Background()
	_ = e.SubmitTagged(ctx, "a", ev{Seq: 1, Permanent: true}, 7)
	_ = e.SubmitTagged(ctx, "a", ev{Seq: 2}, 8)
	flush(t, e)
	mu.Lock()
	defer mu.Unlock()
	if got[7] != runtime.Parked || got[8] != runtime.Parked {
		t.Fatalf("outcomes %v", got)
	}
}

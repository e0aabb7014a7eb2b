package runtime_test

import (
	"context"
	"fmt"
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
		if err := runtime.EngineForTransport(e).SubmitTagged(ctx, key, x, tag); err != nil {
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
	_ = runtime.EngineForTransport(e).SubmitTagged(ctx, "a", ev{Seq: 1, Permanent: true}, 7)
	_ = runtime.EngineForTransport(e).SubmitTagged(ctx, "a", ev{Seq: 2}, 8)
	flush(t, e)
	mu.Lock()
	defer mu.Unlock()
	if got[7] != runtime.Parked || got[8] != runtime.Parked {
		t.Fatalf("outcomes %v", got)
	}
}

func TestTagsSurviveTheMemoryPark(t *testing.T) {
	var mu sync.Mutex
	var got []string
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{
		OnOutcome: func(key string, tag uint64, o runtime.Outcome) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s/%d:%v", key, tag, o))
			mu.Unlock()
		},
	})
	ctx := context.Background()
	_ = runtime.EngineForTransport(e).SubmitTagged(ctx, "a", ev{Seq: 1, Permanent: true}, 1)
	_ = runtime.EngineForTransport(e).SubmitTagged(ctx, "a", ev{Seq: 2}, 2)
	_ = runtime.EngineForTransport(e).SubmitTagged(ctx, "b", ev{Seq: 1, Permanent: true}, 3)
	flush(t, e)
	r.fix("a")
	if err := e.Replay(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Discard(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"a/1:parked": true, "a/2:parked": true, "b/3:parked": true, "a/1:handled": true, "a/2:handled": true, "b/3:discarded": true}
	if len(got) != len(want) {
		t.Fatalf("outcomes %v", got)
	}
	for _, g := range got {
		if !want[g] {
			t.Fatalf("unexpected outcome %s in %v", g, got)
		}
	}
}

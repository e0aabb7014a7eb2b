package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

func TestOrderPerKeyUnderConcurrency(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{MaxActive: 8})
	ctx := context.Background()
	const keys, per = 50, 40
	for i := 0; i < per; i++ {
		for k := 0; k < keys; k++ {
			sleep := time.Duration((i*7+k*13)%5) * 100 * time.Microsecond
			if err := e.Submit(ctx, fmt.Sprintf("k%d", k), ev{Seq: i, Sleep: sleep}); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush(t, e)
	for k := 0; k < keys; k++ {
		got := r.seqs(fmt.Sprintf("k%d", k))
		if len(got) != per || !isSorted(got) {
			t.Fatalf("key k%d handled %v, want 0..%d in order", k, got, per-1)
		}
	}
	if o := r.overlaps(); len(o) > 0 {
		t.Fatalf("events of one key ran at once: %v", o)
	}
	s := e.Stats()
	checkInvariant(t, s)
	if s.Handled != keys*per || s.Lanes != 0 || s.Pending != 0 {
		t.Fatalf("stats after drain: %+v", s)
	}
}

func TestSmokeRetryParkReplay(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.Submit(ctx, "a", ev{Seq: 1, Fail: 2}))
	must(e.Submit(ctx, "a", ev{Seq: 2}))
	must(e.Submit(ctx, "b", ev{Seq: 1, Permanent: true}))
	must(e.Submit(ctx, "b", ev{Seq: 2}))
	flush(t, e)
	must(e.Submit(ctx, "b", ev{Seq: 3}))
	flush(t, e)
	if got := r.seqs("a"); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("a: %v", got)
	}
	if got := r.seqs("b"); len(got) != 0 {
		t.Fatalf("b should be parked, handled %v", got)
	}
	s := e.Stats()
	if s.Parked != 3 || s.ParkedKeys != 1 || s.Retried != 2 {
		t.Fatalf("stats: %+v", s)
	}
	checkInvariant(t, s)
	r.fix("b")
	must(e.Replay(ctx, "b"))
	flush(t, e)
	if got := r.seqs("b"); fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("b after replay: %v", got)
	}
	s = e.Stats()
	if s.Parked != 0 || s.ParkedKeys != 0 || s.Lanes != 0 {
		t.Fatalf("stats after replay: %+v", s)
	}
	checkInvariant(t, s)
}

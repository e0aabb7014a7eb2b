package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// gated returns a recorder whose handler waits for a token per call and
// announces each call's key on started.
func gated() *recorder {
	r := newRecorder()
	r.gate = make(chan struct{})
	r.started = make(chan string, 100)
	return r
}

// release lets n handler calls finish.
func (r *recorder) release(n int) {
	for i := 0; i < n; i++ {
		r.gate <- struct{}{}
	}
}

func TestBacklogReject(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 2, Total: 3}})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started // a/1 runs and holds its worker
	if err := e.Submit(ctx, "a", ev{Seq: 2}); err != nil {
		t.Fatal(err)
	}
	err := e.Submit(ctx, "a", ev{Seq: 3})
	if !errors.Is(err, runtime.ErrBacklogFull) {
		t.Fatalf("third event of a: got %v, want ErrBacklogFull", err)
	}
	if err := e.Submit(ctx, "b", ev{Seq: 1}); err != nil {
		t.Fatalf("another key is not limited by a's backlog: %v", err)
	}
	if err := e.Submit(ctx, "c", ev{Seq: 1}); !errors.Is(err, runtime.ErrBacklogFull) {
		t.Fatalf("total limit: got %v, want ErrBacklogFull", err)
	}
	r.release(3)
	flush(t, e)
	s := e.Stats()
	if s.Rejected != 2 || s.Handled != 3 {
		t.Fatalf("stats: %+v", s)
	}
	checkInvariant(t, s)
}

func TestBacklogDropNewestAndOldest(t *testing.T) {
	for _, tc := range []struct {
		policy runtime.FullPolicy
		want   string
	}{
		{runtime.DropNewest, "[1 2]"},
		{runtime.DropOldest, "[1 3]"},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			r := gated()
			e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 2, WhenFull: tc.policy}})
			ctx := context.Background()
			for seq := 1; seq <= 3; seq++ {
				if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
					t.Fatalf("drop policies accept: %v", err)
				}
				if seq == 1 {
					<-r.started
				}
			}
			r.release(2)
			flush(t, e)
			if got := fmt.Sprint(r.seqs("a")); got != tc.want {
				t.Fatalf("handled %s, want %s", got, tc.want)
			}
			s := e.Stats()
			if s.Dropped != 1 || s.Accepted != 3 {
				t.Fatalf("stats: %+v", s)
			}
			checkInvariant(t, s)
		})
	}
}

func TestBacklogBlockHonoursContextAndWakes(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 1, WhenFull: runtime.Block}})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- e.Submit(cctx, "a", ev{Seq: 2}) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, runtime.ErrBacklogFull) {
		t.Fatalf("blocked submit after cancel: %v", err)
	}
	go func() { done <- e.Submit(ctx, "a", ev{Seq: 3}) }()
	r.release(1) // a/1 finishes: room for a/3
	if err := <-done; err != nil {
		t.Fatalf("blocked submit after room: %v", err)
	}
	<-r.started
	r.release(1)
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1 3]" {
		t.Fatalf("handled %s", got)
	}
	checkInvariant(t, e.Stats())
}

// TestBacklogBlockWakesEveryWaiter submits a key's events one at a time
// under Block with room for one: every submit after the first waits for the
// previous event to finish. A wake-up sent before the finished event has left
// the key's count (and none after) leaves a submit waiting forever, which the
// test's timeout reports; many rounds make that window likely to be hit.
func TestBacklogBlockWakesEveryWaiter(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 1, WhenFull: runtime.Block}})
	ctx := context.Background()
	const n = 20000
	for seq := 1; seq <= n; seq++ {
		if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
			t.Fatalf("submit %d: %v", seq, err)
		}
	}
	flush(t, e)
	if got := len(r.seqs("a")); got != n {
		t.Fatalf("handled %d events, want %d", got, n)
	}
	checkInvariant(t, e.Stats())
}

func TestBacklogTimeoutRejects(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 1, WhenFull: runtime.BlockThenReject, Wait: 5 * time.Millisecond}})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started
	if err := e.Submit(ctx, "a", ev{Seq: 2}); !errors.Is(err, runtime.ErrBacklogFull) {
		t.Fatalf("got %v, want ErrBacklogFull after the wait", err)
	}
	r.release(1)
	flush(t, e)
	if s := e.Stats(); s.Rejected != 1 || s.Handled != 1 {
		t.Fatalf("stats: %+v", s)
	}
}

func TestCloseWakesBlockedSubmitter(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Backlog: runtime.Backlog{PerKey: 1, WhenFull: runtime.Block}})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started
	done := make(chan error)
	go func() { done <- e.Submit(ctx, "a", ev{Seq: 2}) }()
	closed := make(chan error)
	go func() { closed <- e.Close(ctx) }()
	if err := <-done; !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("blocked submit during Close: %v", err)
	}
	r.release(1)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

func TestConflation(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Conflate: true})
	ctx := context.Background()
	for seq := 1; seq <= 5; seq++ {
		if err := e.Submit(ctx, "rider", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
		if seq == 1 {
			<-r.started
		}
	}
	r.release(2)
	flush(t, e)
	if got := fmt.Sprint(r.seqs("rider")); got != "[1 5]" {
		t.Fatalf("handled %s, want the running event and the newest", got)
	}
	s := e.Stats()
	if s.Conflated != 3 {
		t.Fatalf("stats: %+v", s)
	}
	checkInvariant(t, s)
}

func TestBatchHandlerGetsOrderedBatches(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{}, 100)
	var batches [][]int
	h := func(ctx context.Context, key string, evs []ev) error {
		started <- struct{}{}
		<-gate
		var seqs []int
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
		}
		batches = append(batches, seqs) // one key: never concurrent
		return nil
	}
	e, err := runtime.NewBatch(h, runtime.Config[string, ev]{BatchSize: 4, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	for seq := 1; seq <= 10; seq++ {
		if err := e.Submit(ctx, "k", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
		if seq == 1 {
			<-started
		}
	}
	for i := 0; i < 4; i++ { // [1] [2..5] [6..9] [10]
		if i > 0 {
			<-started
		}
		gate <- struct{}{}
	}
	flush(t, e)
	if got := fmt.Sprint(batches); got != "[[1] [2 3 4 5] [6 7 8 9] [10]]" {
		t.Fatalf("batches %s", got)
	}
	checkInvariant(t, e.Stats())
}

func TestTopBacklog(t *testing.T) {
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{})
	ctx := context.Background()
	for seq := 1; seq <= 5; seq++ {
		if err := e.Submit(ctx, "hot", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	<-r.started
	if err := e.Submit(ctx, "cold", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-r.started
	top := e.TopBacklog(1)
	if len(top) != 1 || top[0].Key != "hot" || top[0].Pending != 5 || top[0].OldestAge <= 0 {
		t.Fatalf("TopBacklog(1) = %+v", top)
	}
	if all := e.TopBacklog(10); len(all) != 2 || all[1].Key != "cold" || all[1].Pending != 1 {
		t.Fatalf("TopBacklog(10) = %+v", all)
	}
	r.release(6)
	flush(t, e)
	if top := e.TopBacklog(10); len(top) != 0 {
		t.Fatalf("after drain: %+v", top)
	}
}

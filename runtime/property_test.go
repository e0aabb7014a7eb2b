package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/runtime"
)

// TestPropertyLanes drives random keys, latencies, transient and permanent
// failures, panics, parks, replays, discards and Close timings, and checks
// the runtime's contract: per-key order, never two events of a key at once,
// the accounting invariant, nothing lost, and keys that never fail are
// never held up by keys that do.
func TestPropertyLanes(t *testing.T) {
	if testing.Short() {
		t.Skip("randomized attack: the full run (without -short) runs it")
	}
	rapid.Check(t, func(rt *rapid.T) {
		policy := rapid.SampledFrom([]runtime.ExhaustedPolicy{runtime.ParkKey, runtime.ParkKey, runtime.SendToDeadLetter, runtime.DropEvent}).Draw(rt, "policy")
		attempts := rapid.IntRange(1, 3).Draw(rt, "attempts")
		nkeys := rapid.IntRange(1, 6).Draw(rt, "keys")
		r := newRecorder()
		var dlMu sync.Mutex
		dead := map[string][]int{}
		cfg := runtime.Config[string, ev]{
			MaxActive:   rapid.IntRange(1, 6).Draw(rt, "maxActive"),
			Retry:       runtime.Retry{Attempts: attempts, Initial: 100 * time.Microsecond, Max: time.Millisecond, Multiplier: 2},
			OnExhausted: policy,
			Logger:      discardLogger(),
		}
		if policy == runtime.SendToDeadLetter {
			cfg.DeadLetter = func(_ context.Context, dl runtime.DeadLetterEvent[string, ev]) error {
				dlMu.Lock()
				defer dlMu.Unlock()
				dead[dl.Key] = append(dead[dl.Key], dl.Event.Seq)
				return nil
			}
		}
		var tagMu sync.Mutex
		reported := map[uint64]int{} // outcomes other than Parked, by tag
		cfg.OnOutcome = func(_ string, tag uint64, o runtime.Outcome) {
			tagMu.Lock()
			if o != runtime.Parked {
				reported[tag]++
			}
			tagMu.Unlock()
		}
		e, err := runtime.New(r.handle, cfg)
		if err != nil {
			rt.Fatal(err)
		}
		// rapid may abandon a case in the middle (when it runs out of data);
		// the engine must still stop. A second Close only returns ErrClosed.
		defer e.Close(context.Background())
		ctx := context.Background()
		submitted := map[string][]int{}
		failing := map[string]bool{} // keys with an event that can fail
		discarded := map[string]bool{}
		var tags []uint64
		nops := rapid.IntRange(1, 80).Draw(rt, "ops")
		for i := 0; i < nops; i++ {
			key := fmt.Sprintf("k%d", rapid.IntRange(0, nkeys-1).Draw(rt, "key"))
			switch op := rapid.IntRange(0, 19).Draw(rt, "op"); {
			case op == 0 && policy == runtime.ParkKey:
				r.fix(key)
				if err := e.Replay(ctx, key); err != nil && !errors.Is(err, runtime.ErrNotParked) && !errors.Is(err, runtime.ErrParkedAgain) && !errors.Is(err, runtime.ErrReplayInProgress) {
					rt.Fatalf("replay: %v", err)
				}
			case op == 1 && policy == runtime.ParkKey:
				if _, err := e.Discard(ctx, key); err == nil {
					discarded[key] = true
				} else if !errors.Is(err, runtime.ErrNotParked) && !errors.Is(err, runtime.ErrReplayInProgress) {
					rt.Fatalf("discard: %v", err)
				}
			case op == 2:
				flush(t, e)
				checkQuiescent(rt, e)
			default:
				x := ev{
					Seq:   len(submitted[key]),
					Sleep: time.Duration(rapid.IntRange(0, 200).Draw(rt, "sleepMicros")) * time.Microsecond,
				}
				switch rapid.IntRange(0, 9).Draw(rt, "fault") {
				case 0:
					x.Fail = rapid.IntRange(1, attempts+1).Draw(rt, "fail")
				case 1:
					x.Permanent = true
				case 2:
					x.Panic = true
				}
				if x.Fail > 0 || x.Permanent || x.Panic {
					failing[key] = true
				}
				tag := uint64(i + 1)
				if err := runtime.EngineForTransport(e).SubmitTagged(ctx, key, x, tag); err != nil {
					rt.Fatalf("submit: %v", err)
				}
				tags = append(tags, tag)
				submitted[key] = append(submitted[key], x.Seq)
			}
		}
		flush(t, e)
		// Keys that never failed are complete now, whatever the others do.
		for key, seqs := range submitted {
			if !failing[key] && !slices.Equal(r.seqs(key), seqs) {
				rt.Fatalf("key %s never failed but handled %v of %v", key, r.seqs(key), seqs)
			}
		}
		checkQuiescent(rt, e)
		abrupt := rapid.Bool().Draw(rt, "abruptClose")
		if !abrupt && policy == runtime.ParkKey {
			// Fix every fault and replay until nothing is parked.
			for key := range submitted {
				r.fix(key)
			}
			for {
				keys, _ := e.ParkedKeys(ctx)
				if len(keys) == 0 {
					break
				}
				for _, k := range keys {
					if err := e.Replay(ctx, k.Key); err != nil && !errors.Is(err, runtime.ErrParkedAgain) {
						rt.Fatalf("final replay: %v", err)
					}
				}
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		if abrupt {
			cancel()
		}
		err = e.Close(cctx)
		cancel()
		var ce *runtime.CloseError
		if err != nil && !errors.As(err, &ce) {
			rt.Fatalf("close: %v", err)
		}
		if n := runtime.LiveWorkers(e); n != 0 {
			rt.Fatalf("%d workers still running after Close (abrupt %v, err %v)", n, abrupt, err)
		}
		s := e.Stats()
		checkInvariantT(rt, s)
		checkOrder(rt, r)
		tagMu.Lock()
		defer tagMu.Unlock()
		for _, tag := range tags {
			// Exactly one final outcome each (a park is not final: a replay
			// or a discard follows), at most one if Close gave up.
			if n := reported[tag]; n > 1 || (n == 0 && !abrupt) {
				rt.Fatalf("event tagged %d reported %d final outcomes", tag, n)
			}
		}
		if abrupt {
			return
		}
		for key, seqs := range submitted {
			got := r.seqs(key)
			switch {
			case policy == runtime.ParkKey && !discarded[key]:
				if !slices.Equal(got, seqs) {
					rt.Fatalf("key %s: handled %v, submitted %v", key, got, seqs)
				}
			case policy == runtime.SendToDeadLetter:
				all := append(slices.Clone(got), dead[key]...)
				slices.Sort(all)
				if !slices.Equal(all, seqs) {
					rt.Fatalf("key %s: handled %v + dead-lettered %v != submitted %v", key, got, dead[key], seqs)
				}
			}
		}
		if policy == runtime.ParkKey && s.Parked != 0 {
			rt.Fatalf("parked after final replays: %+v", s)
		}
	})
}

func checkQuiescent(rt *rapid.T, e *runtime.Engine[string, ev]) {
	s := e.Stats()
	checkInvariantT(rt, s)
	if s.Pending != s.Held {
		rt.Fatalf("quiescent engine with pending events: %+v", s)
	}
}

func checkInvariantT(rt *rapid.T, s runtime.Stats) {
	in := s.Accepted + s.Restored
	out := s.Handled + s.Skipped + uint64(s.Parked) + s.DeadLettered + s.Dropped + s.Discarded + s.Conflated + s.Withdrawn + uint64(s.Pending)
	if in != out {
		rt.Fatalf("accounting broken: %+v", s)
	}
}

func checkOrder(rt *rapid.T, r *recorder) {
	if o := r.overlaps(); len(o) > 0 {
		rt.Fatalf("events of one key ran at once: %v", o)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, seqs := range r.handled {
		if !isSorted(seqs) {
			rt.Fatalf("key %s handled out of order: %v", key, seqs)
		}
	}
}

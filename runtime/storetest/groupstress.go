package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
)

// concurrentIncrements runs groups over random overlapping key sets from
// many goroutines on two handles. Each group advances each of its keys by
// one with a handler write of the new version, then ends at random: it
// commits, rolls back, commits after rolling back one key's extra write to
// a savepoint, or commits with a context cancelled first. Conflicts
// (Retryable) run the group again. In the end every key's version is the
// number of groups that committed it, and its handler writes are exactly
// 1 to that version, each once: no increment lost or applied twice.
func (g groupSuite[T]) concurrentIncrements(t *testing.T) {
	ns := g.ns(t)
	a, b := g.open(t), g.open(t)
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	var mu sync.Mutex
	committed := map[string]uint64{}
	retries := 0
	race(t, g.h.Goroutines, a, b, func(i int, st durable.GroupTxStore[T]) error {
		rng := rand.New(rand.NewPCG(uint64(i), 22))
		for range g.h.Rounds {
			set := randomKeys(rng, keys)
			for attempt := 0; ; attempt++ {
				won, err := g.incrementRound(ctxOf(t), rng, st, ns, set)
				if err != nil && st.Retryable(err) && attempt < 100 {
					mu.Lock()
					retries++
					mu.Unlock()
					continue
				}
				if err != nil {
					return fmt.Errorf("group %v: %w", set, err)
				}
				if won {
					mu.Lock()
					for _, k := range set {
						committed[k]++
					}
					mu.Unlock()
				}
				break
			}
		}
		return nil
	})
	t.Logf("%d groups, %d conflicts retried", g.h.Goroutines*g.h.Rounds, retries)
	for _, k := range keys {
		if got := stored(t, a, ns, k); got.Version != committed[k] {
			t.Errorf("%s at version %d after %d committed increments", k, got.Version, committed[k])
		}
		var want []uint64
		for v := uint64(1); v <= committed[k]; v++ {
			want = append(want, v)
		}
		g.wantWritten(t, ns, k, want...)
	}
}

// randomKeys returns 1 to 4 distinct keys of keys, in random order.
func randomKeys(rng *rand.Rand, keys []string) []string {
	perm := rng.Perm(len(keys))[:1+rng.IntN(4)]
	set := make([]string, len(perm))
	for i, p := range perm {
		set[i] = keys[p]
	}
	return set
}

// incrementRound runs one group over set and reports whether it committed.
// An error is the group's; one Retryable accepts means run it again.
func (g groupSuite[T]) incrementRound(ctx context.Context, rng *rand.Rand, st durable.GroupTxStore[T], ns string, set []string) (bool, error) {
	gtx, err := st.BeginGroup(ctx, ns, set)
	if err != nil {
		return false, err
	}
	defer gtx.Rollback()
	end := rng.IntN(10)
	writes := make([]durable.KeyWrite, len(set))
	for i, k := range set {
		next := gtx.Read(k).Version + 1
		if end == 0 && i == 0 { // an extra write undone by a savepoint
			if err := gtx.Savepoint(ctx, "extra"); err != nil {
				return false, err
			}
			if err := g.h.Write(ctx, gtx.Tx(), ns, k, next+1000); err != nil {
				return false, err
			}
			if err := gtx.RollbackTo(ctx, "extra"); err != nil {
				return false, err
			}
		}
		if err := g.h.Write(ctx, gtx.Tx(), ns, k, next); err != nil {
			return false, err
		}
		writes[i] = durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: next, State: fmt.Sprint(next)}}
	}
	switch end {
	case 1:
		return false, gtx.Rollback()
	case 2:
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		// Committed or not: either is right, as long as the error says
		// which (the counts at the end check that).
		return gtx.Commit(cctx, writes) == nil, nil
	}
	if err := gtx.Commit(ctx, writes); err != nil {
		return false, err
	}
	return true, nil
}

package storetest

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

func (s suite) versionsStartAtZero(t *testing.T) {
	vs := s.open(t).Versions(s.ns(t, ""))
	if v := must(vs.Version(ctxOf(t), "never-seen"))(t); v != 0 {
		t.Fatalf("version of an unknown key: %d, want 0", v)
	}
}

func (s suite) versionCompareAndSet(t *testing.T) {
	ctx := ctxOf(t)
	vs := s.open(t).Versions(s.ns(t, ""))
	for _, step := range []struct{ old, next uint64 }{{0, 1}, {1, 2}, {2, 5}} {
		if !must(vs.CompareAndSet(ctx, "k", step.old, step.next))(t) {
			t.Fatalf("compare-and-set %d -> %d refused", step.old, step.next)
		}
		if v := must(vs.Version(ctx, "k"))(t); v != step.next {
			t.Fatalf("version %d after compare-and-set to %d", v, step.next)
		}
	}
	// Another handle sees it.
	other := s.open(t).Versions(s.ns(t, ""))
	if v := must(other.Version(ctx, "k"))(t); v != 5 {
		t.Fatalf("another handle reads version %d, want 5", v)
	}
}

func (s suite) versionStaleRejected(t *testing.T) {
	ctx := ctxOf(t)
	vs := s.open(t).Versions(s.ns(t, ""))
	if !must(vs.CompareAndSet(ctx, "k", 0, 3))(t) {
		t.Fatal("first compare-and-set refused")
	}
	for _, old := range []uint64{0, 1, 2, 4, 100} {
		if must(vs.CompareAndSet(ctx, "k", old, 9))(t) {
			t.Fatalf("compare-and-set from %d accepted while 3 is stored", old)
		}
		if v := must(vs.Version(ctx, "k"))(t); v != 3 {
			t.Fatalf("a refused compare-and-set changed the version to %d", v)
		}
	}
	// A key without a version refuses any old but 0.
	if must(vs.CompareAndSet(ctx, "fresh", 1, 2))(t) {
		t.Fatal("compare-and-set from 1 accepted on a key without a version")
	}
	if v := must(vs.Version(ctx, "fresh"))(t); v != 0 {
		t.Fatalf("a refused compare-and-set stored version %d", v)
	}
}

func (s suite) versionFullRange(t *testing.T) {
	ctx := ctxOf(t)
	vs := s.open(t).Versions(s.ns(t, ""))
	top := uint64(math.MaxUint64)
	for _, step := range []struct{ old, next uint64 }{{0, math.MaxInt64}, {math.MaxInt64, math.MaxInt64 + 1}, {math.MaxInt64 + 1, top}} {
		if !must(vs.CompareAndSet(ctx, "k", step.old, step.next))(t) {
			t.Fatalf("compare-and-set %d -> %d refused", step.old, step.next)
		}
		if v := must(vs.Version(ctx, "k"))(t); v != step.next {
			t.Fatalf("read %d after storing %d", v, step.next)
		}
	}
	if must(vs.CompareAndSet(ctx, "k", math.MaxInt64, 1))(t) {
		t.Fatal("stale compare-and-set accepted at the top of the range")
	}
}

// versionConcurrent races goroutines over two handles on a few keys: every
// version of every key must be stored exactly once.
func (s suite) versionConcurrent(t *testing.T) {
	ctx := ctxOf(t)
	ns := s.ns(t, "")
	a, b := s.open(t).Versions(ns), s.open(t).Versions(ns)
	upTo := uint64(s.h.Increments)
	keys := []string{"k0", "k1"}
	wins := make([][]uint64, s.h.Goroutines*len(keys))
	race(t, len(wins), a, b, func(i int, vs runtime.VersionStore[string]) (err error) {
		wins[i], err = Increment(ctx, vs, keys[i%len(keys)], upTo)
		return err
	})
	for k, key := range keys {
		var mine [][]uint64
		for i := k; i < len(wins); i += len(keys) {
			mine = append(mine, wins[i])
		}
		if err := CheckWins(upTo, mine...); err != nil {
			t.Fatalf("key %s: %v", key, err)
		}
		if v := must(a.Version(ctx, key))(t); v != upTo {
			t.Fatalf("key %s ends at version %d, want %d", key, v, upTo)
		}
	}
}

func (s suite) stateCompareAndSet(t *testing.T) {
	ctx := ctxOf(t)
	ss := s.open(t).States(s.ns(t, ""))
	if st := must(ss.State(ctx, "k"))(t); st != "" {
		t.Fatalf("state of an unknown key: %q", st)
	}
	if must(ss.CompareAndSetState(ctx, "k", "Open", "Closed"))(t) {
		t.Fatal("compare-and-set from Open accepted on a key without a state")
	}
	for _, step := range [][2]string{{"", "Open"}, {"Open", "Frozen"}, {"Frozen", "Closed"}} {
		if !must(ss.CompareAndSetState(ctx, "k", step[0], step[1]))(t) {
			t.Fatalf("compare-and-set %q -> %q refused", step[0], step[1])
		}
	}
	for _, old := range []string{"", "Open", "Frozen"} {
		if must(ss.CompareAndSetState(ctx, "k", old, "Open"))(t) {
			t.Fatalf("stale compare-and-set from %q accepted", old)
		}
	}
	if st := must(s.open(t).States(s.ns(t, "")).State(ctx, "k"))(t); st != "Closed" {
		t.Fatalf("another handle reads state %q, want Closed", st)
	}
}

// stateConcurrent races goroutines along a chain of states: each step is
// taken exactly once.
func (s suite) stateConcurrent(t *testing.T) {
	ctx := ctxOf(t)
	ns := s.ns(t, "")
	a, b := s.open(t).States(ns), s.open(t).States(ns)
	const steps = 50
	state := func(i int) string {
		if i == 0 {
			return ""
		}
		return fmt.Sprintf("S%d", i)
	}
	won := make([][]int, s.h.Goroutines)
	race(t, len(won), a, b, func(g int, ss runtime.StateStore[string]) error {
		for {
			cur, err := ss.State(ctx, "k")
			if err != nil {
				return err
			}
			i := 0
			if cur != "" {
				if _, err := fmt.Sscanf(cur, "S%d", &i); err != nil {
					return fmt.Errorf("read state %q: %w", cur, err)
				}
			}
			if i >= steps {
				return nil
			}
			ok, err := ss.CompareAndSetState(ctx, "k", cur, state(i+1))
			if err != nil {
				return err
			}
			if ok {
				won[g] = append(won[g], i+1)
			}
		}
	})
	seen := map[int]int{}
	for g := range won {
		for _, i := range won[g] {
			seen[i]++
		}
	}
	for i := 1; i <= steps; i++ {
		if seen[i] != 1 {
			t.Fatalf("state %s was stored %d times, want once", state(i), seen[i])
		}
	}
}

// race runs fn(i, h) in n goroutines, i from 0, h alternately handle a
// (even i) and handle b (odd i), and fails t with the first error in order
// of i once they all returned.
func race[H any](t *testing.T, n int, a, b H, fn func(i int, h H) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		h := a
		if i%2 == 1 {
			h = b
		}
		wg.Go(func() { errs[i] = fn(i, h) })
	}
	wg.Wait()
	for _, err := range errs {
		check(t, err)
	}
}

func (s suite) namespacesSeparate(t *testing.T) {
	ctx := ctxOf(t)
	st := s.open(t)
	one, two := s.ns(t, "-a"), s.ns(t, "-b")
	if !must(st.Versions(one).CompareAndSet(ctx, "k", 0, 4))(t) {
		t.Fatal("compare-and-set refused")
	}
	if !must(st.States(one).CompareAndSetState(ctx, "k", "", "Open"))(t) {
		t.Fatal("compare-and-set refused")
	}
	check(t, st.Parks(one).Append(ctx, "k", "r", rawEvents("e1")))
	if v := must(st.Versions(two).Version(ctx, "k"))(t); v != 0 {
		t.Fatalf("namespace %s sees version %d of another", two, v)
	}
	if v := must(st.States(two).State(ctx, "k"))(t); v != "" {
		t.Fatalf("namespace %s sees state %q of another", two, v)
	}
	if keys := must(st.Parks(two).Keys(ctx))(t); len(keys) != 0 {
		t.Fatalf("namespace %s sees parked keys of another: %+v", two, keys)
	}
	if n := must(st.Parks(two).Clear(ctx, "k"))(t); n != 0 {
		t.Fatalf("clearing in %s removed %d events of another namespace", two, n)
	}
	if evs := must(st.Parks(one).Read(ctx, "k", 0, 0))(t); len(evs) != 1 {
		t.Fatalf("namespace %s lost its park: %+v", one, evs)
	}
}

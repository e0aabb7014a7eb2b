package groupcommit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

func TestWaitingKeysFormOneGroup(t *testing.T) {
	const n = 50
	cfg := calm()
	cfg.MaxEvents, cfg.Linger = n, time.Hour // the group begins when n events wait
	h := newHarness(t, cfg)
	var dones []<-chan error
	for i := range n {
		key := fmt.Sprint("k", i)
		dones = append(dones, h.do(context.Background(), key, 1, apply(key, 1)))
	}
	for _, d := range dones {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, commits, _, _, _ := h.store.history()
	if len(groups) != 1 || len(groups[0]) != n || commits != 1 {
		t.Fatalf("groups %v, %d commits; want one group of %d keys", groups, commits, n)
	}
	for i := range n {
		if v := h.store.version(fmt.Sprint("k", i)); v != 1 {
			t.Fatalf("k%d at version %d, want 1", i, v)
		}
	}
	if s := h.c.Stats(); s.Committed != 1 || s.Events != n || s.Keys != n {
		t.Fatalf("stats %+v", s)
	}
}

func TestGroupsFormWhileOneCommits(t *testing.T) {
	h := newHarness(t, calm())
	release, plugged := h.plug("plug")
	var dones []<-chan error
	for i := range 5 {
		key := fmt.Sprint("k", i)
		dones = append(dones, h.doQueued(key, 1, apply(key, 1)))
	}
	release()
	for _, d := range append(dones, plugged) {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, _, _, _, _ := h.store.history()
	want := [][]string{{"plug"}, {"k0", "k1", "k2", "k3", "k4"}}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Fatalf("groups %v, want %v", groups, want)
	}
}

func TestMaxEventsBoundsAGroup(t *testing.T) {
	cfg := calm()
	cfg.MaxEvents = 10
	h := newHarness(t, cfg)
	events := map[string]int{}
	release, plugged := h.plug("plug")
	events["plug"] = 1
	var dones []<-chan error
	for i := range 40 {
		key := fmt.Sprint("k", i)
		n := 1 + i%4
		if i == 7 {
			n = 25 // more than MaxEvents: a group alone
		}
		events[key] = n
		versions := make([]uint64, n)
		for j := range versions {
			versions[j] = uint64(j + 1)
		}
		dones = append(dones, h.doQueued(key, n, apply(key, versions...)))
	}
	release()
	for _, d := range append(dones, plugged) {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, _, _, _, _ := h.store.history()
	var order []string
	for _, g := range groups {
		sum := 0
		for _, k := range g {
			sum += events[k]
		}
		if sum > cfg.MaxEvents && len(g) > 1 {
			t.Errorf("group %v has %d events, more than %d", g, sum, cfg.MaxEvents)
		}
		if slices.Contains(g, "k7") && len(g) != 1 {
			t.Errorf("k7, of 25 events, shares group %v", g)
		}
		order = append(order, g...)
	}
	// Groups take keys in the order they came and never skip one that fits.
	want := []string{"plug"}
	for i := range 40 {
		want = append(want, fmt.Sprint("k", i))
	}
	if !slices.Equal(order, want) {
		t.Fatalf("keys in the order of groups %v, want %v", order, want)
	}
	for k, n := range events {
		if v := h.store.version(k); v != uint64(n) {
			t.Fatalf("%s at version %d, want %d", k, v, n)
		}
	}
}

func TestAKeysWorkSeesIncreasingVersions(t *testing.T) {
	cfg := calm()
	cfg.MaxEvents = 7
	h := newHarness(t, cfg)
	const keys, rounds, batch = 20, 30, 3
	var wg sync.WaitGroup
	errs := make(chan error, keys)
	for k := range keys {
		key := fmt.Sprint("k", k)
		wg.Go(func() {
			// As an engine's worker does: one batch after the other.
			var seen []uint64
			for r := range rounds {
				first := uint64(r*batch + 1)
				err := h.c.Do(context.Background(), key, batch, func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
					seen = append(seen, read.Version)
					return apply(key, first, first+1, first+2)(ctx, tx, read)
				})
				if err != nil {
					errs <- err
					return
				}
			}
			for i := 1; i < len(seen); i++ {
				if seen[i] <= seen[i-1] {
					errs <- fmt.Errorf("%s: read versions %v do not increase", key, seen)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k := range keys {
		key := fmt.Sprint("k", k)
		if v := h.store.version(key); v != rounds*batch {
			t.Fatalf("%s at version %d, want %d", key, v, rounds*batch)
		}
		for v, n := range h.store.appsOf(key) {
			if n != 1 {
				t.Fatalf("%s: version %d applied %d times", key, v, n)
			}
		}
	}
}

var errHandler = errors.New("handler failed")

// failing is a work that applies key's first event and then fails.
func failing(key string) groupcommit.Work[*fakeTx] {
	return func(ctx context.Context, tx *fakeTx, read durable.KeyState) (groupcommit.Result, error) {
		if err := tx.Apply(key, read.Version+1); err != nil {
			return groupcommit.Result{}, err
		}
		return groupcommit.Result{}, errHandler
	}
}

func TestAFailingKeyRollsItsMatesBackOnce(t *testing.T) {
	h := newHarness(t, calm())
	calls := map[string]int{}
	release, plugged := h.plug("plug")
	a := h.doQueued("a", 1, counted(calls, "a", apply("a", 1)))
	b := h.doQueued("b", 1, counted(calls, "b", apply("b", 1)))
	f := h.doQueued("f", 1, counted(calls, "f", failing("f")))
	c := h.doQueued("c", 1, counted(calls, "c", apply("c", 1)))
	release()
	if err := wait(t, f); !errors.Is(err, errHandler) {
		t.Fatalf("failing key's Do returned %v, want its error", err)
	}
	for _, d := range []<-chan error{a, b, c, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, commits, _, _, _ := h.store.history()
	want := [][]string{{"plug"}, {"a", "b", "f", "c"}, {"a", "b", "c"}}
	if fmt.Sprint(groups) != fmt.Sprint(want) || commits != 2 {
		t.Fatalf("groups %v, %d commits; want %v, 2", groups, commits, want)
	}
	if want := map[string]int{"a": 2, "b": 2, "f": 1, "c": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for _, k := range []string{"a", "b", "c"} {
		if v := h.store.version(k); v != 1 {
			t.Fatalf("%s at version %d, want 1", k, v)
		}
	}
	if v, apps := h.store.version("f"), h.store.appsOf("f"); v != 0 || len(apps) != 0 {
		t.Fatalf("failed key committed: version %d, applications %v", v, apps)
	}
	if s := h.c.Stats(); s.FailureRollbacks != 1 || s.Failed != 1 || s.SavepointRollbacks != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestASecondFailureRollsBackOnlyItsSavepoint(t *testing.T) {
	h := newHarness(t, calm())
	calls := map[string]int{}
	release, plugged := h.plug("plug")
	a := h.doQueued("a", 1, counted(calls, "a", apply("a", 1)))
	f1 := h.doQueued("f1", 1, counted(calls, "f1", failing("f1")))
	b := h.doQueued("b", 1, counted(calls, "b", apply("b", 1)))
	f2 := h.doQueued("f2", 1, counted(calls, "f2", failing("f2")))
	c := h.doQueued("c", 1, counted(calls, "c", apply("c", 1)))
	release()
	for _, f := range []<-chan error{f1, f2} {
		if err := wait(t, f); !errors.Is(err, errHandler) {
			t.Fatalf("failing key's Do returned %v, want its error", err)
		}
	}
	for _, d := range []<-chan error{a, b, c, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, commits, _, savepoints, rollbackTos := h.store.history()
	want := [][]string{{"plug"}, {"a", "f1", "b", "f2", "c"}, {"a", "b", "f2", "c"}}
	if fmt.Sprint(groups) != fmt.Sprint(want) || commits != 2 {
		t.Fatalf("groups %v, %d commits; want %v, 2", groups, commits, want)
	}
	if savepoints != 4 || rollbackTos != 1 {
		t.Fatalf("%d savepoints, %d rollbacks to one; want 4 (one per key of the rerun), 1", savepoints, rollbackTos)
	}
	if want := map[string]int{"a": 2, "f1": 1, "b": 1, "f2": 1, "c": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for _, k := range []string{"f1", "f2"} {
		if v, apps := h.store.version(k), h.store.appsOf(k); v != 0 || len(apps) != 0 {
			t.Fatalf("failed key %s committed: version %d, applications %v", k, v, apps)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		if v, apps := h.store.version(k), h.store.appsOf(k); v != 1 || apps[1] != 1 {
			t.Fatalf("%s at version %d, applications %v; want 1 applied once", k, v, apps)
		}
	}
	if s := h.c.Stats(); s.FailureRollbacks != 1 || s.SavepointRollbacks != 1 || s.Failed != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSavepointsFromTheStart(t *testing.T) {
	cfg := calm()
	cfg.Savepoints = true
	h := newHarness(t, cfg)
	calls := map[string]int{}
	release, plugged := h.plug("plug")
	a := h.doQueued("a", 1, counted(calls, "a", apply("a", 1)))
	f := h.doQueued("f", 1, counted(calls, "f", failing("f")))
	b := h.doQueued("b", 1, counted(calls, "b", apply("b", 1)))
	release()
	if err := wait(t, f); !errors.Is(err, errHandler) {
		t.Fatalf("failing key's Do returned %v, want its error", err)
	}
	for _, d := range []<-chan error{a, b, plugged} {
		if err := wait(t, d); err != nil {
			t.Fatal(err)
		}
	}
	groups, _, _, rollbacks, savepoints, rollbackTos := h.store.history()
	want := [][]string{{"plug"}, {"a", "f", "b"}}
	if fmt.Sprint(groups) != fmt.Sprint(want) || rollbacks != 0 {
		t.Fatalf("groups %v, %d rollbacks; want %v, none", groups, rollbacks, want)
	}
	if savepoints != 4 || rollbackTos != 1 {
		t.Fatalf("%d savepoints, %d rollbacks to one; want 4, 1", savepoints, rollbackTos)
	}
	if want := map[string]int{"a": 1, "f": 1, "b": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if v, apps := h.store.version("f"), h.store.appsOf("f"); v != 0 || len(apps) != 0 {
		t.Fatalf("failed key committed: version %d, applications %v", v, apps)
	}
	if s := h.c.Stats(); s.FailureRollbacks != 0 || s.SavepointRollbacks != 1 {
		t.Fatalf("stats %+v", s)
	}
}

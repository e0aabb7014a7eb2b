package storetest

import (
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
)

// compareAndSet: a key moved between the group's read and its commit, one
// with a row and one without, fails the commit with an error Retryable
// accepts, and nothing of the group is kept.
func (g groupSuite[T]) compareAndSet(t *testing.T) {
	ns := g.ns(t)
	st := g.open(t)
	commitKey(t, st, ns, "a", durable.KeyState{Version: 1, State: "Open"})
	for _, moved := range []string{"a", "b"} {
		t.Run("moved "+moved, func(t *testing.T) {
			ctx := ctxOf(t)
			gtx := g.begin(t, st, ns, "a", "b", "c")
			var writes []durable.KeyWrite
			for _, k := range []string{"a", "b", "c"} {
				next := gtx.Read(k).Version + 1
				check(t, g.h.Write(ctx, gtx.Tx(), ns, k, next))
				writes = append(writes, durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: next, State: "Next"}})
			}
			check(t, g.h.Move(ctx, gtx.Tx(), ns, moved, durable.KeyState{Version: 9, State: "Moved"}))
			err := gtx.Commit(ctx, writes)
			if err == nil {
				t.Fatalf("commit succeeded though %s moved", moved)
			}
			if !st.Retryable(err) {
				t.Fatalf("Retryable(%v) = false for a moved key", err)
			}
			check(t, gtx.Rollback())
			for k, want := range map[string]durable.KeyState{"a": {Version: 1, State: "Open"}, "b": {}, "c": {}} {
				if got := stored(t, st, ns, k); got != want {
					t.Fatalf("%s is %+v after a failed commit, want %+v", k, got, want)
				}
				g.wantWritten(t, ns, k)
			}
		})
	}
	if st.Retryable(nil) {
		t.Fatal("Retryable(nil) = true")
	}
}

// badInput: misuse is refused with an error, and the store goes on (a
// transaction left open would block the next on a serial store).
func (g groupSuite[T]) badInput(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	for name, keys := range map[string][]string{"no keys": nil, "a key twice": {"a", "b", "a"}} {
		if gtx, err := st.BeginGroup(ctx, ns, keys); err == nil {
			gtx.Rollback()
			t.Fatalf("BeginGroup with %s succeeded", name)
		}
	}
	if gtx, err := st.BeginGroup(ctx, "", []string{"a"}); err == nil {
		gtx.Rollback()
		t.Fatal("BeginGroup with an empty namespace succeeded")
	}
	for name, writes := range map[string][]durable.KeyWrite{
		"a key not in the group": {{Key: "a", KeyState: durable.KeyState{Version: 1}}, {Key: "z", KeyState: durable.KeyState{Version: 1}}},
		"a key twice":            {{Key: "a", KeyState: durable.KeyState{Version: 1}}, {Key: "a", KeyState: durable.KeyState{Version: 2}}},
	} {
		gtx := g.begin(t, st, ns, "a", "b")
		check(t, g.h.Write(ctx, gtx.Tx(), ns, "a", 1))
		if err := gtx.Commit(ctx, writes); err == nil {
			t.Fatalf("commit with %s succeeded", name)
		}
		check(t, gtx.Rollback())
		if got := stored(t, st, ns, "a"); got != (durable.KeyState{}) {
			t.Fatalf("a is %+v after a refused commit with %s", got, name)
		}
		g.wantWritten(t, ns, "a")
	}
	gtx := g.begin(t, st, ns, "a")
	for _, name := range []string{"", "Upper", "with-dash", `q"uote`, "sp ace"} {
		if err := gtx.Savepoint(ctx, name); err == nil {
			t.Errorf("savepoint %q accepted", name)
		}
	}
	if err := gtx.RollbackTo(ctx, "never_marked"); err == nil {
		t.Error("rollback to a savepoint never marked succeeded")
	}
	check(t, gtx.Rollback())
	if err := gtx.Savepoint(ctx, "late"); err == nil {
		t.Error("savepoint after the rollback succeeded")
	}
	if err := gtx.Commit(ctx, nil); err == nil {
		t.Error("commit after the rollback succeeded")
	}
}

// disjointAtOnce: groups over disjoint keys do not wait for each other.
// (If the second waited for the first, the test would hang.)
func (g groupSuite[T]) disjointAtOnce(t *testing.T) {
	if g.h.Serial {
		t.Skip("the store runs one transaction at a time")
	}
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	commitKey(t, st, ns, "a", durable.KeyState{Version: 1})
	commitKey(t, st, ns, "b", durable.KeyState{Version: 1})
	one := g.begin(t, st, ns, "a", "c")
	two := g.begin(t, st, ns, "b", "d")
	check(t, two.Commit(ctx, []durable.KeyWrite{{Key: "b", KeyState: durable.KeyState{Version: 2}}, {Key: "d", KeyState: durable.KeyState{Version: 1}}}))
	check(t, one.Commit(ctx, []durable.KeyWrite{{Key: "a", KeyState: durable.KeyState{Version: 2}}, {Key: "c", KeyState: durable.KeyState{Version: 1}}}))
	for k, v := range map[string]uint64{"a": 2, "b": 2, "c": 1, "d": 1} {
		if got := stored(t, st, ns, k).Version; got != v {
			t.Fatalf("%s at version %d, want %d", k, got, v)
		}
	}
}

// overlappingSerialize: a group over a key another group holds begins only
// once that one ended, and reads what it committed. The second group runs
// on another handle, as another process would.
func (g groupSuite[T]) overlappingSerialize(t *testing.T) {
	if g.h.Serial {
		t.Skip("the store runs one transaction at a time")
	}
	ctx, ns := ctxOf(t), g.ns(t)
	st, other := g.open(t), g.open(t)
	for _, k := range []string{"a", "b", "c"} {
		commitKey(t, st, ns, k, durable.KeyState{Version: 1})
	}
	first := g.begin(t, st, ns, "a", "b")
	type result struct {
		read durable.KeyState
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// c before b, and b held by the first group: the second waits in
		// BeginGroup until the first commits.
		gtx, err := other.BeginGroup(ctx, ns, []string{"c", "b"})
		if err != nil {
			done <- result{err: err}
			return
		}
		read := gtx.Read("b")
		err = gtx.Commit(ctx, []durable.KeyWrite{{Key: "b", KeyState: durable.KeyState{Version: read.Version + 1, State: "second"}}})
		done <- result{read: read, err: err}
	}()
	check(t, first.Commit(ctx, []durable.KeyWrite{{Key: "b", KeyState: durable.KeyState{Version: 2, State: "first"}}}))
	r := <-done
	check(t, r.err)
	if r.read != (durable.KeyState{Version: 2, State: "first"}) {
		t.Fatalf("the second group read b as %+v, not what the first committed: it did not wait for it", r.read)
	}
	if got := stored(t, st, ns, "b"); got != (durable.KeyState{Version: 3, State: "second"}) {
		t.Fatalf("b ends as %+v", got)
	}
}

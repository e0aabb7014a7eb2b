package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
)

// GroupHarness says how to reach a durable.GroupTxStore under test and how
// a handler writes in its transactions. A store without groups (Memory)
// has no GroupHarness and skips RunGroups, as it skips transactions.
type GroupHarness[T any] struct {
	// Open returns a new handle on the database under test, as
	// Harness.Open does.
	Open func(t *testing.T) durable.GroupTxStore[T]
	// Write is a handler's own write in tx: it records that event n of key
	// in namespace was applied (a row of a table of the test's).
	Write func(ctx context.Context, tx T, namespace, key string, n uint64) error
	// Written returns the n of the committed Writes of key in namespace, in
	// any order.
	Written func(t *testing.T, namespace, key string) []uint64
	// Move stores to as key's version and state through tx, as another
	// writer would between a group's read and its commit. The suite moves
	// keys through the group's own transaction because that is the one
	// writer that gets past the group's locks on every store.
	Move func(ctx context.Context, tx T, namespace, key string, to durable.KeyState) error
	// Fail, when set, runs a statement in tx that fails (on PostgreSQL it
	// aborts the transaction until a rollback to a savepoint).
	Fail func(ctx context.Context, tx T) error
	// Serial says a handle runs one transaction at a time (SQLite on its
	// one connection): the tests that hold two groups of one handle open
	// at once are skipped.
	Serial bool
	// AnyBytes says keys and states may hold any bytes, NUL and invalid
	// UTF-8 too (SQLite), not only text (PostgreSQL refuses the rest).
	AnyBytes bool
	// Goroutines is how many goroutines run groups in the randomized
	// test. Zero: 8.
	Goroutines int
	// Rounds is how many groups each of them commits or abandons. Zero: 40.
	Rounds int
}

// RunGroups runs the conformance suite of group commit against the store h
// opens. Like Run, each test uses namespaces unique to the run.
func RunGroups[T any](t *testing.T, h GroupHarness[T]) {
	if h.Open == nil || h.Write == nil || h.Written == nil || h.Move == nil {
		t.Fatal("storetest: GroupHarness needs Open, Write, Written and Move")
	}
	if h.Goroutines == 0 {
		h.Goroutines = 8
	}
	if h.Rounds == 0 {
		h.Rounds = 40
	}
	g := groupSuite[T]{h: h, run: runID(t)}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"GroupReadsWhatWasStored", g.readsStored},
		{"GroupCommitStoresAllWrites", g.commitStoresAll},
		{"GroupCommitWithoutWrites", g.commitWithoutWrites},
		{"GroupVersionFullRange", g.versionFullRange},
		{"GroupOddKeysAndStates", g.oddKeysAndStates},
		{"GroupRollbackLeavesNothing", g.rollbackLeavesNothing},
		{"GroupSavepoints", g.savepoints},
		{"GroupCompareAndSet", g.compareAndSet},
		{"GroupBadInput", g.badInput},
		{"GroupsOverDisjointKeysOpenAtOnce", g.disjointAtOnce},
		{"GroupsOverOverlappingKeysSerialize", g.overlappingSerialize},
		{"GroupConcurrentIncrements", g.concurrentIncrements},
	} {
		t.Run(tc.name, tc.fn)
	}
}

type groupSuite[T any] struct {
	h   GroupHarness[T]
	run string
}

func (g groupSuite[T]) open(t *testing.T) durable.GroupTxStore[T] {
	t.Helper()
	st := g.h.Open(t)
	if st == nil {
		t.Fatal("GroupHarness.Open returned nil")
	}
	t.Cleanup(func() { closeStore(t, st) })
	return st
}

func (g groupSuite[T]) ns(t *testing.T) string { return g.run + "/" + t.Name() }

func (g groupSuite[T]) begin(t *testing.T, st durable.GroupTxStore[T], ns string, keys ...string) durable.GroupTx[T] {
	t.Helper()
	gtx, err := st.BeginGroup(ctxOf(t), ns, keys)
	if err != nil {
		t.Fatalf("begin group %v: %v", keys, err)
	}
	t.Cleanup(func() {
		if err := gtx.Rollback(); err != nil {
			t.Errorf("rollback at the end: %v", err)
		}
	})
	return gtx
}

// stored returns key's version and state as st's Versions and States read
// them outside any transaction.
func stored(t *testing.T, st durable.Store, ns, key string) durable.KeyState {
	t.Helper()
	v := must(st.Versions(ns).Version(ctxOf(t), key))(t)
	s := must(st.States(ns).State(ctxOf(t), key))(t)
	return durable.KeyState{Version: v, State: s}
}

// commitKey stores ks as key's through BeginKey.
func commitKey[T any](t *testing.T, st durable.TxStore[T], ns, key string, ks durable.KeyState) {
	t.Helper()
	tx := must(st.BeginKey(ctxOf(t), ns, key))(t)
	defer tx.Rollback()
	check(t, tx.Commit(ctxOf(t), ks.Version, ks.State))
}

func (g groupSuite[T]) wantWritten(t *testing.T, ns, key string, want ...uint64) {
	t.Helper()
	got := slices.Sorted(slices.Values(g.h.Written(t, ns, key)))
	if !slices.Equal(got, want) {
		t.Fatalf("handler writes of %s: %v, want %v", key, got, want)
	}
}

func (g groupSuite[T]) readsStored(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	commitKey(t, st, ns, "a", durable.KeyState{Version: 3, State: "Open"})
	first := g.begin(t, st, ns, "b")
	check(t, first.Commit(ctx, []durable.KeyWrite{{Key: "b", KeyState: durable.KeyState{Version: 1, State: "x"}}}))

	other := g.open(t) // another handle sees it all too
	gtx := g.begin(t, other, ns, "c", "a", "b")
	for key, want := range map[string]durable.KeyState{
		"a": {Version: 3, State: "Open"}, "b": {Version: 1, State: "x"}, "c": {}, "not-in-group": {},
	} {
		if got := gtx.Read(key); got != want {
			t.Errorf("Read(%s) = %+v, want %+v", key, got, want)
		}
	}
	check(t, gtx.Rollback())
	check(t, gtx.Rollback())
	if got := stored(t, st, ns, "a"); got != (durable.KeyState{Version: 3, State: "Open"}) {
		t.Fatalf("a group that was rolled back changed a to %+v", got)
	}
}

func (g groupSuite[T]) commitStoresAll(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st, other := g.open(t), g.open(t)
	var keys []string
	for i := range 50 {
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	commitKey(t, st, ns, "k07", durable.KeyState{Version: 4})
	gtx := g.begin(t, st, ns, keys...)
	var writes []durable.KeyWrite
	for _, k := range keys {
		next := gtx.Read(k).Version + 1
		check(t, g.h.Write(ctx, gtx.Tx(), ns, k, next))
		writes = append(writes, durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: next, State: "S" + k}})
	}
	// Nothing shows before the commit, to another handle.
	for _, k := range []string{"k00", "k07", "k49"} {
		if got, want := stored(t, other, ns, k).Version, gtx.Read(k).Version; got != want {
			t.Fatalf("before the commit %s reads version %d, want %d", k, got, want)
		}
	}
	check(t, gtx.Commit(ctx, writes))
	for _, w := range writes {
		if got := stored(t, other, ns, w.Key); got != w.KeyState {
			t.Fatalf("after the commit %s is %+v, want %+v", w.Key, got, w.KeyState)
		}
		g.wantWritten(t, ns, w.Key, w.Version)
	}
	if err := gtx.Commit(ctx, writes); err == nil {
		t.Fatal("a second commit succeeded")
	}
	check(t, gtx.Rollback())
}

// commitWithoutWrites: writes that change nothing, or none, still commit
// the handlers' own writes.
func (g groupSuite[T]) commitWithoutWrites(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	commitKey(t, st, ns, "a", durable.KeyState{Version: 2, State: "Open"})
	gtx := g.begin(t, st, ns, "a", "b")
	check(t, g.h.Write(ctx, gtx.Tx(), ns, "a", 7))
	check(t, gtx.Commit(ctx, []durable.KeyWrite{{Key: "a", KeyState: durable.KeyState{Version: 2, State: "Open"}}}))
	g.wantWritten(t, ns, "a", 7)
	gtx = g.begin(t, st, ns, "b")
	check(t, g.h.Write(ctx, gtx.Tx(), ns, "b", 8))
	check(t, gtx.Commit(ctx, nil))
	g.wantWritten(t, ns, "b", 8)
	if got := stored(t, st, ns, "b"); got != (durable.KeyState{}) {
		t.Fatalf("b is %+v after a commit without writes", got)
	}
}

func (g groupSuite[T]) rollbackLeavesNothing(t *testing.T) {
	ns := g.ns(t)
	st := g.open(t)
	commitKey(t, st, ns, "a", durable.KeyState{Version: 1, State: "Open"})
	ends := map[string]func(gtx durable.GroupTx[T], writes []durable.KeyWrite) error{
		"Rollback": func(gtx durable.GroupTx[T], _ []durable.KeyWrite) error { return gtx.Rollback() },
		"CancelledCommit": func(gtx durable.GroupTx[T], writes []durable.KeyWrite) error {
			ctx, cancel := context.WithCancel(ctxOf(t))
			cancel()
			if err := gtx.Commit(ctx, writes); err == nil {
				return errors.New("commit with a cancelled context succeeded")
			}
			return gtx.Rollback() // after an error, it does nothing
		},
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			ctx := ctxOf(t)
			gtx := g.begin(t, st, ns, "a", "b")
			writes := []durable.KeyWrite{
				{Key: "a", KeyState: durable.KeyState{Version: 2, State: "Closed"}},
				{Key: "b", KeyState: durable.KeyState{Version: 1}},
			}
			for _, w := range writes {
				check(t, g.h.Write(ctx, gtx.Tx(), ns, w.Key, w.Version))
			}
			check(t, end(gtx, writes))
			check(t, gtx.Rollback())
			if got := stored(t, st, ns, "a"); got != (durable.KeyState{Version: 1, State: "Open"}) {
				t.Fatalf("a is %+v after %s", got, name)
			}
			if got := stored(t, st, ns, "b"); got != (durable.KeyState{}) {
				t.Fatalf("b is %+v after %s", got, name)
			}
			g.wantWritten(t, ns, "a")
			g.wantWritten(t, ns, "b")
		})
	}
}

// savepoints: a rollback to a savepoint undoes what came after it and
// nothing before; marking a name again moves it; it also recovers from a
// failed statement.
func (g groupSuite[T]) savepoints(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	gtx := g.begin(t, st, ns, "a", "b", "c")
	tx := gtx.Tx()
	check(t, g.h.Write(ctx, tx, ns, "a", 1))
	check(t, gtx.Savepoint(ctx, "key_b"))
	check(t, g.h.Write(ctx, tx, ns, "b", 1))
	check(t, gtx.RollbackTo(ctx, "key_b"))
	check(t, g.h.Write(ctx, tx, ns, "b", 2))
	check(t, gtx.Savepoint(ctx, "key_b")) // moved past b's 2
	check(t, g.h.Write(ctx, tx, ns, "c", 1))
	check(t, gtx.RollbackTo(ctx, "key_b"))
	if g.h.Fail != nil {
		check(t, gtx.Savepoint(ctx, "key_c"))
		check(t, g.h.Write(ctx, tx, ns, "c", 2))
		if err := g.h.Fail(ctx, tx); err == nil {
			t.Fatal("GroupHarness.Fail did not fail")
		}
		check(t, gtx.RollbackTo(ctx, "key_c"))
	}
	check(t, g.h.Write(ctx, tx, ns, "c", 3))
	check(t, gtx.Commit(ctx, []durable.KeyWrite{
		{Key: "a", KeyState: durable.KeyState{Version: 1}},
		{Key: "c", KeyState: durable.KeyState{Version: 3}},
	}))
	g.wantWritten(t, ns, "a", 1)
	g.wantWritten(t, ns, "b", 2)
	g.wantWritten(t, ns, "c", 3)
	if got := stored(t, st, ns, "c"); got.Version != 3 {
		t.Fatalf("c at version %d, want 3", got.Version)
	}
}

// versionFullRange: versions round-trip over the whole uint64 range, read
// and compared, for keys with rows and without.
func (g groupSuite[T]) versionFullRange(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	steps := []uint64{math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64 - 1, math.MaxUint64}
	keys := []string{"a", "b"}
	for _, v := range steps {
		gtx := g.begin(t, st, ns, keys...)
		var writes []durable.KeyWrite
		for _, k := range keys {
			writes = append(writes, durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: v, State: "S"}})
		}
		check(t, gtx.Commit(ctx, writes))
		gtx = g.begin(t, st, ns, keys...)
		for _, k := range keys {
			if got := gtx.Read(k).Version; got != v {
				t.Fatalf("%s reads version %d after storing %d", k, got, v)
			}
		}
		check(t, gtx.Rollback())
		if got := stored(t, st, ns, "a").Version; got != v {
			t.Fatalf("a at version %d after storing %d", got, v)
		}
	}
}

// oddKeysAndStates: keys and states with quotes, backslashes, control
// characters and non-ASCII text, and when the store keeps any bytes
// (GroupHarness.AnyBytes) NUL and invalid UTF-8, are read and written as
// they are.
func (g groupSuite[T]) oddKeysAndStates(t *testing.T) {
	ctx, ns := ctxOf(t), g.ns(t)
	st := g.open(t)
	text := []string{`q"uote`, `back\slash`, "tab\tnew\nline\x01", "ünïcødé ✓", "[1,2]", "123", "null", ""}
	sets := [][]string{text}
	if g.h.AnyBytes {
		sets = append(sets, append([]string{"nul\x00byte", "bad\xffutf8"}, text...))
	}
	for round, odd := range sets {
		keys := make([]string, len(odd))
		for i, k := range odd {
			keys[i] = fmt.Sprintf("%d/%s", round, k)
		}
		for step := uint64(1); step <= 2; step++ { // inserted, then updated
			gtx := g.begin(t, st, ns, keys...)
			var writes []durable.KeyWrite
			for i, k := range keys {
				if got := gtx.Read(k); got.Version != step-1 {
					t.Fatalf("%q reads %+v before step %d", k, got, step)
				}
				writes = append(writes, durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: step, State: odd[(i+int(step))%len(odd)]}})
			}
			check(t, gtx.Commit(ctx, writes))
			for _, w := range writes {
				if got := stored(t, st, ns, w.Key); got != w.KeyState {
					t.Fatalf("%q stored as %+v, want %+v", w.Key, got, w.KeyState)
				}
			}
		}
	}
}

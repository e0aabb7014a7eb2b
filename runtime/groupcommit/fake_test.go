package groupcommit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// errConflict is the fake's conflict with another writer: Retryable.
var errConflict = errors.New("fake: conflict")

// errTxDone is a write to a transaction that ended.
var errTxDone = errors.New("fake: transaction done")

// app is one application of an event: key's event of version.
type app struct {
	key     string
	version uint64
}

// fakeStore is an in-memory durable.GroupTxStore whose transactions (a
// *fakeTx) record applications of events. Its transactions lock their keys
// (all of a group's at once, so that groups never deadlock), check the
// versions they read at commit, and apply their writes all at once. The
// hooks inject faults.
type fakeStore struct {
	// Hooks, set before use. Each may be nil.
	// beginHook runs at the start of BeginGroup (a slow read, an error).
	beginHook func(ctx context.Context, keys []string) error
	// commitHook runs before a group's Commit applies anything.
	commitHook func(writes []durable.KeyWrite) error
	// savepointHook runs before a Savepoint.
	savepointHook func() error

	mu     sync.Mutex
	cond   sync.Cond
	locked map[string]bool
	keys   map[string]durable.KeyState
	apps   map[app]int
	// history
	groups      [][]string // keys of each BeginGroup, in the order given
	alone       []string   // keys of each BeginKey
	commits     int        // group commits that succeeded
	rollbacks   int        // group transactions rolled back
	savepoints  int
	rollbackTos int
}

func newFakeStore() *fakeStore {
	s := &fakeStore{locked: map[string]bool{}, keys: map[string]durable.KeyState{}, apps: map[app]int{}}
	s.cond.L = &s.mu
	return s
}

func (s *fakeStore) Versions(string) runtime.VersionStore[string] {
	return runtime.NewMemoryVersionStore[string]()
}
func (s *fakeStore) States(string) runtime.StateStore[string] {
	return runtime.NewMemoryStateStore[string]()
}
func (s *fakeStore) Parks(string) runtime.ParkStore[string, durable.RawEvent] {
	return runtime.NewMemoryParkStore[string, durable.RawEvent]()
}

func (s *fakeStore) Retryable(err error) bool { return errors.Is(err, errConflict) }

// lock waits until none of keys is locked and locks them all.
func (s *fakeStore) lockLocked(keys []string) {
	for slices.ContainsFunc(keys, func(k string) bool { return s.locked[k] }) {
		s.cond.Wait()
	}
	for _, k := range keys {
		s.locked[k] = true
	}
}

func (s *fakeStore) unlockLocked(keys []string) {
	for _, k := range keys {
		delete(s.locked, k)
	}
	s.cond.Broadcast()
}

func (s *fakeStore) BeginGroup(ctx context.Context, namespace string, keys []string) (durable.GroupTx[*fakeTx], error) {
	if s.beginHook != nil {
		if err := s.beginHook(ctx, keys); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			return nil, fmt.Errorf("fake: key %q twice in a group", k)
		}
		seen[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = append(s.groups, slices.Clone(keys))
	s.lockLocked(keys)
	t := &fakeTx{s: s, keys: slices.Clone(keys), reads: map[string]durable.KeyState{}, marks: map[string]int{}}
	for _, k := range keys {
		t.reads[k] = s.keys[k]
	}
	return &fakeGroupTx{t}, nil
}

func (s *fakeStore) BeginKey(ctx context.Context, namespace, key string) (durable.KeyTx[*fakeTx], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.alone = append(s.alone, key)
	s.lockLocked([]string{key})
	t := &fakeTx{s: s, keys: []string{key}, reads: map[string]durable.KeyState{key: s.keys[key]}, marks: map[string]int{}}
	return &fakeKeyTx{t}, nil
}

// snapshot returns what the store committed.
func (s *fakeStore) version(key string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key].Version
}

func (s *fakeStore) appsOf(key string) map[uint64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[uint64]int{}
	for a, n := range s.apps {
		if a.key == key {
			m[a.version] = n
		}
	}
	return m
}

func (s *fakeStore) history() (groups [][]string, alone []string, commits, rollbacks, savepoints, rollbackTos int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.groups), slices.Clone(s.alone), s.commits, s.rollbacks, s.savepoints, s.rollbackTos
}

// fakeTx is a transaction of the fake store: what works write in.
type fakeTx struct {
	s     *fakeStore
	mu    sync.Mutex
	keys  []string
	reads map[string]durable.KeyState
	apps  []app
	marks map[string]int
	done  bool
}

// Apply records the application of key's event of version, as a handler's
// write in the transaction.
func (t *fakeTx) Apply(key string, version uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errTxDone
	}
	t.apps = append(t.apps, app{key, version})
	return nil
}

// end ends the transaction, applying its writes when commit is true and
// the versions it read are still the store's.
func (t *fakeTx) end(writes []durable.KeyWrite, commit bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		if commit {
			return errTxDone
		}
		return nil
	}
	t.done = true
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.unlockLocked(t.keys)
	if !commit {
		return nil
	}
	for _, w := range writes {
		read, ok := t.reads[w.Key]
		if !ok {
			return fmt.Errorf("fake: write of %q, not a key of the transaction", w.Key)
		}
		if s.keys[w.Key] != read {
			return fmt.Errorf("fake: %q moved from %+v to %+v: %w", w.Key, read, s.keys[w.Key], errConflict)
		}
	}
	for _, w := range writes {
		s.keys[w.Key] = w.KeyState
	}
	for _, a := range t.apps {
		s.apps[a]++
	}
	return nil
}

type fakeGroupTx struct{ t *fakeTx }

func (g *fakeGroupTx) Tx() *fakeTx { return g.t }

func (g *fakeGroupTx) Read(key string) durable.KeyState { return g.t.reads[key] }

func (g *fakeGroupTx) Savepoint(ctx context.Context, name string) error {
	if h := g.t.s.savepointHook; h != nil {
		if err := h(); err != nil {
			return err
		}
	}
	g.t.mu.Lock()
	defer g.t.mu.Unlock()
	if g.t.done {
		return errTxDone
	}
	g.t.marks[name] = len(g.t.apps)
	g.t.s.mu.Lock()
	g.t.s.savepoints++
	g.t.s.mu.Unlock()
	return nil
}

func (g *fakeGroupTx) RollbackTo(ctx context.Context, name string) error {
	g.t.mu.Lock()
	defer g.t.mu.Unlock()
	if g.t.done {
		return errTxDone
	}
	n, ok := g.t.marks[name]
	if !ok {
		return fmt.Errorf("fake: no savepoint %q", name)
	}
	g.t.apps = g.t.apps[:n]
	g.t.s.mu.Lock()
	g.t.s.rollbackTos++
	g.t.s.mu.Unlock()
	return nil
}

func (g *fakeGroupTx) Commit(ctx context.Context, writes []durable.KeyWrite) error {
	if h := g.t.s.commitHook; h != nil {
		if err := h(writes); err != nil {
			_ = g.t.end(nil, false)
			return err
		}
	}
	if err := g.t.end(writes, true); err != nil {
		return err
	}
	g.t.s.mu.Lock()
	g.t.s.commits++
	g.t.s.mu.Unlock()
	return nil
}

func (g *fakeGroupTx) Rollback() error {
	g.t.mu.Lock()
	done := g.t.done
	g.t.mu.Unlock()
	if !done {
		g.t.s.mu.Lock()
		g.t.s.rollbacks++
		g.t.s.mu.Unlock()
	}
	return g.t.end(nil, false)
}

type fakeKeyTx struct{ t *fakeTx }

func (k *fakeKeyTx) Tx() *fakeTx     { return k.t }
func (k *fakeKeyTx) Version() uint64 { return k.t.reads[k.t.keys[0]].Version }
func (k *fakeKeyTx) State() string   { return k.t.reads[k.t.keys[0]].State }
func (k *fakeKeyTx) Commit(ctx context.Context, version uint64, state string) error {
	return k.t.end([]durable.KeyWrite{{Key: k.t.keys[0], KeyState: durable.KeyState{Version: version, State: state}}}, true)
}
func (k *fakeKeyTx) Rollback() error { return k.t.end(nil, false) }

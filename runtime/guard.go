package runtime

import (
	"context"
	"hash/maphash"
	"strconv"
	"sync"
)

// CheckVersion is the version guard's decision for an event of version when
// stored is the key's last applied version: nil to apply it (the next
// version, or a snapshot over a gap), a Skip for a duplicate or stale one,
// and a Hold for a delta that arrived before the versions it follows.
// Generated handlers call it in memory and in transactions alike.
func CheckVersion(version, stored uint64, snapshot bool) error {
	switch {
	case version <= stored:
		return Skip("duplicate or stale version")
	case version > stored+1 && !snapshot:
		return Hold("version gap: waiting for version " + strconv.FormatUint(stored+1, 10))
	}
	return nil
}

// VersionStore keeps the last applied version of each key, for generated
// version guards. Versions start at 0 (nothing applied). Implementations
// must be safe for concurrent use; durable ones live in sub-packages.
type VersionStore[K comparable] interface {
	// Version returns key's stored version, 0 when none is stored.
	Version(ctx context.Context, key K) (uint64, error)
	// CompareAndSet stores next as key's version if the stored version is
	// still old, and reports whether it did.
	CompareAndSet(ctx context.Context, key K, old, next uint64) (bool, error)
}

// StateStore keeps the current state of each key, for generated
// state-machine guards. The empty string means no state yet.
// Implementations must be safe for concurrent use.
type StateStore[K comparable] interface {
	// State returns key's stored state, "" when none is stored.
	State(ctx context.Context, key K) (string, error)
	// CompareAndSetState stores next as key's state if the stored state is
	// still old, and reports whether it did.
	CompareAndSetState(ctx context.Context, key K, old, next string) (bool, error)
}

// MemoryVersionStore is the in-memory VersionStore. It keeps an entry for
// every key it has seen, for the life of the process: its entries grow with
// the number of keys. It never evicts one, since a forgotten key would take
// a stale or duplicate event for a new one. Keep the versions of an
// unbounded key space in a durable store (runtime/sqlstore). Its keys are
// spread over stripes, each with its own lock, so that workers guarding
// different keys seldom meet.
type MemoryVersionStore[K comparable] struct{ s striped[K, uint64] }

// NewMemoryVersionStore returns an empty in-memory version store.
func NewMemoryVersionStore[K comparable]() *MemoryVersionStore[K] {
	return &MemoryVersionStore[K]{s: newStriped[K, uint64]()}
}

// Version implements VersionStore.
func (s *MemoryVersionStore[K]) Version(_ context.Context, key K) (uint64, error) {
	return s.s.get(key), nil
}

// CompareAndSet implements VersionStore.
func (s *MemoryVersionStore[K]) CompareAndSet(_ context.Context, key K, old, next uint64) (bool, error) {
	return s.s.compareAndSet(key, old, next), nil
}

// MemoryStateStore is the in-memory StateStore. Like MemoryVersionStore it
// keeps every key it has seen: its entries grow with the number of keys and
// are never evicted. Keep the states of an unbounded key space in a durable
// store.
type MemoryStateStore[K comparable] struct{ s striped[K, string] }

// NewMemoryStateStore returns an empty in-memory state store.
func NewMemoryStateStore[K comparable]() *MemoryStateStore[K] {
	return &MemoryStateStore[K]{s: newStriped[K, string]()}
}

// State implements StateStore.
func (s *MemoryStateStore[K]) State(_ context.Context, key K) (string, error) {
	return s.s.get(key), nil
}

// CompareAndSetState implements StateStore.
func (s *MemoryStateStore[K]) CompareAndSetState(_ context.Context, key K, old, next string) (bool, error) {
	return s.s.compareAndSet(key, old, next), nil
}

// storeStripes is how many stripes an in-memory guard store has.
const storeStripes = 32

// striped is a map spread over stripes by a seeded hash of the key.
type striped[K comparable, V comparable] struct {
	seed    maphash.Seed
	stripes *[storeStripes]stripe[K, V]
}

type stripe[K comparable, V comparable] struct {
	// mu guards m.
	mu sync.RWMutex
	m  map[K]V
	_  [32]byte // keep stripes' locks on separate cache lines
}

func newStriped[K comparable, V comparable]() striped[K, V] {
	s := striped[K, V]{seed: maphash.MakeSeed(), stripes: new([storeStripes]stripe[K, V])}
	for i := range s.stripes {
		s.stripes[i].m = make(map[K]V)
	}
	return s
}

func (s striped[K, V]) of(key K) *stripe[K, V] {
	return &s.stripes[maphash.Comparable(s.seed, key)%storeStripes]
}

func (s striped[K, V]) get(key K) V {
	st := s.of(key)
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.m[key]
}

func (s striped[K, V]) compareAndSet(key K, old, next V) bool {
	st := s.of(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m[key] != old {
		return false
	}
	st.m[key] = next
	return true
}

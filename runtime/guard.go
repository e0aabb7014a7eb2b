package runtime

import (
	"context"
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
// unbounded key space in a durable store (runtime/sqlstore).
type MemoryVersionStore[K comparable] struct {
	// mu guards versions.
	mu       sync.RWMutex
	versions map[K]uint64
}

// NewMemoryVersionStore returns an empty in-memory version store.
func NewMemoryVersionStore[K comparable]() *MemoryVersionStore[K] {
	return &MemoryVersionStore[K]{versions: make(map[K]uint64)}
}

// Version implements VersionStore.
func (s *MemoryVersionStore[K]) Version(_ context.Context, key K) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.versions[key], nil
}

// CompareAndSet implements VersionStore.
func (s *MemoryVersionStore[K]) CompareAndSet(_ context.Context, key K, old, next uint64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.versions[key] != old {
		return false, nil
	}
	s.versions[key] = next
	return true, nil
}

// MemoryStateStore is the in-memory StateStore. Like MemoryVersionStore it
// keeps every key it has seen: its entries grow with the number of keys and
// are never evicted. Keep the states of an unbounded key space in a durable
// store.
type MemoryStateStore[K comparable] struct {
	// mu guards states.
	mu     sync.RWMutex
	states map[K]string
}

// NewMemoryStateStore returns an empty in-memory state store.
func NewMemoryStateStore[K comparable]() *MemoryStateStore[K] {
	return &MemoryStateStore[K]{states: make(map[K]string)}
}

// State implements StateStore.
func (s *MemoryStateStore[K]) State(_ context.Context, key K) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.states[key], nil
}

// CompareAndSetState implements StateStore.
func (s *MemoryStateStore[K]) CompareAndSetState(_ context.Context, key K, old, next string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states[key] != old {
		return false, nil
	}
	s.states[key] = next
	return true, nil
}

package runtime

import (
	"context"
	"hash/maphash"
	"sync"

	"github.com/ordergen/ordergen/runtime/internal/versions"
)

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
// unbounded key space in a durable store (runtime/sqlstore). Version takes
// no lock, nor does CompareAndSet for a key the store holds; inserting a
// new key takes the lock of one of its stripes, so that workers guarding
// different keys seldom meet.
type MemoryVersionStore[K comparable] struct{ s *versions.Table[K] }

// NewMemoryVersionStore returns an empty in-memory version store.
func NewMemoryVersionStore[K comparable]() *MemoryVersionStore[K] {
	return &MemoryVersionStore[K]{s: versions.New[K]()}
}

// Version implements VersionStore.
func (s *MemoryVersionStore[K]) Version(_ context.Context, key K) (uint64, error) {
	return s.s.Get(key), nil
}

// CompareAndSet implements VersionStore.
func (s *MemoryVersionStore[K]) CompareAndSet(_ context.Context, key K, old, next uint64) (bool, error) {
	return s.s.CompareAndSet(key, old, next), nil
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

// storeStripes is how many stripes an in-memory guard store has: 1 <<
// storeStripeBits.
const (
	storeStripeBits = 5
	storeStripes    = 1 << storeStripeBits
)

// stripeOf is the stripe of a key whose hash is h: by its top bits, while
// a stripe's table picks the slot by its low ones.
func stripeOf(h uint64) uint64 { return h >> (64 - storeStripeBits) }

// striped is a map spread over stripes by a seeded hash of the key. Each
// stripe is a table of its own (storeTable) indexed by that same hash, so
// that reading a key or setting it hashes the key once; a Go map would hash
// it again, twice for a compare-and-set (a read, then a write).
type striped[K comparable, V comparable] struct {
	seed    maphash.Seed
	stripes *[storeStripes]stripe[K, V]
}

type stripe[K comparable, V comparable] struct {
	// mu guards t.
	mu sync.Mutex
	t  storeTable[K, V]
	_  [32]byte // keep stripes' locks on separate cache lines
}

func newStriped[K comparable, V comparable]() striped[K, V] {
	return striped[K, V]{seed: maphash.MakeSeed(), stripes: new([storeStripes]stripe[K, V])}
}

// of returns key's stripe and hash (see stripeOf).
func (s striped[K, V]) of(key K) (*stripe[K, V], uint64) {
	h := maphash.Comparable(s.seed, key)
	return &s.stripes[stripeOf(h)], h
}

func (s striped[K, V]) get(key K) V {
	st, h := s.of(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if sl := st.t.find(h, key); sl != nil {
		return sl.val
	}
	var zero V
	return zero
}

func (s striped[K, V]) compareAndSet(key K, old, next V) bool {
	st, h := s.of(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if sl := st.t.find(h, key); sl != nil {
		if sl.val != old {
			return false
		}
		sl.val = next
		return true
	}
	var zero V
	if old != zero {
		return false
	}
	st.t.insert(h, key, next)
	return true
}

// storeTable is a hash table with open addressing (linear probing) that
// never removes a key, as the in-memory guard stores never forget one. Its
// slots keep each key's hash, so that growing it hashes nothing.
type storeTable[K comparable, V any] struct {
	slots []storeSlot[K, V] // a power of two long, or empty
	n     int               // slots in use
}

type storeSlot[K comparable, V any] struct {
	hash uint64 // the key's hash with its lowest bit set: 0 marks a free slot
	key  K
	val  V
}

// find returns the slot of key, whose hash is h, or nil.
func (t *storeTable[K, V]) find(h uint64, key K) *storeSlot[K, V] {
	if len(t.slots) == 0 {
		return nil
	}
	h |= 1
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		switch {
		case sl.hash == 0:
			return nil
		case sl.hash == h && sl.key == key:
			return sl
		}
	}
}

// insert adds key, whose hash is h and which the table does not hold, with
// val; it grows the table to keep it at most three quarters full.
func (t *storeTable[K, V]) insert(h uint64, key K, val V) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.place(storeSlot[K, V]{hash: h | 1, key: key, val: val})
	t.n++
}

// place puts sl into the first free slot of its probe sequence.
func (t *storeTable[K, V]) place(sl storeSlot[K, V]) {
	mask := uint64(len(t.slots) - 1)
	i := sl.hash & mask
	for t.slots[i].hash != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = sl
}

func (t *storeTable[K, V]) grow() {
	old := t.slots
	t.slots = make([]storeSlot[K, V], max(16, 2*len(old)))
	for _, sl := range old {
		if sl.hash != 0 {
			t.place(sl)
		}
	}
}

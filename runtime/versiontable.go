package runtime

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// versionStripes is the in-memory version store's table, spread over
// stripes as striped is, with reads that take no lock: a generated guard
// reads a key's version before every event and sets it after, and the read
// is half of that work. Writers (compare-and-set, and the inserts and
// growth it causes) take the stripe's lock; readers load the stripe's
// current table and a slot's hash and value atomically.
//
// Why a read without the lock is right: a slot's key is written before its
// hash is published, a table is filled before it is published, and a value
// changes only under the lock, in the current table. A read that starts
// after a compare-and-set ended loads the table that set wrote to (a
// growth after it copied the value), so it sees that value or a later one.
type versionStripes[K comparable] struct {
	seed    maphash.Seed
	stripes *[storeStripes]versionStripe[K]
}

type versionStripe[K comparable] struct {
	mu sync.Mutex // serialises the writers of t
	t  atomic.Pointer[versionTable[K]]
	_  [48]byte // keep stripes' locks on separate cache lines
}

// versionTable is storeTable with atomic hashes and values: open
// addressing, linear probing, never a removal.
type versionTable[K comparable] struct {
	slots []versionSlot[K] // a power of two long
	n     int              // slots in use, under the stripe's lock
}

type versionSlot[K comparable] struct {
	hash atomic.Uint64 // the key's hash with its lowest bit set: 0 marks a free slot
	key  K             // written before hash
	val  atomic.Uint64
}

func newVersionStripes[K comparable]() versionStripes[K] {
	return versionStripes[K]{seed: maphash.MakeSeed(), stripes: new([storeStripes]versionStripe[K])}
}

// of returns key's stripe and hash.
func (s versionStripes[K]) of(key K) (*versionStripe[K], uint64) {
	h := maphash.Comparable(s.seed, key)
	return &s.stripes[stripeOf(h)], h
}

func (s versionStripes[K]) get(key K) uint64 {
	st, h := s.of(key)
	if sl := st.t.Load().find(h, key); sl != nil {
		return sl.val.Load()
	}
	return 0
}

func (s versionStripes[K]) compareAndSet(key K, old, next uint64) bool {
	st, h := s.of(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	t := st.t.Load()
	if sl := t.find(h, key); sl != nil {
		return sl.val.CompareAndSwap(old, next)
	}
	if old != 0 {
		return false
	}
	grow := t == nil || 4*(t.n+1) > 3*len(t.slots)
	if grow {
		t = t.grown()
	}
	t.place(h|1, key, next)
	t.n++
	if grow {
		st.t.Store(t) // published once the key is in it too
	}
	return true
}

// find returns the slot of key, whose hash is h, or nil; t may be nil.
func (t *versionTable[K]) find(h uint64, key K) *versionSlot[K] {
	if t == nil {
		return nil
	}
	h |= 1
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		switch sh := sl.hash.Load(); {
		case sh == 0:
			return nil
		case sh == h && sl.key == key:
			return sl
		}
	}
}

// place puts key (hash h, lowest bit set) with val into the first free
// slot of its probe sequence, publishing the hash last.
func (t *versionTable[K]) place(h uint64, key K, val uint64) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].hash.Load() != 0 {
		i = (i + 1) & mask
	}
	sl := &t.slots[i]
	sl.key = key
	sl.val.Store(val)
	sl.hash.Store(h)
}

// grown returns a copy of t (nil: empty) with twice its slots, not yet
// published; the stripe's lock is held.
func (t *versionTable[K]) grown() *versionTable[K] {
	size := 16
	if t != nil {
		size = 2 * len(t.slots)
	}
	g := &versionTable[K]{slots: make([]versionSlot[K], size)}
	if t == nil {
		return g
	}
	for i := range t.slots {
		sl := &t.slots[i]
		if h := sl.hash.Load(); h != 0 {
			g.place(h, sl.key, sl.val.Load())
		}
	}
	g.n = t.n
	return g
}

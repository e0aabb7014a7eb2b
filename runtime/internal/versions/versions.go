package versions

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// stripeBits is log2 of the number of stripes: writers that insert keys
// take the lock of their key's stripe only.
const (
	stripeBits = 5
	stripes    = 1 << stripeBits
)

// Table maps keys to versions (0: none stored). Its keys are spread over
// stripes by a seeded hash; each stripe is an open-addressing table of
// entries that never loses one. Growth copies the entries' pointers, so
// an entry found in any table of its stripe is the key's for good: a
// compare-and-set on it needs no lock and no growth can lose it.
//
// Why reads and sets without a lock are right: an entry's key is written
// before the entry is placed, a slot's entry before its hash is published,
// and a table is filled before it is published; a version lives in its
// entry alone, changed by atomic compare-and-swap.
//
// The zero Table is not ready: use New.
type Table[K comparable] struct {
	seed maphash.Seed
	// tables holds each stripe's current table, and locks the lock of its
	// inserting writers, apart: the tables' pointers change only when a
	// stripe grows, so their few cache lines stay in every core's cache,
	// where a lock beside them would take the line from the readers.
	tables *[stripes]atomic.Pointer[table[K]]
	locks  *[stripes]stripeLock
}

// stripeLock serialises the inserts into a stripe's table, on a cache line
// of its own.
type stripeLock struct {
	sync.Mutex
	_ [56]byte
}

// Entry is a key's place in a Table: its version, which compare-and-set
// changes.
type Entry[K comparable] struct {
	key K
	val atomic.Uint64
}

// CompareAndSet stores next as the entry's version if it is still old, and
// reports whether it did.
func (e *Entry[K]) CompareAndSet(old, next uint64) bool {
	return e.val.CompareAndSwap(old, next)
}

// table is one stripe's open-addressing table: linear probing, never a
// removal.
type table[K comparable] struct {
	slots []slot[K] // a power of two long
	n     int       // slots in use, under the stripe's lock
}

type slot[K comparable] struct {
	hash atomic.Uint64 // the key's hash with its lowest bit set: 0 marks a free slot
	e    *Entry[K]     // written before hash
}

// New returns an empty table.
func New[K comparable]() *Table[K] {
	return &Table[K]{
		seed:   maphash.MakeSeed(),
		tables: new([stripes]atomic.Pointer[table[K]]),
		locks:  new([stripes]stripeLock),
	}
}

// stripeOf is the stripe of a key whose hash is h: by its top bits, while
// a stripe's table picks the slot by its low ones.
func stripeOf(h uint64) uint64 { return h >> (64 - stripeBits) }

// Get returns key's version, 0 when none is stored.
func (t *Table[K]) Get(key K) uint64 {
	_, v := t.Lookup(key)
	return v
}

// Lookup returns key's entry and version, or nil and 0 when key has none.
// The version is the entry's when Lookup read it: a guard that read it
// sets the next one with the entry's CompareAndSet, or, for a nil entry,
// with the table's CompareAndSet from 0.
func (t *Table[K]) Lookup(key K) (*Entry[K], uint64) {
	h := maphash.Comparable(t.seed, key)
	if e := t.tables[stripeOf(h)].Load().find(h, key); e != nil {
		return e, e.val.Load()
	}
	return nil, 0
}

// CompareAndSet stores next as key's version if its version is still old
// (0 for a key with none), and reports whether it did.
func (t *Table[K]) CompareAndSet(key K, old, next uint64) bool {
	h := maphash.Comparable(t.seed, key)
	i := stripeOf(h)
	if e := t.tables[i].Load().find(h, key); e != nil {
		return e.CompareAndSet(old, next)
	}
	if old != 0 {
		return false
	}
	t.locks[i].Lock()
	defer t.locks[i].Unlock()
	tb := t.tables[i].Load()
	if e := tb.find(h, key); e != nil { // inserted since the look above
		return e.CompareAndSet(old, next)
	}
	grow := tb == nil || 4*(tb.n+1) > 3*len(tb.slots)
	if grow {
		tb = tb.grown()
	}
	e := &Entry[K]{key: key}
	e.val.Store(next)
	tb.place(h|1, e)
	tb.n++
	if grow {
		t.tables[i].Store(tb) // published once the key is in it too
	}
	return true
}

// find returns the entry of key, whose hash is h, or nil; t may be nil.
func (t *table[K]) find(h uint64, key K) *Entry[K] {
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
		case sh == h && sl.e.key == key:
			return sl.e
		}
	}
}

// place puts e, of a key whose hash is h (lowest bit set), into the first
// free slot of its probe sequence, publishing the hash last.
func (t *table[K]) place(h uint64, e *Entry[K]) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].hash.Load() != 0 {
		i = (i + 1) & mask
	}
	sl := &t.slots[i]
	sl.e = e
	sl.hash.Store(h)
}

// grown returns a copy of t (nil: empty) with twice its slots, not yet
// published; the stripe's lock is held. The copy holds the same entries.
func (t *table[K]) grown() *table[K] {
	size := 16
	if t != nil {
		size = 2 * len(t.slots)
	}
	g := &table[K]{slots: make([]slot[K], size)}
	if t == nil {
		return g
	}
	for i := range t.slots {
		sl := &t.slots[i]
		if h := sl.hash.Load(); h != 0 {
			g.place(h, sl.e)
		}
	}
	g.n = t.n
	return g
}

package versions

import (
	"strconv"
	"sync"
	"testing"
)

// Keys whose hashes collide keep their entries, across a growth.
func TestCollidingKeysKeepTheirEntries(t *testing.T) {
	tb := (*table[string])(nil).grown()
	for i := range 12 {
		e := &Entry[string]{key: strconv.Itoa(i)}
		e.val.Store(uint64(i))
		tb.place(43, e)
	}
	tb.n = 12
	tb = tb.grown()
	for i := range 12 {
		if e := tb.find(42, strconv.Itoa(i)); e == nil || e.val.Load() != uint64(i) {
			t.Fatalf("key %d lost among colliding hashes", i)
		}
	}
	if tb.find(42, "12") != nil {
		t.Fatal("found a key never placed")
	}
}

// An entry a guard looked up stays the key's through the growth of its
// stripe: a compare-and-set on it after the growth is what every later
// read sees. Without entries shared between the old and the grown table, a
// set on the old table's slot would be lost.
func TestAnEntryOutlivesGrowth(t *testing.T) {
	tab := New[string]()
	if !tab.CompareAndSet("k", 0, 1) {
		t.Fatal("insert failed")
	}
	e, v := tab.Lookup("k")
	if e == nil || v != 1 {
		t.Fatalf("Lookup = %v, %d; want the entry and 1", e, v)
	}
	for i := range 5000 { // grows every stripe several times
		tab.CompareAndSet("other-"+strconv.Itoa(i), 0, 1)
	}
	if !e.CompareAndSet(1, 2) {
		t.Fatal("the entry's compare-and-set failed after growth")
	}
	if got := tab.Get("k"); got != 2 {
		t.Fatalf("Get = %d after the entry's set to 2", got)
	}
	if e.CompareAndSet(1, 3) || tab.CompareAndSet("k", 1, 3) {
		t.Fatal("a compare-and-set from a stale version succeeded")
	}
}

// Two goroutines inserting the same key: exactly one insert from 0
// succeeds, and the key has one entry.
func TestConcurrentInsertsOfOneKey(t *testing.T) {
	for round := range 200 {
		tab := New[string]()
		key := "k" + strconv.Itoa(round)
		var wg sync.WaitGroup
		won := make([]bool, 4)
		for g := range won {
			wg.Go(func() { won[g] = tab.CompareAndSet(key, 0, uint64(g+1)) })
		}
		wg.Wait()
		n := 0
		for g, w := range won {
			if w {
				n++
				if got := tab.Get(key); got != uint64(g+1) {
					t.Fatalf("round %d: Get = %d, the winner set %d", round, got, g+1)
				}
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d inserts from 0 succeeded, want 1", round, n)
		}
	}
}

package runtime

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The striped table agrees with a Go map under random reads and
// compare-and-sets, across its growth, with keys whose hashes collide in
// their low bits (forced by a constant hash) as well as real ones.
func TestStripedTableAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := newStriped[string, uint64]()
	want := map[string]uint64{}
	for range 200000 {
		key := "k" + strconv.Itoa(rng.IntN(5000))
		if rng.IntN(2) == 0 {
			if got := s.get(key); got != want[key] {
				t.Fatalf("get %s: %d, want %d", key, got, want[key])
			}
			continue
		}
		old, next := want[key], uint64(rng.IntN(4))
		if rng.IntN(4) == 0 {
			old++ // a stale compare
		}
		ok := s.compareAndSet(key, old, next)
		if wantOK := want[key] == old; ok != wantOK {
			t.Fatalf("compareAndSet %s %d->%d: %v, want %v", key, old, next, ok, wantOK)
		}
		if ok {
			want[key] = next
		}
	}
	// Collisions: every key with the same hash.
	var tb storeTable[string, string]
	for i := range 1000 {
		k := strconv.Itoa(i)
		if tb.find(42, k) != nil {
			t.Fatalf("found %s before inserting it", k)
		}
		tb.insert(42, k, "v"+k)
	}
	for i := range 1000 {
		k := strconv.Itoa(i)
		if sl := tb.find(42, k); sl == nil || sl.val != "v"+k {
			t.Fatalf("key %s lost among colliding hashes", k)
		}
	}
	if tb.n != 1000 || 4*tb.n > 3*len(tb.slots) {
		t.Fatalf("%d keys in %d slots", tb.n, len(tb.slots))
	}
}

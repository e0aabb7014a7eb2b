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
	s := newStriped[string, uint64]()
	agreesWithAMap(t, 1, s.get, s.compareAndSet)
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

// agreesWithAMap checks a table's get and compareAndSet against a Go map,
// under 200,000 random reads and compare-and-sets (a quarter of them
// stale) over 5,000 keys: enough for its tables to grow several times.
func agreesWithAMap(t *testing.T, seed uint64, get func(string) uint64, compareAndSet func(string, uint64, uint64) bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	want := map[string]uint64{}
	for range 200000 {
		key := "k" + strconv.Itoa(rng.IntN(5000))
		if rng.IntN(2) == 0 {
			if got := get(key); got != want[key] {
				t.Fatalf("get %s: %d, want %d", key, got, want[key])
			}
			continue
		}
		old, next := want[key], uint64(rng.IntN(4))
		if rng.IntN(4) == 0 {
			old++ // a stale compare
		}
		ok := compareAndSet(key, old, next)
		if wantOK := want[key] == old; ok != wantOK {
			t.Fatalf("compareAndSet %s %d->%d: %v, want %v", key, old, next, ok, wantOK)
		}
		if ok {
			want[key] = next
		}
	}
}

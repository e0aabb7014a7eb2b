package runtime

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ordergen/ordergen/runtime/internal/versions"
)

// The version table agrees with a Go map under random reads and
// compare-and-sets, across its growth.
func TestVersionTableAgreesWithAMap(t *testing.T) {
	s := versions.New[string]()
	agreesWithAMap(t, 3, s.Get, s.CompareAndSet)
}

// Reads without the lock, while writers insert keys and grow the tables:
// a writer always reads its own keys' last version (a guard reads what the
// key's previous event set), and a reader of another writer's keys never
// sees a version go back. Run under -race.
func TestVersionTableReadsWhileItGrows(t *testing.T) {
	s := versions.New[string]()
	const writers, keysEach, rounds = 4, 3000, 3
	var wg sync.WaitGroup
	errs := make(chan string, writers*2)
	for w := range writers {
		wg.Go(func() { // a writer: its own keys, version after version
			for r := range uint64(rounds) {
				for i := range keysEach {
					key := strconv.Itoa(w) + "/" + strconv.Itoa(i)
					if got := s.Get(key); got != r {
						errs <- key + ": read " + strconv.FormatUint(got, 10) + ", its writer set " + strconv.FormatUint(r, 10)
						return
					}
					if !s.CompareAndSet(key, r, r+1) {
						errs <- key + ": compare-and-set failed with its own last version"
						return
					}
				}
			}
		})
		wg.Go(func() { // a reader of the next writer's keys
			seen := make([]uint64, keysEach)
			other := strconv.Itoa((w + 1) % writers)
			for range rounds * 4 {
				for i := range keysEach {
					v := s.Get(other + "/" + strconv.Itoa(i))
					if v < seen[i] {
						errs <- "a version went back from " + strconv.FormatUint(seen[i], 10) + " to " + strconv.FormatUint(v, 10)
						return
					}
					seen[i] = v
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// BenchmarkGuardStore is a generated version guard's use of the in-memory
// store, from every P at once: a read of a key's version, then its
// compare-and-set to the next one, over 10,000 keys. "striped" is the
// locked table the state store uses, for comparison.
func BenchmarkGuardStore(b *testing.B) {
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	run := func(b *testing.B, get func(string) uint64, cas func(string, uint64, uint64) bool) {
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			// Each goroutine guards keys of its own, as lanes do.
			base := int(next.Add(1)) * 7919
			i := 0
			for pb.Next() {
				key := keys[(base+i)%len(keys)]
				i++
				v := get(key)
				cas(key, v, v+1) // fails now and then: another goroutine's key
			}
		})
	}
	b.Run("versions", func(b *testing.B) {
		s := versions.New[string]()
		run(b, s.Get, s.CompareAndSet)
	})
	b.Run("striped", func(b *testing.B) {
		s := newStriped[string, uint64]()
		run(b, s.get, s.compareAndSet)
	})
}

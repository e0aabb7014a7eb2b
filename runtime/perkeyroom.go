package runtime

// The per-key limit of keys without a lane. Such a key's count is not kept
// anywhere (see shard): it is its events among the shard's inbox and inline
// batch, which admission counts only once the shard holds PerKey events
// without a lane, when one key might have them all. A count is a scan of
// them, and in a backlog that stays full (a handler slower than the
// submitter, a per-key limit well below the total) every submission to the
// shard scanned it: in BenchmarkPerKeyLimit/work the default PerKey of
// 1,000 cost 1.38x a limit equal to the total. So a scan counts every key
// at once, and what it finds is kept as headroom: how many more events the
// shard can take before any key could reach the limit (1.11x). Events that
// leave only make the bound looser, so it needs no updating but a
// decrement per admission. A small limit still scans for the one key
// (PerKey 16: 1.5x).

// fullCountPays is the least headroom for which counting every key (a map
// update per event) is cheaper than scanning for one key per admission
// (an equality test per event) until the headroom is used up. A limit at
// most this large never leaves that much: its keys are scanned one by one.
const fullCountPays = 32

// perKeyRoom is the per-key limit's bookkeeping for a shard's keys without a
// lane; its fields are guarded by the shard's mutex.
type perKeyRoom[K comparable] struct {
	// headroom is how many more events without a lane the shard may admit
	// without looking: no key without a lane has more than PerKey-headroom
	// events, so each of them finds fewer than PerKey before it is added.
	// A full count sets it (counting the admission it was made for), each
	// admission since took one, and events leaving only loosen it.
	headroom int
	// scansLeft is how many single-key scans admission makes before it
	// counts every key again, after a full count that found too little
	// headroom to pay for itself.
	scansLeft int
	// counts is the full count's scratch map, empty between counts.
	counts map[K]int
}

// unlanedRoom reports whether key, which has no lane, has fewer than
// perKey events waiting in sh's inbox and inline batch, so that one more may
// be admitted; it takes that event's share of the headroom. sh.mu is held.
func (sh *shard[K, E]) unlanedRoom(key K, perKey int) bool {
	r := &sh.room
	switch {
	case r.headroom > 0:
		r.headroom--
		return true
	case sh.unlaned() < perKey:
		return true
	case perKey <= fullCountPays: // a full count cannot pay
		return sh.unlanedCount(key) < perKey
	case r.scansLeft > 0:
		r.scansLeft--
		return sh.unlanedCount(key) < perKey
	}
	most, n := sh.countUnlaned(key)
	if n >= perKey {
		r.scansLeft = sh.unlaned()
		return false
	}
	// After this admission the key has n+1.
	r.headroom = perKey - max(most, n+1)
	if r.headroom < fullCountPays {
		r.scansLeft = sh.unlaned()
	}
	return true
}

// countUnlaned counts every key's events waiting in sh's inbox and inline
// batch, and returns the largest count and key's; sh.mu is held.
func (sh *shard[K, E]) countUnlaned(key K) (most, n int) {
	r := &sh.room
	if r.counts == nil {
		r.counts = make(map[K]int)
	}
	sh.eachUnlaned(func(k K, _ int64) {
		c := r.counts[k] + 1
		r.counts[k] = c
		most = max(most, c)
	})
	n = r.counts[key]
	clear(r.counts)
	return most, n
}

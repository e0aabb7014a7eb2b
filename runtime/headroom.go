package runtime

// The per-key limit of keys without a lane. Such a key's count is not kept
// anywhere (see shard): it is its events among the shard's inbox and inline
// batch, which admission counts only once the shard holds PerKey events
// without a lane, when one key might have them all. A count is a scan of
// them, and in a backlog that stays full (a handler slower than the
// submitter, a per-key limit well below the total) every submission to the
// shard scanned it: in BenchmarkPerKeyLimit/work the default PerKey of
// 1,000 cost 1.36-1.38x a limit equal to the total. So a scan counts every
// key at once, and what it finds is kept as headroom: how many more events
// the shard can accept before any key could reach the limit (1.11-1.19x).
// Events that leave only make the bound looser, and the shard's count of
// accepted events tells how much of it is used, so it needs no updating. A
// small limit still scans for the one key (PerKey 16: 1.5x).

// fullCountPays is the least headroom for which counting every key (a map
// update per event) is cheaper than scanning for one key per admission
// (an equality test per event) until the headroom is used up. A limit at
// most this large never leaves that much: its keys are scanned one by one.
const fullCountPays = 32

// perKeyHeadroom is the per-key limit's bookkeeping for a shard's keys
// without a lane; the shard's mutex guards its fields.
type perKeyHeadroom[K comparable] struct {
	// counted says a full count was made: then, when shard.accepted was
	// countedAt, no key without a lane had more than PerKey-1-spare events
	// (counting the one being admitted). Every event accepted since adds at
	// most one to a key, and events leaving only lower the counts, so while
	// no more than spare were accepted each key has fewer than PerKey and
	// admission need not look. Reading the shard's accepted count, which
	// every submission writes anyway, keeps the fast path as it was.
	counted   bool
	countedAt uint64
	spare     int
	// scansLeft is how many single-key scans admission makes before it
	// counts every key again, after a full count that found too little
	// headroom to pay for itself.
	scansLeft int
	// counts is the full count's scratch map, empty between counts.
	counts map[K]int
}

// unlanedRoom reports whether key, which has no lane, has fewer than
// perKey events waiting in sh's inbox and inline batch, so that one more may
// be admitted. Admission calls it only when the shard holds at least perKey
// such events. sh.mu is held.
func (sh *shard[K, E]) unlanedRoom(key K, perKey int) bool {
	r := &sh.headroom
	switch {
	case r.counted && r.spare >= 0 && sh.accepted-r.countedAt <= uint64(r.spare):
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
	r.counted, r.countedAt, r.spare = true, sh.accepted, perKey-1-max(most, n+1)
	if r.spare < fullCountPays {
		r.scansLeft = sh.unlaned()
	}
	return true
}

// countUnlaned counts every key's events waiting in sh's inbox and inline
// batch, and returns the largest count and key's; sh.mu is held.
func (sh *shard[K, E]) countUnlaned(key K) (most, n int) {
	r := &sh.headroom
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

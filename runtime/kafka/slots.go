package kafka

// bias is added to a slot's remaining outcomes while its record is being
// handed to the subscribers, so that outcomes reported before the hand-over
// returns never bring it to zero early.
const bias = 1 << 30

// slot is one record taken and not finished yet. Its tag (generation and
// index) travels with the event through the lanes and comes back with each
// subscriber's outcome.
type slot[K comparable, E any] struct {
	part      *partition[K, E]
	offset    int64
	gen       uint32
	remaining int32 // outcomes still expected (plus bias while handing)
	handing   bool  // bias held: not yet handed to every subscriber
	stuck     bool  // never finished in this process: parked (parks not durable), or its dead letter failed
	abandoned bool  // never handed to every subscriber: not finished
	used      bool
}

// slots is the arena of slots, indexed by tag.
type slots[K comparable, E any] struct {
	s    []slot[K, E]
	free []int32
}

func (a *slots[K, E]) alloc() (uint64, *slot[K, E]) {
	var i int32
	if n := len(a.free); n > 0 {
		i = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		a.s = append(a.s, slot[K, E]{})
		i = int32(len(a.s) - 1)
	}
	s := &a.s[i]
	gen := s.gen + 1
	*s = slot[K, E]{gen: gen, used: true}
	return uint64(gen)<<32 | uint64(i+1), s
}

// get returns the live slot of tag, or nil for a tag that is not (any
// more) in use.
func (a *slots[K, E]) get(tag uint64) *slot[K, E] {
	i := int64(tag&0xffffffff) - 1
	if i < 0 || i >= int64(len(a.s)) {
		return nil
	}
	s := &a.s[i]
	if !s.used || s.gen != uint32(tag>>32) {
		return nil
	}
	return s
}

func (a *slots[K, E]) release(tag uint64) {
	i := int32(tag&0xffffffff) - 1
	a.s[i].used, a.s[i].part = false, nil
	a.free = append(a.free, i)
}

package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// MemoryParkStore is the in-memory ParkStore: the engine's default, and a
// store for tests. Parks do not survive the process; use a durable store
// where they must. An engine counts the parks of the store it makes itself
// (Config.Parks nil) against its backlog; one passed in Config.Parks is
// treated as a store outside the process, like a durable one.
type MemoryParkStore[K comparable, E any] struct {
	// mu guards parks (and each park's fields) and seq.
	mu    sync.Mutex
	parks map[K]*memoryPark[E]
	seq   uint64
}

type memoryPark[E any] struct {
	reason  string
	since   time.Time
	seq     uint64 // order of first park, for Keys
	nextSeq uint64
	events  []ParkedEvent[E]
}

// NewMemoryParkStore returns an empty in-memory park store.
func NewMemoryParkStore[K comparable, E any]() *MemoryParkStore[K, E] {
	return &MemoryParkStore[K, E]{parks: make(map[K]*memoryPark[E])}
}

// Append implements ParkStore.
func (s *MemoryParkStore[K, E]) Append(_ context.Context, key K, reason string, events []ParkedEvent[E]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parks[key]
	if p == nil {
		if len(events) == 0 {
			return nil
		}
		s.seq++
		p = &memoryPark[E]{since: time.Now(), seq: s.seq}
		s.parks[key] = p
	}
	p.reason = reason
	for _, ev := range events {
		p.nextSeq++
		ev.Seq = p.nextSeq
		p.events = append(p.events, ev)
	}
	return nil
}

// Keys implements ParkStore.
func (s *MemoryParkStore[K, E]) Keys(context.Context) ([]ParkedKey[K], error) {
	s.mu.Lock()
	type entry struct {
		seq uint64
		key ParkedKey[K]
	}
	entries := make([]entry, 0, len(s.parks))
	for k, p := range s.parks {
		entries = append(entries, entry{p.seq, ParkedKey[K]{Key: k, Reason: p.reason, Events: len(p.events), Since: p.since}})
	}
	s.mu.Unlock()
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	keys := make([]ParkedKey[K], len(entries))
	for i, e := range entries {
		keys[i] = e.key
	}
	return keys, nil
}

// Read implements ParkStore.
func (s *MemoryParkStore[K, E]) Read(_ context.Context, key K, after uint64, limit int) ([]ParkedEvent[E], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parks[key]
	if p == nil {
		return nil, nil
	}
	// Seqs increase along the slice.
	i, _ := slices.BinarySearchFunc(p.events, after+1, func(ev ParkedEvent[E], seq uint64) int { return cmp.Compare(ev.Seq, seq) })
	events := p.events[i:]
	if limit > 0 && len(events) > limit {
		events = events[:limit]
	}
	return slices.Clone(events), nil
}

// Remove implements ParkStore.
func (s *MemoryParkStore[K, E]) Remove(_ context.Context, key K, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parks[key]
	if p == nil {
		return nil
	}
	if len(p.events) > 0 && p.events[0].Seq == seq { // a replay removes from the front
		p.events[0] = ParkedEvent[E]{}
		p.events = p.events[1:]
	} else {
		p.events = slices.DeleteFunc(p.events, func(ev ParkedEvent[E]) bool { return ev.Seq == seq })
	}
	if len(p.events) == 0 {
		delete(s.parks, key)
	}
	return nil
}

// withdraw removes key's parked events whose tag match selects and returns
// them, in order. The engine uses it on its own store (see Withdraw).
func (s *MemoryParkStore[K, E]) withdraw(key K, match func(tag uint64) bool) []ParkedEvent[E] {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parks[key]
	if p == nil {
		return nil
	}
	var gone []ParkedEvent[E]
	p.events = slices.DeleteFunc(p.events, func(ev ParkedEvent[E]) bool {
		if match(ev.Tag) {
			gone = append(gone, ev)
			return true
		}
		return false
	})
	if len(p.events) == 0 {
		delete(s.parks, key)
	}
	return gone
}

// Clear implements ParkStore.
func (s *MemoryParkStore[K, E]) Clear(_ context.Context, key K) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.parks[key]
	if p == nil {
		return 0, nil
	}
	delete(s.parks, key)
	return len(p.events), nil
}

package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// ParkedEvent is one event set aside in a key's park.
type ParkedEvent[E any] struct {
	// Event is the event itself.
	Event E
	// Err is the failure that parked the key, on the event that failed; empty
	// on the events that joined the park after it.
	Err string
	// Attempts is how many times the event was tried before it was parked.
	Attempts int
	// At is when the event was parked.
	At time.Time
	// Seq identifies the event within its key's park. The store assigns it
	// in Append (increasing in park order); the engine uses it to Remove a
	// replayed event once it reaches its outcome.
	Seq uint64
	// Tag is the tag the event was submitted with (SubmitTagged), reported
	// again with its outcome after a replay or a discard. The memory store
	// keeps it; a durable store may give 0 back, since tags of an earlier
	// process mean nothing to the next one.
	Tag uint64
}

// ParkedKey describes one parked key.
type ParkedKey[K comparable] struct {
	// Key is the parked key.
	Key K
	// Reason says why the key was parked.
	Reason string
	// Events is the number of events in its park.
	Events int
	// Since is when the key was parked.
	Since time.Time
}

// ParkStore keeps parked events, in order per key. The engine calls it for
// one key from one goroutine at a time, and for different keys from many, so
// implementations must be safe for concurrent use. Durable implementations
// live in sub-packages. Without one (Config.Parks nil) the engine keeps its
// parks in a MemoryParkStore of its own, counted against its backlog.
type ParkStore[K comparable, E any] interface {
	// Append adds events, in order, to the end of key's park, assigning each
	// a Seq, and sets the key's reason. A key with a park is parked until its
	// park is empty. With no events, Append only updates the reason of a
	// parked key.
	Append(ctx context.Context, key K, reason string, events []ParkedEvent[E]) error
	// Keys lists the parked keys, oldest park first.
	Keys(ctx context.Context) ([]ParkedKey[K], error)
	// Read returns, in order, up to limit of key's parked events whose Seq
	// is above after (none for a key that is not parked). Read(ctx, key, 0,
	// n) starts at the beginning; the next page starts after the last Seq
	// returned. A limit below 1 means no limit. ReadPark reads a whole park.
	Read(ctx context.Context, key K, after uint64, limit int) ([]ParkedEvent[E], error)
	// Remove deletes the event seq from key's park; removing an event that
	// is not there is not an error. When none remain the key is no longer
	// parked.
	Remove(ctx context.Context, key K, seq uint64) error
	// Clear deletes key's whole park and returns how many events it held.
	Clear(ctx context.Context, key K) (int, error)
}

// MemoryParkStore is the in-memory ParkStore: the engine's default, and a
// store for tests. Parks do not survive the process; use a durable store
// where they must. An engine counts the parks of the store it makes itself
// (Config.Parks nil) against its backlog; one passed in Config.Parks is
// treated as a store outside the process, like a durable one.
type MemoryParkStore[K comparable, E any] struct {
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

// ReadPark returns the whole of key's park in store, in order, read a page
// at a time.
func ReadPark[K comparable, E any](ctx context.Context, store ParkStore[K, E], key K) ([]ParkedEvent[E], error) {
	var all []ParkedEvent[E]
	for after := uint64(0); ; {
		page, err := store.Read(ctx, key, after, readParkPage)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < readParkPage {
			return all, nil
		}
		after = page[len(page)-1].Seq
	}
}

// readParkPage is the page size of ReadPark.
const readParkPage = 1000

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

// DeadLetterEvent is an event handed to a DeadLetterSink.
type DeadLetterEvent[K comparable, E any] struct {
	// Key is the event's key.
	Key K
	// Event is the event that failed.
	Event E
	// Err is its last failure.
	Err error
	// Attempts is how many times it was tried.
	Attempts int
}

// DeadLetterSink receives events under the DeadLetter exhaustion policy. It
// is called from the key's lane, so it sees a key's dead letters in order.
// An error from it parks the event instead, so nothing is lost.
type DeadLetterSink[K comparable, E any] func(ctx context.Context, dl DeadLetterEvent[K, E]) error

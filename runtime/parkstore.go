package runtime

import (
	"context"
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

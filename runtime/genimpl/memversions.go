package genimpl

import (
	"context"

	"github.com/ordergen/ordergen/runtime/internal/versions"
)

// memoryVersions is the version store of a subscriber given none: the
// runtime's in-memory table (what runtime.MemoryVersionStore keeps), which
// the guards also use directly. A guard reads a key's entry with its
// version (one hash of the key) and, after the handler, sets the next
// version on that entry, without finding the key again and without a lock.
type memoryVersions[K comparable] struct{ t *versions.Table[K] }

func (m memoryVersions[K]) Version(_ context.Context, key K) (uint64, error) {
	return m.t.Get(key), nil
}

func (m memoryVersions[K]) CompareAndSet(_ context.Context, key K, old, next uint64) (bool, error) {
	return m.t.CompareAndSet(key, old, next), nil
}

// storedVersion is a key's version as a guard read it, and, from the
// subscriber's own in-memory store, the key's entry (nil for a key without
// one, and for any other store).
type storedVersion[K comparable] struct {
	v uint64
	e *versions.Entry[K]
}

// readVersion returns key's stored version.
func (s *subscriber[K, E, B]) readVersion(ctx context.Context, key K) (storedVersion[K], error) {
	if s.mem != nil {
		e, v := s.mem.Lookup(key)
		return storedVersion[K]{v: v, e: e}, nil
	}
	v, err := s.versions.Version(ctx, key)
	if err != nil {
		return storedVersion[K]{}, s.en.errorf(key, "read version: %w", err)
	}
	return storedVersion[K]{v: v}, nil
}

// setVersion stores version as the last applied version of key, if stored
// is still stored.
func (s *subscriber[K, E, B]) setVersion(ctx context.Context, key K, stored storedVersion[K], version uint64) error {
	var ok bool
	switch {
	case stored.e != nil:
		ok = stored.e.CompareAndSet(stored.v, version)
	case s.mem != nil:
		ok = s.mem.CompareAndSet(key, stored.v, version)
	default:
		var err error
		if ok, err = s.versions.CompareAndSet(ctx, key, stored.v, version); err != nil {
			return s.en.errorf(key, "store version %d: %w", version, err)
		}
	}
	if !ok {
		return s.en.errorf(key, "version moved from %d by another writer", stored.v)
	}
	return nil
}

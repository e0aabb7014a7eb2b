package transport

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// FailedKeys records the keys whose send failed since their Resume, for a
// Writer whose sends go out on a connection or channel it may replace. An
// OrderedSink pauses a key only once the failure's answer reaches it; a
// later send of the key that it let through before then must not go out
// on the next connection ahead of the failed one. So the writer records
// each failure (Fail) before it opens another connection, checks the key
// (Err) once more when the send holds the connection it goes out on, and
// lets the key go on Resume (a ResumingWriter). The zero value is ready;
// while no key failed, Err takes no lock.
type FailedKeys[K comparable] struct {
	n  atomic.Int64
	mu sync.Mutex
	m  map[K]error
}

// Err returns an error wrapping the failure that stops key's sends, or nil.
func (f *FailedKeys[K]) Err(key K) error {
	if f.n.Load() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.m[key]; err != nil {
		return fmt.Errorf("an earlier send of key %v failed (%w): its later sends fail until Resume, or they would overtake it", key, err)
	}
	return nil
}

// Fail records that a send of key failed with err, unless one is recorded.
func (f *FailedKeys[K]) Fail(key K, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[K]error{}
	}
	if _, ok := f.m[key]; !ok {
		f.m[key] = err
		f.n.Add(1)
	}
}

// Resume forgets key's failure.
func (f *FailedKeys[K]) Resume(key K) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.m[key]; ok {
		delete(f.m, key)
		f.n.Add(-1)
	}
}

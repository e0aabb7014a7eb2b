package runtime

import "time"

// The operator's reads of one key and of the oldest event, for a console's
// key page and its last-hour charts. They take the locks of the shards
// they read, briefly, like Stats: they are meant for people and samplers,
// not for the hot path.

// KeyStatus is what an engine knows of one key now, as KeyStatus reports
// it.
type KeyStatus[E any] struct {
	// Pending is the key's number of accepted events without an outcome:
	// queued, running, waiting to retry, held.
	Pending int
	// OldestAge is the age of its oldest pending event (zero when none is
	// pending).
	OldestAge time.Duration
	// Parked tells whether the key is parked in this engine.
	Parked bool
	// Running tells whether a handler attempt of the key is in progress.
	// When the engine gives attempts a context of their own (Config.Timeout
	// or OnOutcome set), Event is its event (of a batch, the first, and
	// Batch how many it covers), Attempt its number (from 1), Started when
	// it began (to within the engine's clock tick), and Ended why its
	// context ended while its handler has not returned (nil: it did not;
	// context.DeadlineExceeded; an operator's cause); otherwise only
	// Running is known, and Attempt is 0.
	Running bool
	Event   E
	Attempt int
	Started time.Time
	Batch   int
	Ended   error
}

// KeyStatus returns what the engine knows of key now: its pending events,
// the age of the oldest, whether it is parked, and the attempt of its
// handler in progress. It looks at the key's shard only.
func (e *Engine[K, E]) KeyStatus(key K) KeyStatus[E] {
	sh := e.shardFor(key)
	now := e.now()
	var ks KeyStatus[E]
	oldest, found := int64(0), false
	consider := func(at int64) {
		if !found || at < oldest {
			oldest, found = at, true
		}
	}
	sh.mu.Lock()
	l := sh.lanes[key]
	if l != nil {
		ks.Pending, ks.Parked = l.pending(), l.parked
		if at, ok := l.oldest(); ok {
			consider(at)
		}
	}
	e.running(sh, key, l, &ks)
	// A key without a lane waits in the inline batch or the inbox.
	sh.eachUnlaned(func(k K, at int64) {
		if k == key {
			ks.Pending++
			consider(at)
		}
	})
	sh.mu.Unlock()
	if found {
		ks.OldestAge = time.Duration(now - oldest)
	}
	return ks
}

// OldestAge returns the age of the oldest pending event of any key, zero
// when none is pending. Like TopBacklog, it visits every lane.
func (e *Engine[K, E]) OldestAge() time.Duration {
	now := e.now()
	oldest, found := int64(0), false
	consider := func(at int64) {
		if !found || at < oldest {
			oldest, found = at, true
		}
	}
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		for _, l := range sh.lanes {
			if at, ok := l.oldest(); ok {
				consider(at)
			}
		}
		sh.eachUnlaned(func(_ K, at int64) { consider(at) })
		sh.mu.Unlock()
	}
	if !found {
		return 0
	}
	return time.Duration(now - oldest)
}

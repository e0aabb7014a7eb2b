package runtime

import "time"

// LiveWorkers reports how many of e's worker goroutines are running; tests
// use it to check that Close stops every one.
func LiveWorkers[K comparable, E any](e *Engine[K, E]) int {
	e.rq.mu.Lock()
	defer e.rq.mu.Unlock()
	return e.rq.workers - int(e.exited.Load())
}

// LaneBudget is the events a worker handles in one turn of a key.
const LaneBudget = laneBudget

// KeysInShardOf returns the candidates that share key's shard.
func KeysInShardOf[K comparable, E any](e *Engine[K, E], key K, candidates []K) []K {
	var out []K
	for _, c := range candidates {
		if e.shardFor(c) == e.shardFor(key) {
			out = append(out, c)
		}
	}
	return out
}

// TestClock is a clock that moves only when a test advances it.
type TestClock struct{ m manualClock }

// UseTestClock makes the engine built from cfg run on c.
func UseTestClock[K comparable, E any](cfg *Config[K, E], c *TestClock) { cfg.clock = &c.m }

// Advance moves c by d: every watchdog tick and timer that falls due runs,
// in time order, in the caller's goroutine.
func (c *TestClock) Advance(d time.Duration) { c.m.advance(d) }

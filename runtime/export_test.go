package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// LiveWorkers reports how many of e's worker goroutines are running; tests
// use it to check that Close stops every one.
func LiveWorkers[K comparable, E any](e *Engine[K, E]) int {
	e.rq.mu.Lock()
	defer e.rq.mu.Unlock()
	return e.rq.workers - int(e.exited.Load())
}

// LaneBudget is the events a worker handles in one turn of a key.
const LaneBudget = laneBudget

// ContendedTicks is how many ticks without progress the watchdog lets an
// inline batch have while goroutines wait for a processor.
const ContendedTicks = contendedTicks

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

// OnPick makes fn run whenever a worker takes the task of key's shard (its
// inbox, which holds key's event when key has no lane), under the run
// queue's lock: at the moment the scheduler gives key's event a worker,
// whatever the CPU then lets that worker do.
func OnPick[K comparable, E any](e *Engine[K, E], key K, fn func()) {
	sh := e.shardFor(key)
	e.rq.mu.Lock()
	defer e.rq.mu.Unlock()
	e.rq.onPick = func(t task[K, E]) {
		if t.s == sh {
			fn()
		}
	}
}

// RoomTaken returns the room taken in e's total backlog: the events
// accepted without an outcome, those parked in e's memory, and what durable
// replays hold. It reads one atomic: an OnOutcome function may call it.
func RoomTaken[K comparable, E any](e *Engine[K, E]) int64 { return e.load.Load() }

// TestClock is a clock that moves only when a test advances it.
type TestClock struct{ m manualClock }

// UseTestClock makes the engine built from cfg run on c.
func UseTestClock[K comparable, E any](cfg *Config[K, E], c *TestClock) { cfg.clock = &c.m }

// Contend makes the engines on c see, at their ticks, goroutines waiting
// for a processor (on), or none (off, the default).
func (c *TestClock) Contend(on bool) { c.m.contended.Store(on) }

// HasBatch reports whether key's shard has an inline batch that a worker
// runs (not spilled nor finished).
func HasBatch[K comparable, E any](e *Engine[K, E], key K) bool {
	sh := e.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.cur != nil
}

// Advance moves c by d: every watchdog tick and timer that falls due runs,
// in time order, in the caller's goroutine.
func (c *TestClock) Advance(d time.Duration) { c.m.advance(d) }

// Dump describes e's scheduling state: every shard that is busy or holds
// lanes, and the run queue. The stress test prints it when a schedule hangs.
func Dump[K comparable, E any](e *Engine[K, E]) string {
	var b strings.Builder
	e.rq.mu.Lock()
	fmt.Fprintf(&b, "run queue: %d ready, %d yielded, %d workers, %d asleep, draining %v\n",
		e.rq.ready.len(), e.rq.yielded.len(), e.rq.workers, e.rq.sleepy, e.rq.draining)
	e.rq.mu.Unlock()
	fmt.Fprintf(&b, "load %d, parked %d, held %d, room waited for %v\n", e.load.Load(), e.parked.Load(), e.held.Load(), e.room.Waiting())
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		if sh.busy != 0 || len(sh.lanes) > 0 || len(sh.inbox) > 0 || sh.cur != nil {
			fmt.Fprintf(&b, "shard %d: busy %d, queued %v, inbox %d, batch %v\n", i, sh.busy, sh.tasked, len(sh.inbox), sh.cur != nil)
			for k, l := range sh.lanes {
				fmt.Fprintf(&b, "  lane %v: state %d, queued %d, inflight %d, held %d, parked %v, stored %d, replay %v, req %v, withdraws %d, inline %v\n",
					k, l.state, l.q.len(), l.inflight, len(l.held), l.parked, l.stored, l.replay != nil, l.req != nil, len(l.withdraws), l.owned)
			}
		}
		sh.mu.Unlock()
	}
	return b.String()
}

// Lingering reports whether key's lane waits for more events of its batch
// (Config.Linger).
func Lingering[K comparable, E any](e *Engine[K, E], key K) bool {
	sh := e.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.lanes[key]
	return l != nil && l.lingering && l.state == laneWaiting
}

// HasRequest reports whether key's lane has an operator request waiting to
// be served (Replay, Discard, ParkNow).
func HasRequest[K comparable, E any](e *Engine[K, E], key K) bool {
	sh := e.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l := sh.lanes[key]
	return l != nil && l.req != nil
}

// TakenByParkNow reports whether ctx, a handler's context, is that of an
// attempt that ParkNow took: its result is nobody's, and its key's events
// may run again while it does.
func TakenByParkNow(ctx context.Context) bool {
	c, ok := ctx.(*attemptCtx)
	return ok && c.ended.Load()&attemptTaken != 0
}

// AttemptInfo describes ctx, a handler's context: its attempt's state.
func AttemptInfo(ctx context.Context) string {
	c, ok := ctx.(*attemptCtx)
	if !ok {
		return "not an attempt's context"
	}
	return fmt.Sprintf("attempt %d, ended %b", c.attempt, c.ended.Load())
}

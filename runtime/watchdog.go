package runtime

// longBatch is the remainder at which the watchdog shares a batch that
// makes progress, when workers sleep.
const longBatch = 64

// contendedTicks is how many ticks in a row an inline batch may make no
// progress while goroutines wait for a processor before the watchdog spills
// it anyway: its worker may be waiting for its turn on a CPU (the Go
// scheduler gives a goroutine that does not block 10ms at a time), and
// spilling a batch moves its events into lanes, which cost more per event
// on a CPU that is busy already.
const contendedTicks = 20

// watch runs on each clock tick: it ends the contexts of attempts past
// their deadline (expireAttempts), and spills the remainder of every inline
// batch that made no progress since the last tick, or that is long while
// workers sleep. The lanes it makes go to the run queue, which wakes a
// sleeping worker or starts one while fewer than MaxActive run.
//
// While goroutines wait for a processor (clock.contended: the process has
// more work than CPUs), a batch without progress may only be waiting for
// its worker's turn, and sharing a long one with sleeping workers gains no
// CPU: then a batch is spilled only once it made no progress for
// contendedTicks ticks in a row, and a long one only when a key holds much
// of it (a hot key: moved into its lane, it no longer holds up the batch's
// other keys). A handler that blocks holds its batch-mates back by at most
// contendedTicks.
func (e *Engine[K, E]) watch() {
	if e.cfg.Timeout > 0 {
		e.expireAttempts()
	}
	if !e.inline {
		e.watchWorkers()
		return
	}
	e.rq.wakeWaiting()
	sleepers := e.rq.sleepers()
	contended := e.clock.contended.Load()
	var ready []*lane[K, E]
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		b := sh.cur
		if b == nil {
			sh.mu.Unlock()
			continue
		}
		p := b.pos.Load()
		if p == b.seen {
			b.still++
		} else {
			b.still = 0
		}
		stuck := b.still > 0 && (!contended || b.still >= contendedTicks)
		// A long batch is shared with sleeping workers only when what is
		// left of it takes more than two ticks at the pace of the last one:
		// a batch of fast events ends sooner than lanes for them would
		// start, and lanes cost more per event. While goroutines wait for
		// a CPU, sharing gains none: a long batch that makes progress is
		// then moved only when a key holds much of it (hotKeyIn), whose
		// events would hold the batch's other keys behind them.
		left, pace := int64(len(b.entries))-p-1, p-max(b.seen, -1)
		long := sleepers && left >= longBatch && left > 2*pace &&
			(!contended || pace > 0 && hotKeyIn(b, p+1))
		b.seen = p
		if !stuck && !long {
			sh.mu.Unlock()
			continue
		}
		ready = e.spillBatch(sh, b, ready[:0])
		sh.mu.Unlock()
		e.rq.pushLanes(ready)
	}
}

// hotSamples is how many events of a batch's remainder hotKeyIn looks at.
const hotSamples = 16

// hotKeyIn reports whether one key has at least 3 of hotSamples events
// taken evenly from b's entries from index from on: a key with a sizeable
// share of them (a half: almost surely at the first look; an eighth: within
// a few ticks), while a batch of many keys with a few events each almost
// never shows one (10,000 keys: about once in 10^5 looks). sh.mu is held;
// only keys are read.
func hotKeyIn[K comparable, E any](b *inlineBatch[K, E], from int64) bool {
	rest := b.entries[from:]
	if len(rest) < hotSamples {
		return false
	}
	var keys [hotSamples]K
	n := 0
	for i := range hotSamples {
		en := &rest[i*len(rest)/hotSamples]
		if en.it.moved {
			continue
		}
		seen := 1
		for _, k := range keys[:n] {
			if k == en.key {
				seen++
			}
		}
		if seen >= 3 {
			return true
		}
		keys[n] = en.key
		n++
	}
	return false
}

// watchWorkers runs on each clock tick: a worker that started no task since
// the last tick while lanes wait in its deque is stuck in a handler, so a
// worker is woken, or started while fewer than MaxActive run, to steal them.
func (e *Engine[K, E]) watchWorkers() {
	ws := e.workerList()
	for _, w := range ws {
		runs := w.runs.Load()
		stuck := runs == w.lastRuns
		w.lastRuns = runs
		if stuck && w.local.len() > 0 {
			e.rq.startThief()
		}
	}
}

// expireAttempts ends, with DeadlineExceeded, the context of every running
// attempt whose Config.Timeout has passed. The tick runs while any worker
// works, so a deadline is met to within about a tick (see attemptctx.go).
func (e *Engine[K, E]) expireAttempts() {
	now := e.now()
	for _, w := range e.workerList() {
		w.running.expire(now)
	}
}

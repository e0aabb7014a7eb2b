package runtime

import (
	"context"
	"fmt"
	"hash/maphash"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Handler handles one event of one key. The engine calls it from its
// workers, never for two events of one key at once, and for a key's events
// in the order they were submitted. A nil return means handled; Skip and
// Hold report a guard's verdict; Permanent skips the retries; any other
// error is retried by the Retry policy. A panic counts as a failed attempt.
type Handler[K comparable, E any] func(ctx context.Context, key K, event E) error

// BatchHandler handles up to Config.BatchSize pending events of one key, in
// submission order. The batch is the unit of retry, skip and parking: an
// error fails the whole batch. A batch handler must not return Hold; the
// engine treats it as a permanent failure.
type BatchHandler[K comparable, E any] func(ctx context.Context, key K, events []E) error

// Engine dispatches events to per-key lanes: a FIFO for each key that has
// pending events, drained by at most Config.MaxActive workers and removed
// when it empties. Same key: strictly in order, one at a time. Different
// keys: in parallel. A slow, retrying or parked key delays only itself.
//
// An Engine is safe for concurrent use. Create it with New or NewBatch and
// stop it with Close.
type Engine[K comparable, E any] struct {
	cfg    Config[K, E]
	handle Handler[K, E]
	batch  BatchHandler[K, E]

	seed   maphash.Seed
	shards []shard[K, E]
	mask   uint64
	rq     runQueue[K, E]
	start  time.Time

	// base is the parent of every handler context; stop cancels it when
	// Close gives up waiting.
	base context.Context
	stop context.CancelFunc

	pending    atomic.Int64 // accepted events without an outcome
	busy       atomic.Int64 // lanes queued, running or waiting to retry
	held       atomic.Int64
	parked     atomic.Int64
	parkedKeys atomic.Int64
	restored   atomic.Uint64
	misc       counters // outcomes reached outside the workers
	closing    atomic.Bool
	aborted    atomic.Bool

	space notifier // signalled when pending events finish (Block, Timeout)
	quiet notifier // signalled when busy reaches zero (Flush, Close)

	workers sync.WaitGroup
	timers  sync.WaitGroup // armed timers and running timer callbacks
	exited  atomic.Int64   // workers that returned
	wmu     sync.Mutex
	ws      []*worker[K, E] // every worker started, for Stats

	errClosed   error
	errKeyFull  error
	errTotalAll error
}

// shard is one stripe of the key -> lane map. Keys are spread over shards by
// a seeded hash only to reduce lock contention; a shard never serialises
// the handling of its keys.
type shard[K comparable, E any] struct {
	mu     sync.Mutex
	lanes  map[K]*lane[K, E]
	free   *lane[K, E]
	nfree  int
	closed bool
	// counted under mu
	accepted  uint64
	rejected  uint64
	conflated uint64
	dropped   uint64
	_         [64]byte // keep shards on separate cache lines
}

// counters are outcome counts. Each worker has its own, so the hot path
// never shares a cache line with another worker; Stats adds them up.
type counters struct {
	handled, skipped, retried, deadLettered, dropped, discarded, replayed atomic.Uint64
	_                                                                     [64]byte
}

// New returns a started engine that calls h for each event.
func New[K comparable, E any](h Handler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil handler", ErrInvalidConfig)
	}
	return newEngine(h, nil, cfg)
}

// NewBatch returns a started engine that calls h with batches of up to
// Config.BatchSize pending events of one key.
func NewBatch[K comparable, E any](h BatchHandler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil batch handler", ErrInvalidConfig)
	}
	return newEngine(nil, h, cfg)
}

const maxFreeLanes = 256 // recycled lanes kept per shard

func newEngine[K comparable, E any](h Handler[K, E], bh BatchHandler[K, E], cfg Config[K, E]) (*Engine[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := 16
	for n < 4*goruntime.GOMAXPROCS(0) {
		n *= 2
	}
	e := &Engine[K, E]{
		cfg:    cfg,
		handle: h,
		batch:  bh,
		seed:   maphash.MakeSeed(),
		shards: make([]shard[K, E], n),
		mask:   uint64(n - 1),
		start:  time.Now(),
	}
	name := cfg.Name
	if name == "" {
		name = "engine"
	}
	e.errClosed = fmt.Errorf("%s: %w", name, ErrClosed)
	e.errKeyFull = fmt.Errorf("%s: %w: per-key limit %d reached", name, ErrBacklogFull, cfg.Backlog.PerKey)
	e.errTotalAll = fmt.Errorf("%s: %w: total limit %d reached", name, ErrBacklogFull, cfg.Backlog.Total)
	for i := range e.shards {
		e.shards[i].lanes = make(map[K]*lane[K, E])
	}
	e.base, e.stop = context.WithCancel(context.Background())
	e.rq.init(cfg.MaxActive, e.startWorker)
	if err := e.restore(); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *Engine[K, E]) shardFor(key K) *shard[K, E] {
	return &e.shards[maphash.Comparable(e.seed, key)&e.mask]
}

// now is the engine's monotonic clock, in nanoseconds since it started.
func (e *Engine[K, E]) now() int64 { return int64(time.Since(e.start)) }

// Submit hands an event of key to its lane. It returns once the event is
// accepted (the engine then owns it until its outcome) or refused: an error
// wrapping ErrClosed after Close began, ErrBacklogFull under the reject and
// timeout policies, or ctx's error while the block or timeout policies wait.
// Events submitted by one goroutine (or ordered by happens-before) for one
// key are handled in that order.
func (e *Engine[K, E]) Submit(ctx context.Context, key K, event E) error {
	return e.SubmitTagged(ctx, key, event, 0)
}

// SubmitTagged is Submit with a tag that Config.OnOutcome receives with the
// event's outcome. Transports tag each event with where it came from (a
// partition and offset) to learn when it is finished.
func (e *Engine[K, E]) SubmitTagged(ctx context.Context, key K, event E, tag uint64) error {
	sh := e.shardFor(key)
	sh.mu.Lock()
	err, full := e.enqueue(sh, key, event, tag)
	if !full {
		return err
	}
	return e.submitSlow(ctx, sh, key, event, tag)
}

// submitSlow waits for backlog room under the Block and Timeout policies.
func (e *Engine[K, E]) submitSlow(ctx context.Context, sh *shard[K, E], key K, event E, tag uint64) error {
	var deadline <-chan time.Time
	if e.cfg.Backlog.WhenFull == Timeout {
		t := time.NewTimer(e.cfg.Backlog.Wait)
		defer t.Stop()
		deadline = t.C
	}
	for {
		// Register as a waiter before looking again, so that room made
		// between the look and the wait still wakes us (see notifier).
		wake := e.space.register()
		sh.mu.Lock()
		err, full := e.enqueue(sh, key, event, tag)
		if !full {
			e.space.unregister()
			return err
		}
		select {
		case <-wake:
			e.space.unregister()
		case <-ctx.Done():
			e.space.unregister()
			e.countRejected(sh)
			return fmt.Errorf("%w while waiting for backlog room: %w", ErrBacklogFull, ctx.Err())
		case <-deadline:
			e.space.unregister()
			e.countRejected(sh)
			return fmt.Errorf("%w after waiting %v", e.fullErrFor(key), e.cfg.Backlog.Wait)
		}
	}
}

func (e *Engine[K, E]) countRejected(sh *shard[K, E]) {
	sh.mu.Lock()
	sh.rejected++
	sh.mu.Unlock()
}

func (e *Engine[K, E]) fullErrFor(key K) error {
	sh := e.shardFor(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if l := sh.lanes[key]; l != nil && l.pending() >= e.cfg.Backlog.PerKey {
		return e.errKeyFull
	}
	return e.errTotalAll
}

// enqueue does Submit's work under sh.mu and unlocks it. It reports full
// when the caller must wait for room (Block and Timeout policies).
func (e *Engine[K, E]) enqueue(sh *shard[K, E], key K, event E, tag uint64) (err error, full bool) {
	if sh.closed {
		sh.rejected++
		sh.mu.Unlock()
		return e.errClosed, false
	}
	l := sh.lanes[key]
	if l != nil && e.cfg.Conflate && l.q.len() > 0 && !l.parked {
		// The newest pending event replaces the older one; it keeps the
		// older one's acceptance time, so a key that never gets to run
		// still shows its age.
		old := l.q.back()
		e.report(key, old.tag, Conflated)
		old.ev, old.tag = event, tag
		sh.accepted++
		sh.conflated++
		sh.mu.Unlock()
		return nil, false
	}
	keyFull := l != nil && l.pending() >= e.cfg.Backlog.PerKey
	if keyFull || e.pending.Load() >= int64(e.cfg.Backlog.Total) {
		switch e.cfg.Backlog.WhenFull {
		case Block, Timeout:
			sh.mu.Unlock()
			return nil, true
		case DropNewest:
			sh.accepted++
			sh.dropped++
			e.report(key, tag, Dropped)
			sh.mu.Unlock()
			return nil, false
		case DropOldest:
			sh.accepted++
			if l == nil || l.q.len() == 0 {
				sh.dropped++ // nothing of this key to give up: drop the new one
				e.report(key, tag, Dropped)
				sh.mu.Unlock()
				return nil, false
			}
			e.report(key, l.q.popFront().tag, Dropped)
			sh.dropped++
			l.q.pushBack(item[E]{ev: event, at: e.now(), tag: tag})
			sh.mu.Unlock()
			return nil, false
		default:
			sh.rejected++
			sh.mu.Unlock()
			if keyFull {
				return e.errKeyFull, false
			}
			return e.errTotalAll, false
		}
	}
	if l == nil {
		l = sh.newLane(key)
		sh.lanes[key] = l
	}
	l.q.pushBack(item[E]{ev: event, at: e.now(), tag: tag})
	sh.accepted++
	e.pending.Add(1)
	schedule := e.schedule(l)
	sh.mu.Unlock()
	if schedule {
		e.rq.push(l)
	}
	return nil, false
}

// newLane returns a recycled or new lane for key; sh.mu is held.
func (sh *shard[K, E]) newLane(key K) *lane[K, E] {
	l := sh.free
	if l != nil {
		sh.free = l.next
		sh.nfree--
		l.next = nil
	} else {
		l = &lane[K, E]{shard: sh}
	}
	l.key = key
	return l
}

// removeLane deletes an empty lane from the map and recycles it; sh.mu is held.
func (sh *shard[K, E]) removeLane(l *lane[K, E]) {
	delete(sh.lanes, l.key)
	var zero K
	l.key = zero
	l.q.reset(64)
	l.held = nil
	l.reason = ""
	l.state = laneIdle
	if sh.nfree < maxFreeLanes {
		l.next = sh.free
		sh.free = l
		sh.nfree++
	}
}

// schedule puts an idle lane on the run queue; sh.mu is held and the caller
// pushes the lane after unlocking when it returns true.
func (e *Engine[K, E]) schedule(l *lane[K, E]) bool {
	if l.state != laneIdle {
		return false
	}
	l.state = laneQueued
	e.busy.Add(1)
	return true
}

// report tells Config.OnOutcome the outcome of an event, if it is set.
func (e *Engine[K, E]) report(key K, tag uint64, o Outcome) {
	if e.cfg.OnOutcome != nil {
		e.cfg.OnOutcome(key, tag, o)
	}
}

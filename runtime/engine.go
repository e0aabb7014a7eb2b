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
	// inline: lane-less events run inline from the inbox (see inline.go);
	// not with a batch handler or conflation, which need lanes.
	inline bool

	seed   maphash.Seed
	shards []shard[K, E]
	mask   uint64
	rq     runQueue[K, E]
	clock  clock

	// base is the parent of every handler context; stop cancels it when
	// Close gives up waiting.
	base context.Context
	stop context.CancelFunc

	// pending counts accepted events without an outcome, minus what the
	// workers finished and have not yet subtracted (worker.unflushed): the
	// workers subtract in batches so that the submitting goroutine owns this
	// cache line. pendingNow gives the exact figure.
	pending    atomic.Int64
	held       atomic.Int64
	parked     atomic.Int64
	parkedKeys atomic.Int64
	restored   atomic.Uint64
	// parkedTotal counts every event that reached the park (metrics).
	parkedTotal atomic.Uint64
	metrics     *metrics
	// rate limits of operator logs
	rejectLog, timeoutLog rateLimit
	closing               atomic.Bool
	aborted               atomic.Bool

	space notifier // signalled when pending events finish (Block, Timeout)
	quiet notifier // signalled when a shard stops being busy (Flush, Close)

	workers sync.WaitGroup
	timers  sync.WaitGroup // armed timers and running timer callbacks
	exited  atomic.Int64   // workers that returned
	wmu     sync.Mutex
	ws      []*worker[K, E] // every worker started, for Stats and pendingNow
	// flushSeqs is readPending's scratch space, guarded by wmu.
	flushSeqs []uint64

	errClosed   error
	errKeyFull  error
	errTotalAll error
}

// shard is one stripe of the engine's keys. Keys are spread over shards by a
// seeded hash only to spread lock contention: a shard never serialises the
// handling of its keys, which run on their own lanes.
//
// An event whose key has a lane goes straight to it. An event whose key has
// none goes to the shard's inbox, which a worker later dispatches into lanes
// in one go. So the submitting goroutine never builds lanes for keys that are
// not already busy, and lanes are created (and removed) by the workers, in
// batches. For each key, either it has a lane and none of its events are in
// the inbox, or it has no lane: dispatch moves the whole inbox at once.
type shard[K comparable, E any] struct {
	mu      sync.Mutex
	lanes   map[K]*lane[K, E]
	inbox   []entry[K, E]
	reserve []entry[K, E] // the other inbox buffer (see dispatchInline)
	queued  bool          // the inbox is in the run queue (or being dispatched)
	// cur is the inbox being run inline by a worker, nil when none is.
	cur *inlineBatch[K, E]
	// busy counts the shard's lanes that are queued, running or waiting to
	// retry, plus one while the inbox is queued. Flush waits for zero.
	busy   int
	closed bool
	free   *lane[K, E]
	nfree  int
	segs   segPool[E]
	spare  *sync.Pool // lanes beyond the shard's free list
	// counted under mu
	accepted  uint64
	rejected  uint64
	conflated uint64
	dropped   uint64
	_         [64]byte // keep shards on separate cache lines
}

// entry is an event in a shard's inbox.
type entry[K comparable, E any] struct {
	key K
	it  item[E]
	// moved marks an event of an inline batch moved into its key's lane.
	moved bool
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
		inline: h != nil && !cfg.Conflate,
		seed:   maphash.MakeSeed(),
		shards: make([]shard[K, E], n),
		mask:   uint64(n - 1),
	}
	name := cfg.Name
	if name == "" {
		name = "engine"
	}
	e.errClosed = fmt.Errorf("%s: %w", name, ErrClosed)
	e.errKeyFull = fmt.Errorf("%s: %w: per-key limit %d reached", name, ErrBacklogFull, cfg.Backlog.PerKey)
	e.errTotalAll = fmt.Errorf("%s: %w: total limit %d reached", name, ErrBacklogFull, cfg.Backlog.Total)
	segs, lanes := new(sync.Pool), new(sync.Pool)
	for i := range e.shards {
		sh := &e.shards[i]
		sh.lanes = make(map[K]*lane[K, E])
		sh.segs.shared = segs
		sh.spare = lanes
	}
	e.base, e.stop = context.WithCancel(context.Background())
	e.clock.onTick = e.watch
	e.clock.start()
	e.rq.init(cfg.MaxActive, e.startWorker, &e.clock)
	if err := e.restore(); err != nil {
		e.clock.close()
		e.stop()
		return nil, err
	}
	if err := e.startMetrics(); err != nil {
		e.clock.close()
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *Engine[K, E]) shardFor(key K) *shard[K, E] {
	return &e.shards[maphash.Comparable(e.seed, key)&e.mask]
}

// now is the engine's precise monotonic clock, in nanoseconds since it
// started.
func (e *Engine[K, E]) now() int64 { return e.clock.precise() }

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
			err := e.fullErrFor(key)
			e.logRejected(key, err == e.errKeyFull)
			return fmt.Errorf("%w after waiting %v", err, e.cfg.Backlog.Wait)
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
	if sh.keyPending(key) >= e.cfg.Backlog.PerKey {
		return e.errKeyFull
	}
	return e.errTotalAll
}

// keyPending returns key's pending events; sh.mu is held.
func (sh *shard[K, E]) keyPending(key K) int {
	if l := sh.lanes[key]; l != nil {
		return l.pending()
	}
	n := 0
	for i := range sh.inbox {
		if sh.inbox[i].key == key {
			n++
		}
	}
	if b := sh.cur; b != nil {
		for i := max(b.pos.Load(), 0); i < int64(len(b.entries)); i++ {
			if en := &b.entries[i]; !en.moved && en.key == key {
				n++
			}
		}
	}
	return n
}

// unlanedEntries returns the events waiting in sh's inline batch (from the
// one running) and inbox, in order; sh.mu is held.
func (sh *shard[K, E]) unlanedEntries() []entry[K, E] {
	var out []entry[K, E]
	if b := sh.cur; b != nil {
		for i := max(b.pos.Load(), 0); i < int64(len(b.entries)); i++ {
			if en := b.entries[i]; !en.moved {
				out = append(out, en)
			}
		}
	}
	return append(out, sh.inbox...)
}

// unlaned is the number of events waiting in sh's inbox or inline batch;
// sh.mu is held.
func (sh *shard[K, E]) unlaned() int {
	n := len(sh.inbox)
	if sh.cur != nil {
		n += len(sh.cur.entries)
	}
	return n
}

// enqueue does Submit's work under sh.mu and unlocks it. It reports full
// when the caller must wait for room (Block and Timeout policies).
func (e *Engine[K, E]) enqueue(sh *shard[K, E], key K, event E, tag uint64) (err error, full bool) {
	if sh.closed {
		sh.rejected++
		sh.mu.Unlock()
		return e.errClosed, false
	}
	var l *lane[K, E]
	if len(sh.lanes) > 0 { // most shards have no lane most of the time
		l = sh.lanes[key]
	}
	if l != nil && e.cfg.Conflate && l.conflatable() {
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
	if e.full(sh, l, key) {
		return e.whenFull(sh, l, key, event, tag)
	}
	it := item[E]{ev: event, at: e.clock.coarse(), tag: tag}
	sh.accepted++
	e.pending.Add(1)
	if l != nil {
		l.q.pushBack(it)
		push := e.schedule(l)
		sh.mu.Unlock()
		if push {
			e.rq.push(task[K, E]{l: l})
		}
		return nil, false
	}
	sh.inbox = append(sh.inbox, entry[K, E]{key: key, it: it})
	push := !sh.queued
	if push {
		sh.queued = true
		sh.busy++
	}
	sh.mu.Unlock()
	if push {
		e.rq.push(task[K, E]{s: sh})
	}
	return nil, false
}

// full reports whether key's or the engine's backlog is at its limit; sh.mu
// is held. The inbox is only counted when it could matter.
func (e *Engine[K, E]) full(sh *shard[K, E], l *lane[K, E], key K) bool {
	perKey := e.cfg.Backlog.PerKey
	switch {
	case l != nil && l.pending() >= perKey:
		return true
	case l == nil && sh.unlaned() >= perKey && sh.keyPending(key) >= perKey:
		return true
	}
	total := int64(e.cfg.Backlog.Total)
	return e.pending.Load() >= total && e.pendingNow() >= total
}

// whenFull applies the backlog policy to an event that found no room; sh.mu
// is held and whenFull unlocks it.
func (e *Engine[K, E]) whenFull(sh *shard[K, E], l *lane[K, E], key K, event E, tag uint64) (err error, full bool) {
	switch e.cfg.Backlog.WhenFull {
	case Block, Timeout:
		sh.mu.Unlock()
		return nil, true
	case DropNewest:
		sh.accepted++
		sh.dropped++
		e.report(key, tag, Dropped)
	case DropOldest:
		sh.accepted++
		sh.dropped++
		it := item[E]{ev: event, at: e.clock.coarse(), tag: tag}
		switch {
		case l != nil && l.q.len() > 0:
			e.report(key, l.q.popFront().tag, Dropped)
			l.q.pushBack(it)
		case l == nil && e.dropOldestInInbox(sh, key, it):
		default:
			e.report(key, tag, Dropped) // nothing of this key to give up: drop the new one
		}
	default:
		sh.rejected++
		keyFull := (l != nil && l.pending() >= e.cfg.Backlog.PerKey) || (l == nil && sh.keyPending(key) >= e.cfg.Backlog.PerKey)
		sh.mu.Unlock()
		e.logRejected(key, keyFull)
		if keyFull {
			return e.errKeyFull, false
		}
		return e.errTotalAll, false
	}
	sh.mu.Unlock()
	return nil, false
}

// dropOldestInInbox drops key's oldest event from the inbox and appends it
// instead; sh.mu is held. It reports false when key has none there.
func (e *Engine[K, E]) dropOldestInInbox(sh *shard[K, E], key K, it item[E]) bool {
	for i := range sh.inbox {
		if sh.inbox[i].key == key {
			e.report(key, sh.inbox[i].it.tag, Dropped)
			sh.inbox = append(sh.inbox[:i], sh.inbox[i+1:]...)
			sh.inbox = append(sh.inbox, entry[K, E]{key: key, it: it})
			return true
		}
	}
	return false
}

// newLane returns a recycled or new lane for key; sh.mu is held.
func (sh *shard[K, E]) newLane(key K) *lane[K, E] {
	l := sh.free
	if l != nil {
		sh.free = l.next
		sh.nfree--
		l.next = nil
	} else if spare, ok := sh.spare.Get().(*lane[K, E]); ok {
		l = spare
	} else {
		l = &lane[K, E]{}
	}
	l.shard = sh
	l.q.pool = &sh.segs
	l.key = key
	return l
}

// removeLane deletes an empty lane from the map and recycles it; sh.mu is held.
func (sh *shard[K, E]) removeLane(l *lane[K, E]) {
	delete(sh.lanes, l.key)
	var zero K
	l.key = zero
	l.q.release()
	l.inline = false
	l.held = nil
	l.reason = ""
	l.state = laneIdle
	if sh.nfree < maxFreeLanes {
		l.next = sh.free
		sh.free = l
		sh.nfree++
		return
	}
	sh.spare.Put(l) // the engine's own pool: its timers stay bound to this engine
}

// schedule marks an idle lane queued and counts it busy; sh.mu is held and
// the caller pushes the lane after unlocking when it returns true.
func (e *Engine[K, E]) schedule(l *lane[K, E]) bool {
	if l.state != laneIdle {
		return false
	}
	l.state = laneQueued
	l.shard.busy++
	return true
}

// idle records that one of sh's busy lanes or its inbox stopped being busy,
// and wakes Flush and Close when the shard is quiet; sh.mu is held.
func (e *Engine[K, E]) idle(sh *shard[K, E]) {
	sh.busy--
	if sh.busy == 0 {
		e.quiet.broadcastIfWaiting()
	}
}

// report tells Config.OnOutcome the outcome of an event, if it is set.
func (e *Engine[K, E]) report(key K, tag uint64, o Outcome) {
	if e.cfg.OnOutcome != nil {
		e.cfg.OnOutcome(key, tag, o)
	}
}

// logRejected tells the operator about a submission refused for a full
// backlog, at most once a second, with how many were refused meanwhile.
func (e *Engine[K, E]) logRejected(key K, keyFull bool) {
	if ok, n := e.rejectLog.allow(e.now()); ok {
		limit, which := e.cfg.Backlog.Total, "total"
		if keyFull {
			limit, which = e.cfg.Backlog.PerKey, "per-key"
		}
		e.cfg.Logger.Warn("ordergen: backlog full, events refused", "engine", e.cfg.Name, "key", key,
			"limit", which, "size", limit, "refused", n)
	}
}

// rateLimit lets one log line through per second and counts the others.
type rateLimit struct {
	mu      sync.Mutex
	last    int64
	dropped int64
}

// allow reports whether to log now, and how many events the line stands for.
func (r *rateLimit) allow(now int64) (bool, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped++
	if r.last != 0 && now-r.last < int64(time.Second) {
		return false, 0
	}
	n := r.dropped
	r.last, r.dropped = now, 0
	return true, n
}

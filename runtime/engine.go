package runtime

import (
	"context"
	"fmt"
	"hash/maphash"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime/internal/notify"
)

// Handler handles one event of one key. The engine calls it from its
// workers, never for two events of one key at once, and for a key's events
// in the order they were submitted. A nil return means handled; Skip and
// Hold report a guard's verdict; Permanent skips the retries; any other
// error is retried by the Retry policy. A panic counts as a failed attempt.
type Handler[K comparable, E any] func(ctx context.Context, key K, event E) error

// BatchHandler handles up to Config.BatchSize pending events of one key, in
// submission order (after waiting up to Config.Linger for more). The batch
// is the unit of retry, skip and parking: an error fails the whole batch,
// and Skip skips it whole. A guard that decides its events one by one
// returns Verdicts: then each is handled, skipped or held on its own, and
// the undecided rest comes in the next batch. A batch handler must not
// return Hold itself; the engine treats it as a permanent failure.
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
	// not with a batch handler (its inbox moves into lanes) or conflation
	// (its keys get a lane at the door).
	inline bool

	seed   maphash.Seed
	shards []shard[K, E]
	mask   uint64
	rq     runQueue[K, E]
	clock  clock

	// base is the parent of every handler context; it carries the engine
	// (see fromOwnHandler), and stop cancels it when Close gives up waiting.
	base context.Context
	stop context.CancelFunc

	// load counts the events held against Backlog.Total: every accepted
	// event without an outcome, plus the events parked in memory. Room is
	// reserved in it (reserve) before an event is accepted, and released
	// (release) when an event leaves, so it never passes the total.
	load atomic.Int64
	// replayRoom is the room durable replays hold in load and have not
	// filled with loaded events (replayState.room): not pending events.
	replayRoom atomic.Int64
	// memParks is the engine's own park store when Config.Parks is nil. Its
	// events count against the backlog limits (parksCount).
	memParks   *MemoryParkStore[K, E]
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

	room  notify.Notifier // signalled when room is released (Block, Timeout)
	quiet notify.Notifier // signalled when a shard stops being busy (Flush, Close)

	workers sync.WaitGroup
	timers  sync.WaitGroup // armed timers and running timer callbacks
	exited  atomic.Int64   // workers that returned
	wmu     sync.Mutex
	ws      []*worker[K, E] // every worker started, for Stats

	errClosed   error
	errKeyFull  error
	errTotalAll error
}

// shard is one stripe of the engine's keys. Keys are spread over shards by a
// seeded hash only to spread lock contention: a shard never serialises the
// handling of its keys, which run on their own lanes or inline.
//
// The shard owns the per-key backlog count of its keys, under its lock: a
// key with a lane counts what its lane holds (lane.count); a key without
// one counts its events in the inbox and in the unfinished part of the
// inline batch (unlanedCount). Nothing else keeps a per-key count. For each
// key, either it has a lane and none of its events are in the inbox or the
// batch, or it has no lane: whoever makes a lane moves the key's events
// into it.
type shard[K comparable, E any] struct {
	mu      sync.Mutex
	lanes   map[K]*lane[K, E]
	inbox   []entry[K, E]
	reserve []entry[K, E] // the other inbox buffer (see dispatchInline)
	queued  bool          // the inbox is in the run queue (or being run)
	// cur is the inbox being run inline by a worker, nil when none is.
	cur *inlineBatch[K, E]
	// ready holds lanes a submitter made ready in an engine whose keys run
	// in lanes: the worker that takes the shard's task takes them too.
	ready []*lane[K, E]
	// busy counts the shard's lanes that are queued, running or waiting for
	// their timer, plus one while the inbox is queued. Flush waits for zero.
	busy   int
	closed bool
	free   *lane[K, E]
	nfree  int
	segs   segPool[E]
	// spare holds the shard's lanes beyond its free list. A lane stays in
	// its shard for life: its timers' functions read l.shard to lock it.
	spare *sync.Pool
	// counted under mu
	accepted  uint64
	rejected  uint64
	conflated uint64
	dropped   uint64
	withdrawn uint64
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
	handled, skipped, retried, deadLettered, dropped, discarded, replayed, resynced atomic.Uint64
	_                                                                               [64]byte
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

// engineKey is the context key under which handler contexts carry their
// engine.
type engineKey struct{}

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
	if e.cfg.Parks == nil {
		e.memParks = NewMemoryParkStore[K, E]()
		e.cfg.Parks = e.memParks
	}
	name := cfg.Name
	if name == "" {
		name = "engine"
	}
	e.errClosed = fmt.Errorf("%s: %w", name, ErrClosed)
	e.errKeyFull = fmt.Errorf("%s: %w: per-key limit %d reached", name, ErrBacklogFull, cfg.Backlog.PerKey)
	e.errTotalAll = fmt.Errorf("%s: %w: total limit %d reached", name, ErrBacklogFull, cfg.Backlog.Total)
	segs := new(sync.Pool)
	for i := range e.shards {
		sh := &e.shards[i]
		sh.lanes = make(map[K]*lane[K, E])
		sh.segs.shared = segs
		sh.spare = new(sync.Pool)
	}
	base, stop := context.WithCancel(context.Background())
	e.base, e.stop = context.WithValue(base, engineKey{}, any(e)), stop
	e.clock.manual = cfg.clock
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

// parksCount reports whether parked events count against the backlog
// limits: they do when the engine keeps them in memory (Config.Parks nil),
// and do not in a store outside the process, where they hold no memory.
func (e *Engine[K, E]) parksCount() bool { return e.memParks != nil }

// ParksInMemory reports whether the engine keeps parked events in its own
// memory (Config.Parks was nil). Then they count against the backlog
// limits, and are lost with the process: a transport must not treat a
// parked record as finished.
func (e *Engine[K, E]) ParksInMemory() bool { return e.parksCount() }

// Config returns the engine's configuration as it runs it: the one New was
// given, with every default filled in.
func (e *Engine[K, E]) Config() Config[K, E] { return e.cfg }

// fromOwnHandler reports whether ctx is (or derives from) the context the
// engine gave one of its handlers.
func (e *Engine[K, E]) fromOwnHandler(ctx context.Context) bool {
	return ctx.Value(engineKey{}) == any(e)
}

// reserve takes room for n events in the total backlog, if there is room.
func (e *Engine[K, E]) reserve(n int64) bool {
	total := int64(e.cfg.Backlog.Total)
	for {
		cur := e.load.Load()
		if cur+n > total {
			return false
		}
		if e.load.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// reserveUpTo takes room for as many of n events as there is room for and
// returns how many.
func (e *Engine[K, E]) reserveUpTo(n int64) int64 {
	total := int64(e.cfg.Backlog.Total)
	for {
		cur := e.load.Load()
		k := min(n, total-cur)
		if k <= 0 {
			return 0
		}
		if e.load.CompareAndSwap(cur, cur+k) {
			return k
		}
	}
}

// workerList returns the workers started so far.
func (e *Engine[K, E]) workerList() []*worker[K, E] {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	return e.ws
}

// keepReplayRoom records that a durable replay now holds n more room it
// has not filled (n < 0: it filled or gave back some).
func (e *Engine[K, E]) keepReplayRoom(r *replayState, n int64) {
	r.room += n
	e.replayRoom.Add(n)
}

// dropReplayRoom gives back the room a durable replay holds and has not
// filled (it ended, or failed).
func (e *Engine[K, E]) dropReplayRoom(r *replayState) {
	e.release(r.room)
	e.keepReplayRoom(r, -r.room)
}

// release gives back the room of n events that left the backlog (reached
// an outcome, or left the memory park), and wakes whoever waits for room.
// The per-key room of those events must be released already: a woken
// submitter looks at both.
func (e *Engine[K, E]) release(n int64) {
	if n != 0 {
		e.load.Add(-n)
	}
	e.room.BroadcastIfWaiting()
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
		l = &lane[K, E]{shard: sh}
		l.q.pool = &sh.segs
	}
	l.key = key
	sh.lanes[key] = l
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
	l.resync, l.resyncTries, l.resyncWhy, l.lingering = false, 0, "", false
	l.stored = 0
	l.state = laneIdle
	if sh.nfree < maxFreeLanes {
		l.next = sh.free
		sh.free = l
		sh.nfree++
		return
	}
	sh.spare.Put(l) // the shard's own pool: l.shard never changes
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

// claimTask marks the shard's task queued and counts it busy, reporting
// whether the caller must push it after unlocking (false: it is already in
// the run queue or running, and will see what was just added); sh.mu is held.
func (sh *shard[K, E]) claimTask() bool {
	if sh.queued {
		return false
	}
	sh.queued = true
	sh.busy++
	return true
}

// idle records that one of sh's busy lanes or its inbox stopped being busy,
// and wakes Flush and Close when the shard is quiet; sh.mu is held.
func (e *Engine[K, E]) idle(sh *shard[K, E]) {
	sh.busy--
	if sh.busy == 0 {
		e.quiet.BroadcastIfWaiting()
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
func (e *Engine[K, E]) logRejected(key K, refusal error) {
	if ok, n := e.rejectLog.allow(e.now()); ok {
		e.cfg.Logger.Warn("ordergen: backlog full, events refused", "engine", e.cfg.Name, "key", key,
			"reason", refusal.Error(), "refused", n)
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

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
// and Skip skips it whole. A generated guard that decides its events one
// by one returns runtime/genimpl's Verdicts: then each is handled, skipped
// or held on its own, and the undecided rest comes in the next batch. A batch handler must not
// return Hold itself; the engine treats it as a permanent failure.
type BatchHandler[K comparable, E any] func(ctx context.Context, key K, events []E) error

// Engine dispatches events by key on at most Config.MaxActive workers. Same
// key: strictly in order, one at a time. Different keys: in parallel. A
// slow, retrying or parked key delays only itself: it gets a lane (a FIFO
// of its events, removed when it empties), which waits without holding up
// the keys that have none and run inline (see the package documentation).
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
	// boxed: E is an interface or holds one (at boxAt), whose boxes the
	// inline loop prefetches (prefetch.go).
	boxed bool
	boxAt uintptr

	seed   maphash.Seed
	shards []shard[K, E]
	mask   uint64
	rq     runQueue[K, E]
	clock  clock

	// base is the parent of every handler context; it carries the engine
	// (see fromOwnHandler), and stop cancels it when Close gives up waiting.
	base context.Context
	stop context.CancelFunc
	// env is what its attempts' contexts share (attemptctx.go).
	env attemptEnv

	// load counts the events held against Backlog.Total: every accepted
	// event without an outcome, plus the events parked in memory. Room is
	// taken in it (takeRoom) before an event is accepted, and given back
	// (retire) when an event leaves, so it never passes the total.
	// Submitters write it on every event: it has a cache line of its own,
	// so that the fields workers read on every attempt (base, cfg, aborted)
	// are not invalidated with it.
	_    [64]byte
	load atomic.Int64
	_    [56]byte
	// replayReserve is the room durable replays hold in load and have not
	// filled with loaded events (replayState.room): not pending events.
	replayReserve atomic.Int64
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

	room  notify.Notifier // signalled when room is released (Block, BlockThenReject)
	quiet notify.Notifier // signalled when a shard stops being busy (Flush, Close)

	workers sync.WaitGroup
	timers  sync.WaitGroup // armed timers and running timer callbacks
	exited  atomic.Int64   // workers that returned

	// wmu guards ws. The run queue holds its own mutex while it starts a
	// worker (see the lock rule in scheduler.go).
	wmu sync.Mutex
	ws  []*worker[K, E] // every worker started, for Stats and the watchdog

	errClosed   error
	errKeyFull  error
	errTotalAll error
}

// counters are outcome counts. Each worker has its own, so the hot path
// never shares a cache line with another worker; Stats adds them up.
type counters struct {
	handled, skipped, retried, deadLettered, dropped, discarded, replayed, resynced atomic.Uint64
	unimplemented                                                                   atomic.Uint64 // skips as unimplemented, not in skipped
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
	e.boxAt, e.boxed = boxAt[E]()
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
		sh.lanePool = new(sync.Pool)
	}
	base, stop := context.WithCancel(context.Background())
	e.base, e.stop = context.WithValue(base, engineKey{}, any(e)), stop
	e.env = attemptEnv{engine: any(e), clock: &e.clock, timeout: max(int64(cfg.Timeout), 0)}
	e.clock.manual = cfg.clock
	e.clock.onTick = e.watch
	e.clock.start()
	e.rq.init(cfg.MaxActive, e.startWorker, &e.clock, e.inline)
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

// Config returns the engine's configuration as it runs it: the one New was
// given, with every default filled in.
func (e *Engine[K, E]) Config() Config[K, E] { return e.cfg }

// fromOwnHandler reports whether ctx is (or derives from) the context the
// engine gave one of its handlers.
func (e *Engine[K, E]) fromOwnHandler(ctx context.Context) bool {
	return ctx.Value(engineKey{}) == any(e)
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
	// mu guards last and dropped.
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

package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// ErrEvicted is the cause with which a key's work context ends when the
// work ran longer than its group allows (Config.MaxWork): the group goes on
// without it, and the work runs again on its own.
var ErrEvicted = errors.New("groupcommit: work evicted from its group for running past MaxWork")

// Defaults of Config's zero fields.
const (
	// DefaultMaxEvents is Config.MaxEvents when it is zero.
	DefaultMaxEvents = 1000
	// DefaultMaxWork is Config.MaxWork when it is zero and Config.Linger
	// is shorter. It is long enough for a key's batch of 64 events with a
	// round trip each on a loaded PostgreSQL, so that only a handler that
	// is really stuck or slow leaves its group.
	DefaultMaxWork = 100 * time.Millisecond
	// DefaultMaxGroups is Config.MaxGroups when it is zero.
	DefaultMaxGroups = 1
	// DefaultMaxRetries is Config.MaxRetries when it is zero.
	DefaultMaxRetries = 5
)

// Config configures a Committer. The zero value of every field means its
// documented default.
type Config struct {
	// Name identifies the committer (the entity and subscriber) in errors,
	// logs and metrics.
	Name string
	// MaxEvents is the most events in one group: a group takes waiting
	// keys in the order they came while their events fit. A key's events
	// are never split: a key with more than MaxEvents is a group alone.
	// Zero: 1000.
	MaxEvents int
	// Linger is how long a group that has fewer than MaxEvents events waits
	// for more keys before it begins, counted from the arrival of its
	// oldest key. Zero: no wait (a group is the keys that are waiting).
	Linger time.Duration
	// MaxWork is how long one key's work may run in a group, from the
	// moment its turn is handed to it, before it is evicted (ErrEvicted).
	// Set it above what a batch's work normally takes: an evicted work
	// costs its group a rollback and runs again alone. Zero: 100ms
	// (DefaultMaxWork), or Linger when that is longer.
	MaxWork time.Duration
	// Savepoints takes a savepoint before every key's work from the start,
	// instead of only once a group has seen a failure. It costs a round
	// trip per key and saves one rerun of the group per failure.
	Savepoints bool
	// MaxGroups is how many groups may be open (in a transaction) at once.
	// Zero: 1. SQLite runs one writer at a time whatever it is set to.
	MaxGroups int
	// MaxRetries is how many times a group is run again after a conflict
	// with another writer before its keys' Do calls return the error. Zero:
	// 5.
	MaxRetries int
	// MeterProvider, when set, receives the committer's metrics (see the
	// Metric constants). Nil: nothing is recorded.
	MeterProvider meter.Provider
	// MetricAttributes are added to every measurement.
	MetricAttributes []meter.Attribute
	// Logger receives evictions and the rollbacks of groups. Nil:
	// slog.Default().
	Logger *slog.Logger
}

// withDefaults returns cfg with its zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Name == "" {
		cfg.Name = "committer"
	}
	if cfg.MaxEvents == 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	if cfg.MaxWork == 0 {
		cfg.MaxWork = max(cfg.Linger, DefaultMaxWork)
	}
	if cfg.MaxGroups == 0 {
		cfg.MaxGroups = DefaultMaxGroups
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg
}

// Work applies one key's events in the group's transaction tx, given the
// key's version and state as the group read them (read). It returns the
// key's new version and state in Result, and what Do is to return once the
// group commits. A non-nil error fails the key: its writes are rolled back
// and Do returns the error. Work may be called more than once for the same
// events (after a group-mate failed or a conflict): it must write through tx
// only. It runs on the goroutine that called Do, under a context derived
// from Do's: ended with cause ErrEvicted when the work is evicted.
type Work[T any] func(ctx context.Context, tx T, read durable.KeyState) (Result, error)

// Result is what one key's work leaves to its group's commit.
type Result struct {
	// Write is the key's version and state after the work. When it equals
	// what the work read, nothing is written for the key.
	Write durable.KeyState
	// Verdict is what Do returns once the group committed: nil, or the
	// events' verdicts (runtime/genimpl's Verdicts, runtime.Skip, runtime.SkipApplied).
	Verdict error
}

// Committer forms groups of keys' work over one namespace of a
// durable.GroupTxStore and commits each group in one transaction. It is safe
// for concurrent use; Close it after the engines that call Do.
//
// Its goroutines (runners, one per open group, at most MaxGroups) start
// when work arrives and end a second after the last (or at Close): an idle
// Committer has none.
type Committer[T any] struct {
	store     durable.GroupTxStore[T]
	namespace string
	cfg       Config
	// ctx is the context of the store calls the runners make (BeginGroup,
	// Savepoint, Commit): a group that began commits or rolls back whatever
	// the contexts of its keys do.
	ctx     context.Context
	counts  counts
	metrics *metrics
	// errClosed is what Do returns after Close.
	errClosed error

	// mu guards the fields below, and the state of every request.
	mu sync.Mutex
	// queue is the requests waiting for a group, in arrival order;
	// queuedEvents the sum of their events.
	queue        []*request[T]
	queuedEvents int
	// open is the keys of the groups that are running: a key waiting in
	// the queue joins no group while it is in one (two Do calls of one key
	// at once are a caller's mistake, and a failed key's retry must wait
	// for the transaction that still holds its row).
	open map[string]struct{}
	// runners is how many runner goroutines are running, idle how many of
	// them wait for work (a token on work wakes one); forming says one of
	// them is lingering for more keys (it is woken through wake).
	runners, idle int
	forming       bool
	closed        bool
	wake, work    chan struct{}
	// done is closed by Close, for the idle runners.
	done chan struct{}
	// groups is the number of groups in a transaction now (Stats.Open).
	groups int
	// runs waits for the runners.
	runs sync.WaitGroup
	// requests keeps the requests of the Do calls that returned, with
	// their channels, for the next ones.
	requests sync.Pool
	// onQueued, set by tests only, is called with mu held when a key has
	// been queued.
	onQueued func(key string)
}

// New returns a Committer over namespace of store.
func New[T any](store durable.GroupTxStore[T], namespace string, cfg Config) (*Committer[T], error) {
	if store == nil {
		return nil, fmt.Errorf("%w: groupcommit: %s: nil store", runtime.ErrInvalidConfig, cfg.Name)
	}
	if cfg.MaxEvents < 0 || cfg.Linger < 0 || cfg.MaxWork < 0 || cfg.MaxGroups < 0 || cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("%w: groupcommit: %s: negative bound in %+v", runtime.ErrInvalidConfig, cfg.Name, cfg)
	}
	cfg = cfg.withDefaults()
	c := &Committer[T]{
		store:     store,
		namespace: namespace,
		cfg:       cfg,
		ctx:       context.Background(),
		open:      make(map[string]struct{}),
		wake:      make(chan struct{}, 1),
		work:      make(chan struct{}, cfg.MaxGroups),
		done:      make(chan struct{}),
		errClosed: fmt.Errorf("groupcommit: %s: %w", cfg.Name, runtime.ErrClosed),
	}
	m, err := startMetrics(cfg)
	if err != nil {
		return nil, err
	}
	c.metrics = m
	return c, nil
}

// Do adds key's work on events events to the next group and returns once
// that group committed (the work's Result.Verdict), or the work failed (its
// error, nothing of it committed), or the group could not commit (its
// error, for every key of the group).
//
// The work runs on Do's goroutine, when the group's turn comes to the key,
// under a context derived from ctx. A ctx that ends while the key waits
// for a group makes Do return ctx's error; once the key is in a group it is
// the work's context that ends. A work that panics fails its key (the
// group goes on without it) and Do panics on with the work's panic. A work
// evicted for running past Config.MaxWork runs again, alone, in a
// transaction of its own (store.BeginKey), and Do returns that result.
func (c *Committer[T]) Do(ctx context.Context, key string, events int, work Work[T]) error {
	if work == nil {
		return fmt.Errorf("groupcommit: %s %q: nil work", c.cfg.Name, key)
	}
	if events < 1 {
		return fmt.Errorf("groupcommit: %s %q: %d events: a work applies at least one", c.cfg.Name, key, events)
	}
	r := c.newRequest(ctx, key, events)
	if err := c.enqueue(r); err != nil {
		c.putRequest(r)
		return err
	}
	err := c.wait(r, work)
	c.putRequest(r) // not after a panic: a runner may still hold it
	return err
}

// putRequest gives r back to the pool, without what it references.
func (c *Committer[T]) putRequest(r *request[T]) {
	r.key, r.ctx, r.read, r.res = "", nil, durable.KeyState{}, Result{}
	c.requests.Put(r)
}

// newRequest returns a request for a Do call, with its channels (from the
// pool of the requests of Do calls that returned).
func (c *Committer[T]) newRequest(ctx context.Context, key string, events int) *request[T] {
	r, _ := c.requests.Get().(*request[T])
	if r == nil {
		r = &request[T]{in: make(chan message[T], 2), out: make(chan reply, 1)}
	}
	r.key, r.events, r.ctx, r.state = key, events, ctx, stateQueued
	return r
}

// wait runs r's turns until its group answers it.
func (c *Committer[T]) wait(r *request[T], work Work[T]) error {
	done := r.ctx.Done()
	for {
		select {
		case m := <-r.in:
			switch m.kind {
			case msgTurn:
				if errors.Is(context.Cause(m.ctx), ErrEvicted) {
					continue // evicted before it began: msgAlone follows
				}
				r.runTurn(m, work)
			case msgDone:
				return m.err
			case msgAlone:
				select {
				case <-r.out: // the evicted turn's reply, which nobody reads
				default:
				}
				return c.alone(r.ctx, r.key, work)
			}
		case <-done:
			if c.withdraw(r) {
				return fmt.Errorf("groupcommit: %s %q: waiting for a group: %w", c.cfg.Name, r.key, r.ctx.Err())
			}
			done = nil // in a group: the work's context ends instead
		}
	}
}

// runTurn runs work in the turn m that the group's runner handed to r, and
// hands back its result. A panic or a runtime.Goexit in work goes on up
// Do's stack after the runner was told, so that the group goes on without
// the key.
func (r *request[T]) runTurn(m message[T], work Work[T]) {
	returned := false
	defer func() {
		if !returned {
			r.out <- reply{panicked: true}
		}
	}()
	res, err := work(m.ctx, m.tx, m.read)
	returned = true
	r.out <- reply{res: res, err: err}
}

// alone runs the work of an evicted key in a transaction of its own, under
// the key's own context.
func (c *Committer[T]) alone(ctx context.Context, key string, work Work[T]) error {
	tx, err := c.store.BeginKey(ctx, c.namespace, key)
	if err != nil {
		return fmt.Errorf("groupcommit: %s %q: evicted work alone: %w", c.cfg.Name, key, err)
	}
	defer tx.Rollback()
	read := durable.KeyState{Version: tx.Version(), State: tx.State()}
	res, err := work(ctx, tx.Tx(), read)
	if err != nil {
		return err
	}
	// Committed even when the version stayed: the handler may have written.
	if err := tx.Commit(ctx, res.Write.Version, res.Write.State); err != nil {
		return fmt.Errorf("groupcommit: %s %q: evicted work alone: commit: %w", c.cfg.Name, key, err)
	}
	c.counts.alone.Add(1)
	return res.Verdict
}

// Close stops the committer: a Do after Close returns an error wrapping
// runtime.ErrClosed, and so do the Do calls whose keys still wait for a
// group. Groups already open commit first: Close returns when they have and
// the committer's goroutines have ended.
func (c *Committer[T]) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		for _, r := range c.queue {
			r.state = stateLeft
			r.in <- message[T]{kind: msgDone, err: c.errClosed}
		}
		clear(c.queue)
		c.queue, c.queuedEvents = c.queue[:0], 0
		c.signalLocked()
		close(c.done)
	}
	c.mu.Unlock()
	c.runs.Wait()
	return nil
}

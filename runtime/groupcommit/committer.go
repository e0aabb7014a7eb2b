package groupcommit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// ErrEvicted is the cause with which a key's work context ends when the
// work ran longer than its group allows (Config.MaxWork): the group goes on
// without it, and the work runs again on its own.
var ErrEvicted = errors.New("groupcommit: work evicted from its group for running past MaxWork")

// Config configures a Committer. The zero value of every field means its
// documented default.
type Config struct {
	// Name identifies the committer (the entity and subscriber) in errors,
	// logs and metrics.
	Name string
	// MaxEvents is the most events in one group. Zero: 1000.
	MaxEvents int
	// Linger is how long a group that has fewer than MaxEvents events waits
	// for more keys before it begins. Zero: no wait (a group is the keys
	// that are waiting).
	Linger time.Duration
	// MaxWork is how long one key's work may run in a group before it is
	// evicted (ErrEvicted). Zero: Linger, or 10ms when Linger is zero too.
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
	// Logger receives evictions and groups that fail. Nil: slog.Default().
	Logger *slog.Logger
}

// Work applies one key's events in the group's transaction tx, given the
// key's version and state as the group read them (read). It returns the
// key's new version and state in Result, and what Do is to return once the
// group commits. A non-nil error fails the key: its writes are rolled back
// and Do returns the error. Work may be called more than once for the same
// events (after a group-mate failed or a conflict): it must write through tx
// only.
type Work[T any] func(ctx context.Context, tx T, read durable.KeyState) (Result, error)

// Result is what one key's work leaves to its group's commit.
type Result struct {
	// Write is the key's version and state after the work. When it equals
	// what the work read, nothing is written for the key.
	Write durable.KeyState
	// Verdict is what Do returns once the group committed: nil, or the
	// events' verdicts (runtime.Verdicts, runtime.Skip, runtime.SkipApplied).
	Verdict error
}

// Committer forms groups of keys' work over one namespace of a
// durable.GroupTxStore and commits each group in one transaction. It is safe
// for concurrent use; Close it after the engines that call Do.
type Committer[T any] struct {
	store     durable.GroupTxStore[T]
	namespace string
	cfg       Config
}

// New returns a Committer over namespace of store.
func New[T any](store durable.GroupTxStore[T], namespace string, cfg Config) (*Committer[T], error) {
	if store == nil {
		return nil, fmt.Errorf("groupcommit: %s: nil store", cfg.Name)
	}
	if cfg.MaxEvents < 0 || cfg.Linger < 0 || cfg.MaxWork < 0 || cfg.MaxGroups < 0 || cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("groupcommit: %s: negative bound in %+v", cfg.Name, cfg)
	}
	return &Committer[T]{store: store, namespace: namespace, cfg: cfg}, nil
}

// Do adds key's work on events events to the next group and returns once
// that group committed (the work's Result.Verdict), or the work failed (its
// error, nothing of it committed), or ctx ended first.
//
// SKELETON: runs each work alone in a transaction of its own (BeginKey);
// the grouping comes in a later commit.
func (c *Committer[T]) Do(ctx context.Context, key string, events int, work Work[T]) error {
	tx, err := c.store.BeginKey(ctx, c.namespace, key)
	if err != nil {
		return fmt.Errorf("groupcommit: %s %q: %w", c.cfg.Name, key, err)
	}
	defer tx.Rollback()
	read := durable.KeyState{Version: tx.Version(), State: tx.State()}
	res, err := work(ctx, tx.Tx(), read)
	if err != nil {
		return err
	}
	if res.Write != read {
		if err := tx.Commit(ctx, res.Write.Version, res.Write.State); err != nil {
			return fmt.Errorf("groupcommit: %s %q: commit: %w", c.cfg.Name, key, err)
		}
	}
	return res.Verdict
}

// Close stops the committer: a Do after Close returns an error wrapping
// runtime.ErrClosed. Groups already open commit first.
func (c *Committer[T]) Close() error { return nil }

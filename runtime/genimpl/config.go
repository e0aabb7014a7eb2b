package genimpl

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/meter"
)

// Config configures one subscriber of a generated dispatcher: a generated
// AccountConfig is a Config of its entity. The dispatcher's constructors
// and Subscribe start from the schema's policies and apply the options in
// order. A zero or nil field means the runtime's default. The fields an
// entity has no use for (Versions without a version, States without
// states, BatchSize and Linger without batch:) must stay zero.
type Config[K comparable, E any] struct {
	// MaxActive is the number of keys handled at once (schema:
	// lanes.max_active).
	MaxActive int
	// Backlog bounds the pending events (schema: backlog).
	Backlog runtime.Backlog
	// Retry is the in-lane retry policy (schema: retry).
	Retry runtime.Retry
	// Timeout bounds each handler attempt through its context (schema:
	// timeout).
	Timeout time.Duration
	// OnExhausted says what happens to an event that failed for good
	// (schema: on_exhausted; runtime.DropEvent for delivery: at-most-once).
	OnExhausted runtime.ExhaustedPolicy
	// MaxHeld bounds the events of one key held back on a version gap; a
	// key that would hold more is parked, or first resynced with on_gap:
	// resync (schema: resequencer.max_events).
	MaxHeld int
	// MaxHold bounds how long an event is held back on a version gap; then
	// the key is parked, or first resynced with on_gap: resync (schema:
	// resequencer.max_wait).
	MaxHold time.Duration
	// BatchSize is the most events of one key in one call of the batch
	// handler (schema: batch.max_events).
	BatchSize int
	// Linger is how long a batch waits for more events of its key before
	// the handler gets fewer than BatchSize; zero: no wait (schema:
	// batch.linger).
	Linger time.Duration
	// Group configures the group commit of a transactional subscriber of
	// an entity whose schema asks for it (schema: group): a
	// groupcommit.Committer commits the work of many keys in one
	// transaction, up to MaxEvents events, after waiting up to Linger for
	// more keys. Name, MeterProvider and Logger default to the
	// subscriber's; the subscriber's metric attributes come before
	// MetricAttributes. Other subscribers ignore it.
	Group groupcommit.Config
	// Logger receives what an operator must see (a key parked, a replay).
	// Nil: slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the subscriber's metrics (see the
	// runtime's Metric constants), with the entity as
	// messaging.destination.name and the subscriber's name as
	// messaging.consumer.group.name; for OpenTelemetry, wrap yours with
	// github.com/ordergen/ordergen/runtime/otelmetrics.NewMeterProvider.
	// Nil: nothing is recorded.
	MeterProvider meter.Provider
	// Tracer, when set, makes each attempt of the subscriber a span and
	// gives the handler its context (runtime.Config.Tracer); for
	// OpenTelemetry, github.com/ordergen/ordergen/runtime/oteltrace.New.
	// Give the subscribers that one consumer feeds a tracer of their own.
	// Nil: nothing is traced.
	Tracer runtime.Tracer
	// Versions stores the last applied version of each key (entities with
	// a version). Nil: a new in-memory store. Give each subscriber its own
	// store.
	Versions runtime.VersionStore[K]
	// States stores the current state of each key (entities with states).
	// Nil: a new in-memory store. Give each subscriber its own store.
	States runtime.StateStore[K]
	// Parks stores the parked events. Nil: the runtime's in-memory store.
	Parks runtime.ParkStore[K, E]
	// DeadLetter receives the events that failed for good under the
	// runtime.SendToDeadLetter policy; that policy requires it.
	DeadLetter runtime.DeadLetterSink[K, E]
	// Store, when set, keeps the subscriber's versions, states and parked
	// events durably (runtime/sqlstore), in the namespace of the
	// subscriber's name ("Account", "Account/name"); Versions, States and
	// Parks set here win over it. The transactional constructors
	// (NewAccountTxDispatcher, SubscribeTx) set it to their store.
	Store durable.Store
	// OnOutcome, when set, is told the outcome of each event the
	// subscriber accepted, with the tag given to SubmitTagged (0 for
	// Publish). A transport that feeds the dispatcher (the Kafka consumer
	// of runtime/kafka) sets it on every subscriber to learn when its
	// records are finished; SubmitTagged refuses to run while a subscriber
	// has none. It must be fast and must not block (see
	// runtime.OutcomeFunc).
	OnOutcome runtime.OutcomeFunc[K]
	// OnSkip, when set, is told each event the subscriber's guards skip,
	// with the guard's reason: a duplicate or stale version, a late
	// transition, a move to the current state (a duplicate, without a
	// version), a branch state entered from a state it does not list, an
	// event outside the states its in: lists. An unimplemented event's
	// acknowledgement is not a guard's skip. It is told when the guards
	// decide, so an attempt that runs again (a failed batch, a group's
	// work, a failed commit) may tell it again. The test kit's in-order
	// run sets it, to fail on an event skipped in publication order
	// (almost always a schema mistake). It is called from the
	// subscriber's workers: it must be fast and must not block.
	OnSkip func(key K, ev E, reason string)
}

// GroupConfig is a Config's Group: a groupcommit.Config.
type GroupConfig = groupcommit.Config

// Option changes a Config before a subscriber starts: a generated
// AccountOption.
type Option[K comparable, E any] func(*Config[K, E])

// configure returns the entity's defaults changed by opts, with the stores
// cfg.Store gives filled in (from store, a transactional subscriber's, when
// not nil), in the namespace name, or an error for a field the entity has
// no use for.
func configure[K comparable, E Event[K], B any](en *Entity[K, E, B], name string, store durable.Store, opts []Option[K, E]) (Config[K, E], error) {
	cfg := en.Defaults
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	switch {
	case cfg.Versions != nil && !en.versioned():
		return cfg, fmt.Errorf("%w: Versions is set, and %s has no version", runtime.ErrInvalidConfig, en.Name)
	case cfg.States != nil && !en.stated():
		return cfg, fmt.Errorf("%w: States is set, and no event of %s moves it to a state", runtime.ErrInvalidConfig, en.Name)
	case (cfg.BatchSize != 0 || cfg.Linger != 0) && !en.Batch:
		return cfg, fmt.Errorf("%w: BatchSize or Linger is set, and %s has no batch:", runtime.ErrInvalidConfig, en.Name)
	}
	if store != nil {
		cfg.Store = store
	}
	if cfg.Store == nil {
		return cfg, nil
	}
	if cfg.Versions == nil && en.versioned() {
		cfg.Versions = durable.EncodedVersions[K](cfg.Store.Versions(name))
	}
	if cfg.States == nil && en.stated() {
		cfg.States = durable.EncodedStates[K](cfg.Store.States(name))
	}
	if cfg.Parks == nil {
		cfg.Parks = durable.EncodedParks[K, E](cfg.Store.Parks(name), Codec[K, E, B]{en})
	}
	return cfg, nil
}

// attributes are a subscriber's metric attributes: its entity and name.
func attributes(entity, name string) []meter.Attribute {
	return []meter.Attribute{
		{Key: meter.AttrDestination, Value: entity},
		{Key: meter.AttrConsumerGroup, Value: name},
	}
}

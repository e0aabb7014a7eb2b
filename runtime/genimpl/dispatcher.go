package genimpl

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/internal/versions"
)

// Dispatcher is the generic part of a generated dispatcher
// (AccountDispatcher embeds one): it delivers an entity's events to per-key
// lanes, one engine per subscriber, each subscriber with its own lanes,
// guards and stores, so that a slow or parked subscriber delays no other.
// Its exported methods are the generated dispatcher's; N is the generated
// subscriber name type (AccountSubscriberName). It is safe for concurrent
// use.
type Dispatcher[K comparable, E Event[K], B any, N ~string] struct {
	en      *Entity[K, E, B]
	topic   *runtime.Topic[K, B]
	textKey bool // K is a string type: an empty key is refused

	// mu serialises subscribing (a name is taken once) and guards subs.
	mu   sync.Mutex
	subs map[string]*subscriber[K, E, B] // by name
}

// subscriber is one subscriber of a Dispatcher: its name, its handler and
// the stores of its guards.
type subscriber[K comparable, E Event[K], B any] struct {
	en   *Entity[K, E, B]
	name string
	h    *Handler[K, E, B]   // nil for a transactional subscriber
	tx   *TxHandler[K, E, B] // a transactional subscriber's
	// store is a transactional subscriber's store.
	store    durable.TxStore[*sql.Tx]
	versions runtime.VersionStore[K] // nil without a version
	// mem is versions' table when it is the subscriber's own in-memory
	// store (memoryVersions), which the guards use directly; nil otherwise.
	mem    *versions.Table[K]
	states runtime.StateStore[K] // nil without states
	group  *groupcommit.Committer[*sql.Tx]
	onSkip func(key K, ev E, reason string)
	log    *slog.Logger
	// duplicateLogged is set by the first skip of a move to the current
	// state (an entity without a version; see duplicate).
	duplicateLogged atomic.Bool
}

// New returns a dispatcher of en whose first subscriber, named after the
// entity, is h, configured with the schema's policies changed by opts: a
// generated NewAccountDispatcher. A nil h is an error.
func New[N ~string, K comparable, E Event[K], B any](en *Entity[K, E, B], h *Handler[K, E, B], opts []Option[K, E]) (*Dispatcher[K, E, B, N], error) {
	d := newDispatcher[N](en)
	if err := d.subscribe(en.Name, h, nil, nil, opts); err != nil {
		return nil, err
	}
	return d, nil
}

// NewTx is New with a transactional handler over store: a generated
// NewAccountTxDispatcher.
func NewTx[N ~string, K comparable, E Event[K], B any](en *Entity[K, E, B], store durable.TxStore[*sql.Tx], h *TxHandler[K, E, B], opts []Option[K, E]) (*Dispatcher[K, E, B, N], error) {
	d := newDispatcher[N](en)
	if err := d.subscribeTx(en.Name, store, h, opts); err != nil {
		return nil, err
	}
	return d, nil
}

func newDispatcher[N ~string, K comparable, E Event[K], B any](en *Entity[K, E, B]) *Dispatcher[K, E, B, N] {
	return &Dispatcher[K, E, B, N]{en: en, topic: runtime.NewTopic[K, B](), textKey: stringKey[K](), subs: make(map[string]*subscriber[K, E, B])}
}

// Subscribe adds to d the subscriber named name (its runtime name is the
// entity's name, a slash and name): a generated Subscribe.
func Subscribe[K comparable, E Event[K], B any, N ~string](d *Dispatcher[K, E, B, N], name string, h *Handler[K, E, B], opts []Option[K, E]) error {
	if name == "" {
		return fmt.Errorf("%s: subscribe to %s: empty subscriber name", d.en.Package, d.en.Name)
	}
	return d.subscribe(d.en.Name+"/"+name, h, nil, nil, opts)
}

// SubscribeTx adds a transactional subscriber over store: a generated
// SubscribeTx.
func SubscribeTx[K comparable, E Event[K], B any, N ~string](d *Dispatcher[K, E, B, N], name string, store durable.TxStore[*sql.Tx], h *TxHandler[K, E, B], opts []Option[K, E]) error {
	if name == "" {
		return fmt.Errorf("%s: subscribe to %s: empty subscriber name", d.en.Package, d.en.Name)
	}
	return d.subscribeTx(d.en.Name+"/"+name, store, h, opts)
}

func (d *Dispatcher[K, E, B, N]) subscribeTx(name string, store durable.TxStore[*sql.Tx], h *TxHandler[K, E, B], opts []Option[K, E]) error {
	if store == nil {
		return fmt.Errorf("%s: subscribe %s: nil store", d.en.Package, name)
	}
	if h == nil {
		return fmt.Errorf("%s: subscribe %s: nil handler", d.en.Package, name)
	}
	return d.subscribe(name, nil, h, store, opts)
}

// subscribe starts the subscriber named name: h's, or tx's over store.
func (d *Dispatcher[K, E, B, N]) subscribe(name string, h *Handler[K, E, B], tx *TxHandler[K, E, B], store durable.TxStore[*sql.Tx], opts []Option[K, E]) error {
	en := d.en
	if h == nil && tx == nil {
		return fmt.Errorf("%s: subscribe %s: nil handler", en.Package, name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, taken := d.subs[name]; taken {
		return fmt.Errorf("%s: subscribe %s: the name is taken", en.Package, name)
	}
	var durableStore durable.Store
	if store != nil {
		durableStore = store
	}
	cfg, err := configure(en, name, durableStore, opts)
	if err != nil {
		return fmt.Errorf("%s: subscribe %s: %w", en.Package, name, err)
	}
	// A transactional subscriber's versions and states are its store's
	// (configure's), which its guards read in their transactions.
	s := &subscriber[K, E, B]{en: en, name: name, h: h, tx: tx, store: store, versions: cfg.Versions, states: cfg.States, onSkip: cfg.OnSkip, log: cfg.Logger}
	if s.versions == nil && en.versioned() {
		s.mem = versions.New[K]()
		s.versions = memoryVersions[K]{s.mem}
	}
	if s.states == nil && en.stated() {
		s.states = runtime.NewMemoryStateStore[K]()
	}
	rc := engineConfig(en, name, cfg)
	if en.Resync {
		rc.Resync = s.resync
		if tx != nil {
			rc.Resync = s.resyncTx
		}
	}
	if tx != nil && en.Group {
		if s.group, err = newCommitter(en, name, store, cfg); err != nil {
			return fmt.Errorf("%s: subscribe %s: %w", en.Package, name, err)
		}
		// A batch engine over the group's work: a key's batches fit in
		// one group and do not linger (the group's linger waits).
		if en.Batch {
			rc.Linger = 0
		} else {
			rc.BatchSize = runtime.DefaultBatchSize
		}
		if limit := cfg.Group.MaxEvents; limit > 0 && rc.BatchSize > limit {
			rc.BatchSize = limit
		}
		_, err = d.topic.SubscribeBatch(s.handleGroup, rc)
	} else {
		err = s.start(d.topic, rc)
	}
	if err != nil {
		if s.group != nil {
			s.group.Close()
		}
		return fmt.Errorf("%s: subscribe %s: %w", en.Package, name, err)
	}
	d.subs[name] = s
	return nil
}

// start subscribes s to topic with its guard for its entity and kind.
func (s *subscriber[K, E, B]) start(topic *runtime.Topic[K, B], rc runtime.Config[K, B]) error {
	var err error
	switch {
	case s.en.Batch && s.tx != nil:
		_, err = topic.SubscribeBatch(s.handleBatchTx, rc)
	case s.en.Batch:
		_, err = topic.SubscribeBatch(s.handleBatch, rc)
	case s.tx != nil:
		_, err = topic.Subscribe(s.handleTx, rc)
	default:
		_, err = topic.Subscribe(s.handle, rc)
	}
	return err
}

// engineConfig returns the engine's configuration of the subscriber named
// name, configured with cfg.
func engineConfig[K comparable, E Event[K], B any](en *Entity[K, E, B], name string, cfg Config[K, E]) runtime.Config[K, B] {
	var parks runtime.ParkStore[K, B]
	if cfg.Parks != nil {
		parks = envParks[K, E, B]{en, cfg.Parks}
	}
	return runtime.Config[K, B]{
		Name:             name,
		MaxActive:        cfg.MaxActive,
		Backlog:          cfg.Backlog,
		Retry:            cfg.Retry,
		Timeout:          cfg.Timeout,
		OnExhausted:      cfg.OnExhausted,
		Conflate:         en.Conflate,
		BatchSize:        cfg.BatchSize,
		Linger:           cfg.Linger,
		MaxHeld:          cfg.MaxHeld,
		MaxHold:          cfg.MaxHold,
		Parks:            parks,
		DeadLetter:       envDeadLetter(en, cfg.DeadLetter),
		MeterProvider:    cfg.MeterProvider,
		MetricAttributes: attributes(en.Name, name),
		OnOutcome:        cfg.OnOutcome,
		Tracer:           envTracerOf(en, cfg.Tracer),
		Logger:           cfg.Logger,
	}
}

// newCommitter returns the group committer of a transactional subscriber of
// an entity with group:. Its store must commit groups; it takes the
// subscriber's name, metrics and logger unless cfg.Group sets its own.
func newCommitter[K comparable, E Event[K], B any](en *Entity[K, E, B], name string, store durable.TxStore[*sql.Tx], cfg Config[K, E]) (*groupcommit.Committer[*sql.Tx], error) {
	gs, ok := store.(durable.GroupTxStore[*sql.Tx])
	if !ok {
		return nil, fmt.Errorf("the schema asks for group commit of %s (group:), and store %T is no durable.GroupTxStore[*sql.Tx]", en.Name, store)
	}
	gc := cfg.Group
	if gc.Name == "" {
		gc.Name = name
	}
	if gc.MeterProvider == nil {
		gc.MeterProvider = cfg.MeterProvider
	}
	gc.MetricAttributes = append(attributes(en.Name, name), gc.MetricAttributes...)
	if gc.Logger == nil {
		gc.Logger = cfg.Logger
	}
	return groupcommit.New(gs, name, gc)
}

// Close stops accepting events, drains every subscriber and stops their
// workers, then closes the transactional subscribers' group committers. It
// returns an error when ctx ends before everything finished.
func (d *Dispatcher[K, E, B, N]) Close(ctx context.Context) error {
	err := d.topic.Close(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(d.subs)) {
		if s := d.subs[name]; s.group != nil {
			if cerr := s.group.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("%s: close %s: %w", d.en.Package, name, cerr))
			}
		}
	}
	return err
}

// subscriber returns the subscriber named name, or the error for a name
// that names none.
func (d *Dispatcher[K, E, B, N]) subscriber(name N) (*subscriber[K, E, B], error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.subs[string(name)]; ok {
		return s, nil
	}
	names := slices.Sorted(maps.Keys(d.subs))
	for _, known := range names {
		if strings.EqualFold(known, string(name)) {
			return nil, fmt.Errorf("%s: no subscriber named %q (did you mean %s?)", d.en.Package, name, known)
		}
	}
	return nil, fmt.Errorf("%s: no subscriber named %q (subscribers: %s)", d.en.Package, name, strings.Join(names, ", "))
}

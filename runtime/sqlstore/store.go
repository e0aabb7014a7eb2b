package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Store keeps guard versions, states, parked events and operator requests in
// a SQL database, in namespaces (one per subscriber). It implements
// durable.TxStore[*sql.Tx], and so durable.Store. It is safe for
// concurrent use, also by several processes sharing the database.
type Store struct {
	db       *sql.DB
	dialect  Dialect
	closeDB  bool
	listener Listener // nil: the database cannot notify (SQLite)

	// wakeMu guards wakers: the relays of this process to wake when a
	// writer of this process appends to an outbox (see WakeOnAppend).
	wakeMu sync.Mutex
	wakers map[string]map[chan<- struct{}]struct{}

	trace TraceFunc // the outbox writers' trace context (outboxtrace.go)

	closeOnce sync.Once
	closeErr  error
}

var _ durable.TxStore[*sql.Tx] = (*Store)(nil)

// Option changes how New sets a store up.
type Option func(*Store)

// ClosingDB makes Store.Close close the database handle too. The Open
// functions of runtime/sqlstore/sqlite and runtime/sqlstore/postgres use it.
func ClosingDB() Option { return func(s *Store) { s.closeDB = true } }

// New returns a store on db, whose dialect is d, after creating or
// upgrading its tables (see SchemaVersion). Replicas may call it at once:
// migrations are serialised in the database. The caller keeps owning db
// unless ClosingDB is given.
func New(ctx context.Context, db *sql.DB, d Dialect, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlstore: nil database")
	}
	if !d.valid() {
		return nil, fmt.Errorf("sqlstore: unknown dialect %v", d)
	}
	s := &Store{db: db, dialect: d}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("sqlstore (%v): %w", d, err)
	}
	return s, nil
}

// DB returns the database handle, for the service's own queries (a
// handler's writes go through the transaction it receives instead).
func (s *Store) DB() *sql.DB { return s.db }

// Dialect returns the store's dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close closes the database handle if the store owns it (ClosingDB).
// Closing twice is harmless.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.closeDB {
			s.closeErr = s.db.Close()
		}
	})
	return s.closeErr
}

// Versions returns the version store of namespace.
func (s *Store) Versions(namespace string) runtime.VersionStore[string] {
	return versions{s: s, ns: namespace}
}

// States returns the state store of namespace.
func (s *Store) States(namespace string) runtime.StateStore[string] {
	return states{s: s, ns: namespace}
}

// Parks returns the park store of namespace.
func (s *Store) Parks(namespace string) runtime.ParkStore[string, durable.RawEvent] {
	return parks{s: s, ns: namespace}
}

// inTx runs fn in a transaction and commits it when fn succeeds.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // the error that matters is fn's
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Versions are uint64 in Go and signed 64-bit integers in SQL: they are
// stored bit for bit, so the whole range round-trips and compares equal.
func toSQL(v uint64) int64   { return int64(v) }
func fromSQL(v int64) uint64 { return uint64(v) }

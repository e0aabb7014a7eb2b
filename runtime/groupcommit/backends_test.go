package groupcommit_test

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// postgresEnv names the variable that holds the DSN of a PostgreSQL
// database the tests may use (.ci/run starts a throwaway one and sets it).
const postgresEnv = "ORDERGEN_TEST_POSTGRES"

// backend is a store for the stress test and the benchmarks, with what a
// handler writes in its transactions (an application of an event: one row
// per key and version) and how to read back what was committed.
type backend[T any] struct {
	name  string
	store durable.GroupTxStore[T]
	// conflict is an error the store's Retryable accepts.
	conflict error
	// apply writes the application of key's event of version in tx.
	apply func(ctx context.Context, tx T, ns, key string, version uint64) error
	// committed returns the committed version of key and how many times
	// each version was applied in committed transactions.
	committed func(ns, key string) (uint64, map[uint64]int, error)
}

func fakeBackend() backend[*fakeTx] {
	s := newFakeStore()
	return backend[*fakeTx]{
		name: "fake", store: s, conflict: errConflict,
		apply: func(_ context.Context, tx *fakeTx, _, key string, v uint64) error { return tx.Apply(key, v) },
		committed: func(_, key string) (uint64, map[uint64]int, error) {
			return s.version(key), s.appsOf(key), nil
		},
	}
}

// sqlBackend is a backend on store, whose handlers' writes go to a table
// of the test's own, gc_apps.
func sqlBackend(t testing.TB, name string, s *sqlstore.Store) backend[*sql.Tx] {
	t.Helper()
	if _, err := s.DB().Exec(`CREATE TABLE IF NOT EXISTS gc_apps (ns TEXT NOT NULL, key TEXT NOT NULL, version BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return backend[*sql.Tx]{
		name: name, store: s, conflict: sqlstore.ErrConflict,
		apply: func(ctx context.Context, tx *sql.Tx, ns, key string, v uint64) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO gc_apps (ns, key, version) VALUES ($1, $2, $3)`, ns, key, int64(v))
			return err
		},
		committed: func(ns, key string) (uint64, map[uint64]int, error) {
			v, err := s.Versions(ns).Version(context.Background(), key)
			if err != nil {
				return 0, nil, err
			}
			rows, err := s.DB().Query(`SELECT version, count(*) FROM gc_apps WHERE ns = $1 AND key = $2 GROUP BY version`, ns, key)
			if err != nil {
				return 0, nil, err
			}
			defer rows.Close()
			apps := map[uint64]int{}
			for rows.Next() {
				var version int64
				var n int
				if err := rows.Scan(&version, &n); err != nil {
					return 0, nil, err
				}
				apps[uint64(version)] = n
			}
			return v, apps, rows.Err()
		},
	}
}

func sqliteStore(t testing.TB) *sqlstore.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// postgresStore returns a store on ORDERGEN_TEST_POSTGRES, or nil when it is
// not set.
func postgresStore(t testing.TB) *sqlstore.Store {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		return nil
	}
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// skipPostgres is the message of a test skipped without PostgreSQL.
const skipPostgres = "PostgreSQL skipped: set " + postgresEnv + " to a database DSN (postgres://user@localhost:5432/db?sslmode=disable); .ci/postgres start DIR prints one"

// uniqueNamespace returns a namespace unique to this run, for a database
// shared with earlier runs.
func uniqueNamespace(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := crand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "GC" + hex.EncodeToString(b[:])
}

// faults are the probabilities of the faults a faulty store injects.
type faults struct {
	conflict  float64 // a group's BeginGroup or Commit fails with a conflict
	fail      float64 // a group's Commit fails (rolled back, not retryable)
	ambiguous float64 // a group's Commit commits and reports an error
	slowBegin float64 // a group's BeginGroup waits up to a millisecond first
}

// errInjected and errAmbiguous are the faults' errors that are no conflict.
var (
	errInjected  = errors.New("injected: commit failed")
	errAmbiguous = errors.New("injected: commit outcome unknown (it committed)")
)

// faulty wraps a GroupTxStore with faults.
type faulty[T any] struct {
	durable.GroupTxStore[T]
	conflict error
	f        faults
	counts   *faultCounts
}

// faultCounts counts the faults injected.
type faultCounts struct {
	conflicts, fails, ambiguous atomicCount
}

func (s *faulty[T]) roll(p float64) bool { return p > 0 && rand.Float64() < p }

func (s *faulty[T]) BeginGroup(ctx context.Context, ns string, keys []string) (durable.GroupTx[T], error) {
	if s.roll(s.f.slowBegin) {
		time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond)))) // a slow read, not a signal
	}
	if s.roll(s.f.conflict / 4) {
		s.counts.conflicts.add()
		return nil, fmt.Errorf("injected: begin: %w", s.conflict)
	}
	gtx, err := s.GroupTxStore.BeginGroup(ctx, ns, keys)
	if err != nil {
		return nil, err
	}
	return &faultyTx[T]{GroupTx: gtx, s: s}, nil
}

type faultyTx[T any] struct {
	durable.GroupTx[T]
	s *faulty[T]
}

func (t *faultyTx[T]) Commit(ctx context.Context, writes []durable.KeyWrite) error {
	s := t.s
	switch {
	case s.roll(s.f.conflict):
		s.counts.conflicts.add()
		_ = t.Rollback()
		return fmt.Errorf("injected: commit: %w", s.conflict)
	case s.roll(s.f.fail):
		s.counts.fails.add()
		_ = t.Rollback()
		return errInjected
	case s.roll(s.f.ambiguous):
		if err := t.GroupTx.Commit(ctx, writes); err != nil {
			return err
		}
		s.counts.ambiguous.add()
		return errAmbiguous
	}
	return t.GroupTx.Commit(ctx, writes)
}

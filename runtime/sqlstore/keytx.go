package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/ordergen/ordergen/runtime/durable"
)

// ErrConflict is returned by a KeyTx's Commit when the key's version or
// state is no longer what the transaction read: another writer got there
// first. The transaction is rolled back, the handler's writes with it, and
// the engine retries the event.
var ErrConflict = errors.New("sqlstore: version or state moved by another writer")

// BeginKey starts a transaction for key in namespace and reads the key's
// version and state in it. On PostgreSQL the key's row is locked (SELECT
// ... FOR UPDATE) until the transaction ends; SQLite transactions hold the
// database's write lock from their start. Commit stores the new version and
// state by compare-and-set, so even without the lock (a key with no row
// yet) two transactions can never both advance a key from one version.
func (s *Store) BeginKey(ctx context.Context, namespace, key string) (durable.KeyTx[*sql.Tx], error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: begin transaction for %s %q: %w", namespace, key, err)
	}
	k := &keyTx{s: s, tx: tx, ns: namespace, key: key}
	var version int64
	err = tx.QueryRowContext(ctx, `SELECT version, state FROM ordergen_keys WHERE namespace = $1 AND key = $2`+s.dialect.forUpdate(),
		namespace, key).Scan(&version, &k.state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		_ = tx.Rollback()
		return nil, fmt.Errorf("sqlstore: read version and state of %s %q: %w", namespace, key, err)
	default:
		k.exists, k.version = true, fromSQL(version)
	}
	return k, nil
}

// keyTx is the durable.KeyTx of a Store.
type keyTx struct {
	s       *Store
	tx      *sql.Tx
	ns, key string
	exists  bool // the key had a row when the transaction read it
	version uint64
	state   string
	done    bool
}

func (k *keyTx) Tx() *sql.Tx     { return k.tx }
func (k *keyTx) Version() uint64 { return k.version }
func (k *keyTx) State() string   { return k.state }

func (k *keyTx) Commit(ctx context.Context, version uint64, state string) error {
	if k.done {
		return fmt.Errorf("sqlstore: commit %s %q: %w", k.ns, k.key, sql.ErrTxDone)
	}
	if err := k.store(ctx, version, state); err != nil {
		k.done = true
		_ = k.tx.Rollback() // the error that matters is the write's
		return fmt.Errorf("sqlstore: commit %s %q at version %d: %w", k.ns, k.key, version, err)
	}
	k.done = true
	if err := k.tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit %s %q at version %d: %w", k.ns, k.key, version, err)
	}
	return nil
}

// store writes version and state if they changed, by compare-and-set on
// what the transaction read.
func (k *keyTx) store(ctx context.Context, version uint64, state string) error {
	if version == k.version && state == k.state {
		return nil
	}
	var res sql.Result
	var err error
	if k.exists {
		res, err = k.tx.ExecContext(ctx, `UPDATE ordergen_keys SET version = $3, state = $4
			WHERE namespace = $1 AND key = $2 AND version = $5 AND state = $6`,
			k.ns, k.key, toSQL(version), state, toSQL(k.version), k.state)
	} else {
		res, err = k.tx.ExecContext(ctx, `INSERT INTO ordergen_keys (namespace, key, version, state) VALUES ($1, $2, $3, $4)
			ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version, state = excluded.state
			WHERE ordergen_keys.version = 0 AND ordergen_keys.state = ''`,
			k.ns, k.key, toSQL(version), state)
	}
	if err != nil {
		return err
	}
	ok, err := oneRow(res)
	if err != nil {
		return err
	}
	if !ok {
		return ErrConflict
	}
	return nil
}

func (k *keyTx) Rollback() error {
	if k.done {
		return nil
	}
	k.done = true
	if err := k.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlstore: roll back %s %q: %w", k.ns, k.key, err)
	}
	return nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ordergen/ordergen/runtime/durable"
)

var _ durable.GroupTxStore[*sql.Tx] = (*Store)(nil)

// BeginGroup starts a transaction for keys of namespace and reads all their
// versions and states in it in one read (see the package doc, "Group
// commit"). On PostgreSQL the keys' rows are locked in key order (SELECT
// ... ORDER BY key COLLATE "C" FOR UPDATE), so that groups of several processes cannot
// deadlock over them; a key without a row is not locked, and Commit inserts
// it only if nobody else did meanwhile (compare-and-set from version 0 and
// state ""). SQLite transactions hold the database's write lock from their
// start. keys must be distinct and not empty.
func (s *Store) BeginGroup(ctx context.Context, namespace string, keys []string) (durable.GroupTx[*sql.Tx], error) {
	if namespace == "" {
		return nil, errors.New("sqlstore: begin group: empty namespace")
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("sqlstore: begin group in %s: no keys", namespace)
	}
	g := &groupTx{s: s, ns: namespace, read: make(map[string]groupRead, len(keys))}
	for _, k := range keys {
		if _, dup := g.read[k]; dup {
			return nil, fmt.Errorf("sqlstore: begin group in %s: key %q given twice", namespace, k)
		}
		g.read[k] = groupRead{}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: begin group of %d keys in %s: %w", len(keys), namespace, err)
	}
	g.tx = tx
	if err := g.readKeys(ctx, keys); err != nil {
		_ = tx.Rollback() // the error that matters is the read's
		return nil, fmt.Errorf("sqlstore: read versions and states of %d keys in %s: %w", len(keys), namespace, err)
	}
	return g, nil
}

// readKeys reads the rows of keys into g.read.
func (g *groupTx) readKeys(ctx context.Context, keys []string) error {
	return g.s.readKeyStates(ctx, g.tx, g.ns, keys, true, func(key string, ks durable.KeyState, rowid int64) {
		g.read[key] = groupRead{exists: true, rowid: rowid, KeyState: ks}
	})
}

// keysPerRead bounds the keys of one read on SQLite when they go as a
// parameter each: a statement takes at most 32766.
const keysPerRead = 30000

// readKeyStates calls fn with the version, the state and (on SQLite; 0 on
// PostgreSQL) the rowid of each of keys of ns that has a row, reading in
// tx: on PostgreSQL in one statement (= ANY of one array), the rows locked
// in key order when lock is set; on SQLite in one statement over a JSON
// array of the keys, or in one per keysPerRead keys when a key cannot go
// in JSON as it is (see jsonSafe).
func (s *Store) readKeyStates(ctx context.Context, tx *sql.Tx, ns string, keys []string, lock bool, fn func(string, durable.KeyState, int64)) error {
	if s.dialect == SQLite && jsonSafe(keys...) {
		return scanKeyStates(tx.QueryContext(ctx, sqliteReadJSON, ns, jsonKeys(keys)))(fn)
	}
	step := len(keys)
	if s.dialect != Postgres {
		step = keysPerRead
	}
	for start := 0; start < len(keys); start += step {
		chunk := keys[start:min(start+step, len(keys))]
		cond, args := oneOf(s.dialect, "key", 2, chunk)
		q := `SELECT key, version, state, ` + s.dialect.rowid() + ` FROM ordergen_keys WHERE namespace = $1 AND ` + cond
		if lock && s.dialect == Postgres {
			// FOR UPDATE locks the rows as they leave the sort: in byte
			// order of the keys whatever the database's collation, the
			// same in every transaction.
			q += ` ORDER BY key COLLATE "C" FOR UPDATE`
		}
		if err := scanKeyStates(tx.QueryContext(ctx, q, append([]any{ns}, args...)...))(fn); err != nil {
			return err
		}
	}
	return nil
}

// scanKeyStates returns a function that calls fn with each row of rows
// (key, version, state, rowid) and closes them; err is the query's.
func scanKeyStates(rows *sql.Rows, err error) func(fn func(string, durable.KeyState, int64)) error {
	return func(fn func(string, durable.KeyState, int64)) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key, state string
			var version, rowid int64
			if err := rows.Scan(&key, &version, &state, &rowid); err != nil {
				return err
			}
			fn(key, durable.KeyState{Version: fromSQL(version), State: state}, rowid)
		}
		return rows.Err()
	}
}

// Retryable reports whether err is a conflict worth running a group again
// for: ErrConflict (a version or state moved by another writer), a
// PostgreSQL serialization failure (SQLSTATE 40001) or deadlock (40P01), or
// a busy or locked SQLite database (SQLITE_BUSY, SQLITE_LOCKED and their
// extended codes). The drivers' errors are recognised by their methods
// (pgconn.PgError's SQLState, modernc.org/sqlite's Error.Code), so this
// package imports neither driver.
func (s *Store) Retryable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrConflict) {
		return true
	}
	switch s.dialect {
	case Postgres:
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) {
			switch pe.SQLState() {
			case "40001", "40P01":
				return true
			}
		}
	case SQLite:
		var se interface{ Code() int }
		if errors.As(err, &se) {
			const busy, locked = 5, 6 // SQLITE_BUSY, SQLITE_LOCKED
			switch se.Code() & 0xff { // the primary code of an extended one
			case busy, locked:
				return true
			}
		}
	}
	return false
}

// groupRead is what BeginGroup read of one key.
type groupRead struct {
	exists bool  // the key had a row
	rowid  int64 // on SQLite, the row's rowid
	durable.KeyState
}

// groupTx is the durable.GroupTx of a Store.
type groupTx struct {
	s    *Store
	tx   *sql.Tx
	ns   string
	read map[string]groupRead
	done bool
}

func (g *groupTx) Tx() *sql.Tx { return g.tx }

func (g *groupTx) Read(key string) durable.KeyState { return g.read[key].KeyState }

func (g *groupTx) Savepoint(ctx context.Context, name string) error {
	return g.savepoint(ctx, "SAVEPOINT ", name)
}

func (g *groupTx) RollbackTo(ctx context.Context, name string) error {
	return g.savepoint(ctx, "ROLLBACK TO SAVEPOINT ", name)
}

// maxSavepointName is the longest savepoint name: PostgreSQL truncates
// identifiers beyond 63 bytes, which could make two names one.
const maxSavepointName = 63

func (g *groupTx) savepoint(ctx context.Context, stmt, name string) error {
	if err := validSavepoint(name); err != nil {
		return fmt.Errorf("sqlstore: %s in group of %s: %w", strings.ToLower(strings.TrimSpace(stmt)), g.ns, err)
	}
	if g.done {
		return fmt.Errorf("sqlstore: %s%s in group of %s: %w", strings.ToLower(stmt), name, g.ns, sql.ErrTxDone)
	}
	// Quoted, so that a name such as "order" is not a keyword; validSavepoint
	// keeps quotes out of it.
	if _, err := g.tx.ExecContext(ctx, stmt+`"`+name+`"`); err != nil {
		return fmt.Errorf("sqlstore: %s%s in group of %s: %w", strings.ToLower(stmt), name, g.ns, err)
	}
	return nil
}

// validSavepoint accepts the names that are the same identifier in both
// dialects, quoted or not: [a-z0-9_]+, at most maxSavepointName bytes.
func validSavepoint(name string) error {
	if name == "" || len(name) > maxSavepointName {
		return fmt.Errorf("savepoint name %q: want 1 to %d of [a-z0-9_]", name, maxSavepointName)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("savepoint name %q: want only [a-z0-9_]", name)
		}
	}
	return nil
}

// Commit stores writes by compare-and-set on what BeginGroup read and
// commits. Writes that change nothing are left out. Bad writes (a key not
// in the group, a key twice) are refused before anything is written and
// leave the transaction open: Commit again, or Rollback. Any other failure
// rolls the transaction back; a key moved by another writer fails with an
// error wrapping ErrConflict that names it.
func (g *groupTx) Commit(ctx context.Context, writes []durable.KeyWrite) error {
	if g.done {
		return fmt.Errorf("sqlstore: commit group of %s: %w", g.ns, sql.ErrTxDone)
	}
	changed, err := g.changed(writes)
	if err != nil {
		return fmt.Errorf("sqlstore: commit group of %s: %w", g.ns, err)
	}
	if len(changed) > 0 {
		if g.s.dialect == Postgres {
			err = g.storePostgres(ctx, changed)
		} else {
			err = g.storeSQLite(ctx, changed)
		}
		if err != nil {
			g.done = true
			_ = g.tx.Rollback() // the error that matters is the write's
			return fmt.Errorf("sqlstore: commit group of %d keys in %s: %w", len(changed), g.ns, err)
		}
	}
	g.done = true
	if err := g.tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit group of %d keys in %s: %w", len(changed), g.ns, err)
	}
	return nil
}

// changed checks writes and returns those that change their key.
func (g *groupTx) changed(writes []durable.KeyWrite) ([]durable.KeyWrite, error) {
	var seen map[string]struct{}
	if len(writes) > 1 {
		seen = make(map[string]struct{}, len(writes))
	}
	changed := writes[:0:0]
	for i, w := range writes {
		r, ok := g.read[w.Key]
		if !ok {
			return nil, fmt.Errorf("write %d: key %q is not one of the group's", i, w.Key)
		}
		if seen != nil {
			if _, dup := seen[w.Key]; dup {
				return nil, fmt.Errorf("write %d: key %q written twice", i, w.Key)
			}
			seen[w.Key] = struct{}{}
		}
		if w.KeyState != r.KeyState {
			changed = append(changed, w)
		}
	}
	return changed, nil
}

func (g *groupTx) Rollback() error {
	if g.done {
		return nil
	}
	g.done = true
	if err := g.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlstore: roll back group of %s: %w", g.ns, err)
	}
	return nil
}

// conflict returns the error for keys whose version or state moved.
func conflict(moved []string, of int) error {
	const named = 5
	list := moved
	more := ""
	if len(list) > named {
		list, more = list[:named], fmt.Sprintf(" and %d more", len(moved)-named)
	}
	quoted := make([]string, len(list))
	for i, k := range list {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	return fmt.Errorf("%d of %d keys: %s%s: %w", len(moved), of, strings.Join(quoted, ", "), more, ErrConflict)
}

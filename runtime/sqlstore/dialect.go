package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Dialect is the SQL dialect of a database. The queries are the same for
// both but for row locks, column types and how migrations are serialised.
type Dialect uint8

const (
	// SQLite is SQLite 3.35 or later (the embedded default, through
	// modernc.org/sqlite: see runtime/sqlstore/sqlite). Open it with
	// _txlock=immediate, so that every transaction takes the write lock when
	// it begins, and a busy_timeout.
	SQLite Dialect = iota + 1
	// Postgres is PostgreSQL 12 or later (see runtime/sqlstore/postgres).
	Postgres
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return fmt.Sprintf("Dialect(%d)", uint8(d))
}

func (d Dialect) valid() bool { return d == SQLite || d == Postgres }

// forUpdate is the clause that locks the rows a SELECT reads until the
// transaction ends. SQLite has none and needs none: a transaction begun
// with BEGIN IMMEDIATE holds the database's only write lock.
func (d Dialect) forUpdate() string {
	if d == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// rowid is the column that reads a row's rowid in a SELECT: SQLite's
// rowid (a table with a primary key of several columns has one), stable
// while a transaction holds the write lock; 0 on PostgreSQL, which has
// none to offer that lasts.
func (d Dialect) rowid() string {
	if d == Postgres {
		return "0"
	}
	return "rowid"
}

// migrationLockKey is the pg_advisory_xact_lock key that serialises the
// migrations of every replica: "ordergen" in ASCII.
const migrationLockKey = 0x6f72646572676e

// lockMigrations makes tx the only migration in progress. On SQLite the
// transaction already holds the write lock (BEGIN IMMEDIATE).
func (d Dialect) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	if d != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockKey)); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	return nil
}

// types are the column types and the auto-increment primary key of a
// dialect.
func (d Dialect) types() (integer, blob, id string) {
	if d == Postgres {
		return "BIGINT", "BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	return "INTEGER", "BLOB", "INTEGER PRIMARY KEY AUTOINCREMENT"
}

// oneOf returns the condition that col is one of vals, with its arguments
// numbered from $first: col = ANY($first) with vals as one array argument on
// PostgreSQL (one statement text whatever their number, so pgx's statement
// cache serves it), col IN ($first, ...) with an argument each on SQLite.
// vals must not be empty.
func oneOf[T any](d Dialect, col string, first int, vals []T) (string, []any) {
	if d == Postgres {
		return fmt.Sprintf("%s = ANY($%d)", col, first), []any{vals}
	}
	var b strings.Builder
	args := make([]any, len(vals))
	b.WriteString(col + " IN (")
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", first+i)
		args[i] = v
	}
	b.WriteString(")")
	return b.String(), args
}

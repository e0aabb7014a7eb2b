package sqlstore

import (
	"context"
	"database/sql"
)

// MigrateTo migrates db's tables up to schema version target only, as an
// older ordergen left them, for the migration tests.
func MigrateTo(ctx context.Context, db *sql.DB, d Dialect, target int) error {
	s := &Store{db: db, dialect: d}
	return s.migrateTo(ctx, target)
}

// ForDialect returns a store of dialect d without a database, for the
// tests of what needs none (Retryable).
func ForDialect(d Dialect) *Store { return &Store{dialect: d} }

// SQLiteGroupStatements are the statements of a group on SQLite, for the
// test of their query plans.
var SQLiteGroupStatements = map[string]string{"read": sqliteReadJSON, "update": sqliteUpdateJSON, "insert": sqliteInsertJSON}

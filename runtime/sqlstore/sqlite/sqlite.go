package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// BusyTimeout is how long a transaction waits for another process that holds
// the file's write lock before it fails.
const BusyTimeout = 10 * time.Second

// Open opens (creating it if needed) the SQLite database file at path and
// returns a store on it, with its tables migrated. Close the store to close
// the file.
func Open(ctx context.Context, path string) (*sqlstore.Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: empty database path")
	}
	if strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: database path %q: give a plain file path, without '?', '#' or a file: prefix", path)
	}
	dsn := path + "?_txlock=immediate&_busy_timeout=" + fmt.Sprint(BusyTimeout.Milliseconds()) +
		"&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	s, err := sqlstore.New(ctx, db, sqlstore.SQLite, sqlstore.ClosingDB())
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	return s, nil
}

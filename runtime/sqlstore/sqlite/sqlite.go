package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	if err := connect(ctx, db); err != nil {
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

// connect makes the handle's connection. The first connections to a new
// file race to set it up (its journal mode), and SQLite answers the losers
// SQLITE_BUSY at once, without waiting in its busy handler: replicas that
// start together on a new database try again, within BusyTimeout.
func connect(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(BusyTimeout)
	wait := time.Millisecond
	for {
		err := db.PingContext(ctx)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// busy reports whether err is SQLITE_BUSY (or one of its extended codes).
func busy(err error) bool {
	var se interface{ Code() int }
	const sqliteBusy = 5
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusy
}

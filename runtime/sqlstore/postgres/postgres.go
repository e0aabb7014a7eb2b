package postgres

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// MaxConns is the size of the connection pool Open sets up. Every key in
// progress with a transactional handler holds a connection; set
// Store.DB().SetMaxOpenConns to change it.
const MaxConns = 16

// Open connects to the PostgreSQL database at dsn (a URL,
// postgres://user:password@host:port/database?sslmode=disable, or pgx's
// key=value form) and returns a store on it, with its tables migrated and
// its Listener set (see Notifications): outbox relays on it wake on new
// rows. Close the store to close the pool.
func Open(ctx context.Context, dsn string) (*sqlstore.Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.SetMaxOpenConns(MaxConns)
	db.SetMaxIdleConns(MaxConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	s, err := sqlstore.New(ctx, db, sqlstore.Postgres, sqlstore.ClosingDB(), Notifications(db))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

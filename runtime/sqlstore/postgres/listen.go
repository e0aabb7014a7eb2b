package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// Notifications returns the store option that lets the store's users wait
// for PostgreSQL's notifications (LISTEN) on connections of db, which must
// be a pgx database/sql handle (sql.Open("pgx", dsn)). Open passes it; give
// it to sqlstore.New for a store on a handle of your own, so that outbox
// relays wake on new rows instead of polling.
func Notifications(db *sql.DB) sqlstore.Option { return sqlstore.WithListener(listener{db}) }

// listener is the sqlstore.Listener of a pgx database/sql handle: each
// Listen takes one connection of the pool for as long as it listens.
type listener struct{ db *sql.DB }

// Listen implements sqlstore.Listener. The connection it used is closed
// afterwards rather than given back to the pool, so that no pooled
// connection keeps listening (and collecting notifications nobody reads).
func (l listener) Listen(ctx context.Context, channel string, ready func(), notify func(payload string)) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("postgres: listen on %s: %w", channel, err)
	}
	defer conn.Close()
	var listenErr error
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			listenErr = fmt.Errorf("postgres: listen on %s: the handle's driver is %T, not pgx's", channel, dc)
			return driver.ErrBadConn
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			listenErr = fmt.Errorf("postgres: listen on %s: %w", channel, err)
			return driver.ErrBadConn
		}
		ready()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				listenErr = fmt.Errorf("postgres: listen on %s: %w", channel, err)
				return driver.ErrBadConn // close it: it listens still
			}
			notify(n.Payload)
		}
	})
	if listenErr != nil {
		return listenErr
	}
	if err != nil && !errors.Is(err, driver.ErrBadConn) {
		return fmt.Errorf("postgres: listen on %s: %w", channel, err)
	}
	return nil
}

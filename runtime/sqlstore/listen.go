package sqlstore

import "context"

// Listener waits for a database's notifications: PostgreSQL's LISTEN, as
// the stores of runtime/sqlstore/postgres have one. Outbox relays listen on
// OutboxChannel, on which a trigger announces every new row, instead of
// polling.
type Listener interface {
	// Listen listens on channel on a connection of its own, calls ready
	// once it listens, then calls notify with the payload of every
	// notification, in order, until ctx ends or the connection fails. It
	// returns why it stopped (ctx's error once ctx ended). notify must not
	// block for long: notifications wait meanwhile.
	Listen(ctx context.Context, channel string, ready func(), notify func(payload string)) error
}

// WithListener gives the store l, through which its users (outbox relays)
// wait for the database's notifications. The Open function of
// runtime/sqlstore/postgres passes it; a PostgreSQL store made with New
// without it has relays poll instead (postgres.Notifications makes one for
// a database handle).
func WithListener(l Listener) Option { return func(s *Store) { s.listener = l } }

// Listener returns the store's Listener, nil when the database cannot
// notify (SQLite) or none was given.
func (s *Store) Listener() Listener { return s.listener }

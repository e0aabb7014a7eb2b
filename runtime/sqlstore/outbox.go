package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
)

// The transactional outbox, the producers' side: a generated AccountOutbox
// appends each event in the caller's transaction, numbered by the key's
// sequence in ordergen_outbox_seq, and a relay (runtime/outbox) ships the
// rows of ordergen_outbox in per-key order (outboxrelay.go). Entities name
// the outboxes: the schema's entity ("Account"), whatever its subscribers.

// OutboxChannel is the PostgreSQL notification channel on which a trigger
// announces every new outbox row, with its entity as the payload: relays
// LISTEN on it instead of polling.
const OutboxChannel = "ordergen_outbox"

var _ durable.OutboxStore[*sql.Tx] = (*Store)(nil)

// ErrOutboxSeeded is returned by SeedOutbox for a key whose outbox
// sequence is already at another version: it has events, or was seeded
// before.
var ErrOutboxSeeded = errors.New("sqlstore: the key's outbox sequence is already set")

// ErrOutboxKeyFlowing is returned by RetryOutboxKey for a key that is
// neither parked nor waiting to retry: there is nothing to retry.
var ErrOutboxKeyFlowing = errors.New("sqlstore: the outbox key is neither parked nor retrying")

// AppendOutbox implements durable.OutboxStore: in tx, it takes key's next
// version from entity's sequence, calls encode with it and inserts the
// encoded event. tx must be a transaction of the store's database
// (Store.DB; on SQLite the store's only connection).
//
// On PostgreSQL the sequence row is advanced by INSERT ... ON CONFLICT DO
// UPDATE ... RETURNING, which locks it until tx ends: a concurrent
// transaction of the same key waits at that statement and then reads the
// version tx committed (or the one before, when tx rolled back), so
// versions are consecutive and never given twice. Under READ COMMITTED
// (the default) it just waits; under REPEATABLE READ or SERIALIZABLE the
// second transaction fails with a serialization error, to be retried by
// the caller as any such error. On SQLite, transactions hold the
// database's only write lock.
func (s *Store) AppendOutbox(ctx context.Context, tx *sql.Tx, entity, key string, encode func(version uint64) (durable.RawEvent, error)) (uint64, error) {
	switch {
	case tx == nil:
		return 0, fmt.Errorf("sqlstore: append to the outbox of %s %q: nil transaction", entity, key)
	case entity == "":
		return 0, fmt.Errorf("sqlstore: append to the outbox of key %q: empty entity", key)
	case encode == nil:
		return 0, fmt.Errorf("sqlstore: append to the outbox of %s %q: nil encode", entity, key)
	}
	var v int64
	err := tx.QueryRowContext(ctx, `INSERT INTO ordergen_outbox_seq (entity, key, version) VALUES ($1, $2, 1)
		ON CONFLICT (entity, key) DO UPDATE SET version = ordergen_outbox_seq.version + 1
		RETURNING version`, entity, key).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: next outbox version of %s %q: %w", entity, key, err)
	}
	version := fromSQL(v)
	raw, err := encode(version)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: encode the outbox event of %s %q at version %d: %w", entity, key, version, err)
	}
	data := raw.Data
	if data == nil {
		data = []byte{}
	}
	parent, state := s.traceOf(ctx)
	if _, err := tx.ExecContext(ctx, `INSERT INTO ordergen_outbox (entity, key, version, name, data, created_ns, trace_parent, trace_state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		entity, key, v, raw.Name, data, time.Now().UnixNano(), parent, state); err != nil {
		return 0, fmt.Errorf("sqlstore: insert the outbox event of %s %q at version %d: %w", entity, key, version, err)
	}
	s.outboxWritten(entity)
	return version, nil
}

// SeedOutbox implements durable.OutboxStore: it sets the version that
// key's first outbox event of entity follows, in tx, or in a transaction
// of its own when tx is nil. Seeding a key again at the same version is
// harmless; a key whose sequence is at another version (it has events, or
// was seeded otherwise) is refused with ErrOutboxSeeded, since moving it
// would leave a gap, or a version given twice, in what consumers see.
func (s *Store) SeedOutbox(ctx context.Context, tx *sql.Tx, entity, key string, version uint64) error {
	if entity == "" || version == 0 {
		return fmt.Errorf("sqlstore: seed the outbox of %s %q at version %d: want an entity and a version of 1 or more", entity, key, version)
	}
	seed := func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO ordergen_outbox_seq (entity, key, version) VALUES ($1, $2, $3) ON CONFLICT (entity, key) DO NOTHING`,
			entity, key, toSQL(version))
		if err != nil {
			return err
		}
		if ok, err := oneRow(res); err != nil || ok {
			return err
		}
		var current int64
		if err := tx.QueryRowContext(ctx, `SELECT version FROM ordergen_outbox_seq WHERE entity = $1 AND key = $2`, entity, key).Scan(&current); err != nil {
			return err
		}
		if fromSQL(current) != version {
			return fmt.Errorf("%w: it is at version %d (seed a key before its first outbox event)", ErrOutboxSeeded, fromSQL(current))
		}
		return nil
	}
	var err error
	if tx != nil {
		err = seed(tx)
	} else {
		err = s.inTx(ctx, seed)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: seed the outbox of %s %q at version %d: %w", entity, key, version, err)
	}
	return nil
}

// OutboxVersion returns the last version entity's outbox gave key (or
// seeded it with), 0 when none.
func (s *Store) OutboxVersion(ctx context.Context, entity, key string) (uint64, error) {
	var v int64
	err := s.db.QueryRowContext(ctx, `SELECT version FROM ordergen_outbox_seq WHERE entity = $1 AND key = $2`, entity, key).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlstore: read the outbox version of %s %q: %w", entity, key, err)
	}
	return fromSQL(v), nil
}

// OutboxEvent is an event in an entity's outbox.
type OutboxEvent struct {
	// ID is the row's identity: it orders the rows as they were inserted.
	ID int64
	// Key is the event's key, as text (durable.EncodeKey).
	Key string
	// Version is the version the outbox gave it.
	Version uint64
	// Event is the event as the entity's codec encoded it.
	Event durable.RawEvent
	// Created is when it was appended.
	Created time.Time
	// TraceParent and TraceState are the W3C trace context its writer
	// appended it under (see Store.Trace): empty for none.
	TraceParent, TraceState string
}

// OutboxEvents returns up to limit of key's unsent events in entity's
// outbox (all of them when limit is 0 or less) whose version is above
// after, in version order.
func (s *Store) OutboxEvents(ctx context.Context, entity, key string, after uint64, limit int) ([]OutboxEvent, error) {
	query := `SELECT id, key, version, name, data, created_ns, trace_parent, trace_state FROM ordergen_outbox
		WHERE entity = $1 AND key = $2 AND sent_ns IS NULL AND version > $3 ORDER BY version`
	args := []any{entity, key, toSQL(after)}
	if limit > 0 {
		query += ` LIMIT $4`
		args = append(args, limit)
	}
	events, err := queryOutboxEvents(ctx, s.db, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read the outbox of %s %q: %w", entity, key, err)
	}
	return events, nil
}

// querier is what reads rows: a *sql.DB, a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryOutboxEvents runs query, which selects id, key, version, name, data,
// created_ns, trace_parent and trace_state.
func queryOutboxEvents(ctx context.Context, q querier, query string, args ...any) ([]OutboxEvent, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OutboxEvent
	for rows.Next() {
		var ev OutboxEvent
		var version, created int64
		if err := rows.Scan(&ev.ID, &ev.Key, &version, &ev.Event.Name, &ev.Event.Data, &created, &ev.TraceParent, &ev.TraceState); err != nil {
			return nil, err
		}
		ev.Version, ev.Created = fromSQL(version), timeFromSQL(created)
		out = append(out, ev)
	}
	return out, rows.Err()
}

// outboxWritten wakes the relays of entity's outbox that wait in this
// process on a store that cannot notify them (SQLite): a writer of the
// same process has appended. On SQLite the store's single connection is
// held by the writer's transaction until it ends, so a relay that wakes
// up reads the rows once they are committed.
func (s *Store) outboxWritten(entity string) {
	if s.listener != nil {
		return // the database notifies every relay (a trigger, at commit)
	}
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	for ch := range s.wakers[entity] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// WakeOnAppend registers ch to receive a value, without blocking, when a
// writer of this process appends to entity's outbox and the store has no
// Listener (SQLite): relays use it to start a round at once instead of at
// their next poll. It returns the function that unregisters ch. Stores
// with a Listener never send on ch: the database notifies every process.
func (s *Store) WakeOnAppend(entity string, ch chan<- struct{}) (unregister func()) {
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	if s.wakers == nil {
		s.wakers = make(map[string]map[chan<- struct{}]struct{})
	}
	if s.wakers[entity] == nil {
		s.wakers[entity] = make(map[chan<- struct{}]struct{})
	}
	s.wakers[entity][ch] = struct{}{}
	return func() {
		s.wakeMu.Lock()
		defer s.wakeMu.Unlock()
		delete(s.wakers[entity], ch)
		if len(s.wakers[entity]) == 0 {
			delete(s.wakers, entity)
		}
	}
}

package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The transactional outbox, the operators' side: the keys that do not flow
// (parked, or retrying after failed sends), their unsent events, and what
// to do with them. Unlike a consumer's park, an outbox key needs no
// handler to resume: RetryOutboxKey and DiscardOutboxKey act in the store,
// and the next relay round sees it.

// OutboxKey is a key of an entity's outbox that does not flow: parked, or
// waiting to retry after failed sends.
type OutboxKey struct {
	// Key is the key, as text.
	Key string
	// Unsent is how many of its events are not sent.
	Unsent int
	// Attempts is how many sends of its first unsent event failed.
	Attempts int
	// Reason is the last failure.
	Reason string
	// Parked is when it parked; zero for a key that retries.
	Parked time.Time
	// RetryAt is when a relay may try it again; zero for a parked key.
	RetryAt time.Time
	// Oldest is when its first unsent event was appended; zero when none.
	Oldest time.Time
}

// OutboxKeys returns up to limit of the keys of entity's outbox that do not
// flow (all of them when limit is 0 or less): the parked ones first, oldest
// park first, then those retrying, by key.
func (s *Store) OutboxKeys(ctx context.Context, entity string, limit int) ([]OutboxKey, error) {
	query := `SELECT k.key, k.attempts, k.retry_ns, k.parked_ns, k.reason,
			(SELECT COUNT(*) FROM ordergen_outbox o WHERE o.entity = k.entity AND o.key = k.key AND o.sent_ns IS NULL),
			(SELECT COALESCE(MIN(o.created_ns), 0) FROM ordergen_outbox o WHERE o.entity = k.entity AND o.key = k.key AND o.sent_ns IS NULL)
		FROM ordergen_outbox_keys k WHERE k.entity = $1 AND (k.parked_ns <> 0 OR k.retry_ns <> 0)
		ORDER BY CASE WHEN k.parked_ns <> 0 THEN 0 ELSE 1 END, k.parked_ns, k.key`
	args := []any{entity}
	if limit > 0 {
		query += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list the stopped outbox keys of %s: %w", entity, err)
	}
	defer rows.Close()
	var out []OutboxKey
	for rows.Next() {
		var k OutboxKey
		var attempts, retry, parked, unsent, oldest int64
		if err := rows.Scan(&k.Key, &attempts, &retry, &parked, &k.Reason, &unsent, &oldest); err != nil {
			return nil, fmt.Errorf("sqlstore: list the stopped outbox keys of %s: %w", entity, err)
		}
		k.Attempts, k.Unsent, k.Parked, k.Oldest = int(attempts), int(unsent), timeFromSQL(parked), timeFromSQL(oldest)
		if parked == 0 {
			k.RetryAt = timeFromSQL(retry)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list the stopped outbox keys of %s: %w", entity, err)
	}
	return out, nil
}

// OutboxEntities returns the entities that used the outbox (that have a
// sequence), sorted.
func (s *Store) OutboxEntities(ctx context.Context) ([]string, error) {
	// A skip scan of the primary key: one lookup per entity, however many
	// keys each has.
	return s.namespaces(ctx, `WITH RECURSIVE e(entity) AS (
			SELECT MIN(entity) FROM ordergen_outbox_seq
			UNION ALL
			SELECT (SELECT MIN(s.entity) FROM ordergen_outbox_seq s WHERE s.entity > e.entity) FROM e WHERE e.entity IS NOT NULL)
		SELECT entity FROM e WHERE entity IS NOT NULL ORDER BY entity`)
}

// RetryOutboxKey lets a parked or retrying key of entity's outbox flow
// again at once: its attempts and park are cleared and the next relay
// round sends its first unsent event. It waits for a relay round that
// holds the key to end. A key that flows already is refused with
// ErrOutboxKeyFlowing.
func (s *Store) RetryOutboxKey(ctx context.Context, entity, key string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE ordergen_outbox_keys SET attempts = 0, retry_ns = 0, parked_ns = 0, reason = ''
		WHERE entity = $1 AND key = $2 AND (parked_ns <> 0 OR retry_ns <> 0)`, entity, key)
	if err != nil {
		return fmt.Errorf("sqlstore: retry outbox key %s %q: %w", entity, key, err)
	}
	ok, err := oneRow(res)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("sqlstore: retry outbox key %s %q: %w", entity, key, ErrOutboxKeyFlowing)
	}
	s.announce(ctx, entity)
	return nil
}

// OutboxDiscarded says what DiscardOutboxKey dropped.
type OutboxDiscarded struct {
	// Events is how many unsent events were dropped.
	Events int
	// From and To are the first and last versions dropped (0 when none):
	// consumers never see them, so their guards find a gap there.
	From, To uint64
}

// DiscardOutboxKey drops every unsent event of a parked or retrying key of
// entity's outbox and lets the key flow again: events appended later are
// sent. The consumers never see the versions dropped; their version
// guards find a gap there (a snapshot event after it is applied; a delta
// waits in the resequencer and the key parks, or resyncs, on their side),
// so prefer RetryOutboxKey once the sink's refusal is fixed. It waits for
// a relay round that holds the key to end. A key that flows is refused
// with ErrOutboxKeyFlowing: a relay may be sending it.
func (s *Store) DiscardOutboxKey(ctx context.Context, entity, key string) (OutboxDiscarded, error) {
	var d OutboxDiscarded
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var parked, retry int64
		err := tx.QueryRowContext(ctx, `SELECT parked_ns, retry_ns FROM ordergen_outbox_keys WHERE entity = $1 AND key = $2`+s.dialect.forUpdate(),
			entity, key).Scan(&parked, &retry)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrOutboxKeyFlowing
		case err != nil:
			return fmt.Errorf("lock key: %w", err)
		case parked == 0 && retry == 0:
			return ErrOutboxKeyFlowing
		}
		// One statement both deletes and reports: on PostgreSQL each
		// statement reads its own snapshot, so a count before the delete
		// would miss an event committed in between, and then delete it
		// unreported.
		rows, err := tx.QueryContext(ctx, `DELETE FROM ordergen_outbox WHERE entity = $1 AND key = $2 AND sent_ns IS NULL RETURNING version`, entity, key)
		if err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				return fmt.Errorf("delete events: %w", err)
			}
			version := fromSQL(v)
			if d.Events == 0 || version < d.From {
				d.From = version
			}
			d.To = max(d.To, version)
			d.Events++
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
		rows.Close()
		if _, err := tx.ExecContext(ctx, `UPDATE ordergen_outbox_keys SET attempts = 0, retry_ns = 0, parked_ns = 0, reason = '' WHERE entity = $1 AND key = $2`,
			entity, key); err != nil {
			return fmt.Errorf("unpark: %w", err)
		}
		return nil
	})
	if err != nil {
		return OutboxDiscarded{}, fmt.Errorf("sqlstore: discard outbox key %s %q: %w", entity, key, err)
	}
	return d, nil
}

// DeleteOutbox deletes everything of entity's outbox: its events, sent or
// not, its sequences and its keys' state. Use it for an entity gone for
// good (or in tests), never for one that runs: its keys would be numbered
// from 1 again, and consumers' guards skip versions they have seen.
func (s *Store) DeleteOutbox(ctx context.Context, entity string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"ordergen_outbox", "ordergen_outbox_seq", "ordergen_outbox_keys"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE entity = $1`, entity); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlstore: delete the outbox of %s: %w", entity, err)
	}
	return nil
}

// announce wakes entity's relays: NOTIFY on PostgreSQL, the relays of this
// process elsewhere. A failure to notify only delays them to their next
// poll, so it is ignored.
func (s *Store) announce(ctx context.Context, entity string) {
	if s.dialect == Postgres {
		_, _ = s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, OutboxChannel, entity)
	}
	s.outboxWritten(entity)
}

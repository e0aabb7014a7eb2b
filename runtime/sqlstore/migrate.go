package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SchemaVersion is the version of the tables this package creates and
// reads. A database migrated by a newer ordergen (a higher version) is
// refused rather than misread.
const SchemaVersion = 3

// migrations returns the statements that take a database from version i to
// i+1, for i from 0.
func (d Dialect) migrations() [][]string {
	integer, blob, id := d.types()
	r := strings.NewReplacer("{integer}", integer, "{blob}", blob, "{id}", id)
	return [][]string{{
		// Guard rows: the last applied version and the state of each key.
		r.Replace(`CREATE TABLE ordergen_keys (
			namespace TEXT NOT NULL,
			key TEXT NOT NULL,
			version {integer} NOT NULL DEFAULT 0,
			state TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (namespace, key))`),
		// One row per parked key; id orders the parks, next_seq numbers
		// their events.
		r.Replace(`CREATE TABLE ordergen_parks (
			id {id},
			namespace TEXT NOT NULL,
			key TEXT NOT NULL,
			reason TEXT NOT NULL,
			since_ns {integer} NOT NULL,
			next_seq {integer} NOT NULL,
			UNIQUE (namespace, key))`),
		r.Replace(`CREATE TABLE ordergen_parked_events (
			namespace TEXT NOT NULL,
			key TEXT NOT NULL,
			seq {integer} NOT NULL,
			name TEXT NOT NULL,
			data {blob} NOT NULL,
			err TEXT NOT NULL,
			attempts {integer} NOT NULL,
			at_ns {integer} NOT NULL,
			PRIMARY KEY (namespace, key, seq))`),
		// Operator requests (replay, discard) that running services serve.
		r.Replace(`CREATE TABLE ordergen_requests (
			id {id},
			namespace TEXT NOT NULL,
			key TEXT NOT NULL,
			action TEXT NOT NULL,
			requested_ns {integer} NOT NULL,
			claimed_ns {integer},
			done_ns {integer},
			result TEXT NOT NULL DEFAULT '')`),
		`CREATE INDEX ordergen_requests_pending ON ordergen_requests (namespace, done_ns)`,
	}, d.outboxMigration(r), outboxTraceMigration}
}

// outboxMigration is schema version 2: the transactional outbox (see
// outbox.go). ordergen_outbox_seq is the producers' sequence, one row per
// entity and key, apart from the consumers' guard versions in
// ordergen_keys; ordergen_outbox holds the events, unsent while sent_ns is
// NULL; ordergen_outbox_keys is the relays' row per key: the row they lock
// while they ship the key, with its retries and its park. On PostgreSQL a
// trigger notifies OutboxChannel of every new row, so that relays wake up
// instead of polling.
func (d Dialect) outboxMigration(r *strings.Replacer) []string {
	stmts := []string{
		r.Replace(`CREATE TABLE ordergen_outbox_seq (
			entity TEXT NOT NULL,
			key TEXT NOT NULL,
			version {integer} NOT NULL,
			PRIMARY KEY (entity, key))`),
		r.Replace(`CREATE TABLE ordergen_outbox (
			id {id},
			entity TEXT NOT NULL,
			key TEXT NOT NULL,
			version {integer} NOT NULL,
			name TEXT NOT NULL,
			data {blob} NOT NULL,
			created_ns {integer} NOT NULL,
			sent_ns {integer})`),
		// The relays' scan, oldest first; a key's unsent events in version
		// order (unique: the sequence never gives one version twice); the
		// pruning of sent events.
		`CREATE INDEX ordergen_outbox_unsent ON ordergen_outbox (entity, id) WHERE sent_ns IS NULL`,
		`CREATE UNIQUE INDEX ordergen_outbox_unsent_key ON ordergen_outbox (entity, key, version) WHERE sent_ns IS NULL`,
		`CREATE INDEX ordergen_outbox_sent ON ordergen_outbox (entity, sent_ns) WHERE sent_ns IS NOT NULL`,
		r.Replace(`CREATE TABLE ordergen_outbox_keys (
			entity TEXT NOT NULL,
			key TEXT NOT NULL,
			attempts {integer} NOT NULL DEFAULT 0,
			retry_ns {integer} NOT NULL DEFAULT 0,
			parked_ns {integer} NOT NULL DEFAULT 0,
			reason TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (entity, key))`),
		// The keys that do not flow, for the operators and the metrics.
		`CREATE INDEX ordergen_outbox_keys_stopped ON ordergen_outbox_keys (entity) WHERE parked_ns <> 0 OR retry_ns <> 0`,
	}
	if d == Postgres {
		stmts = append(stmts,
			`CREATE FUNCTION ordergen_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				PERFORM pg_notify('`+OutboxChannel+`', NEW.entity);
				RETURN NULL;
			END $$`,
			`CREATE TRIGGER ordergen_outbox_notify AFTER INSERT ON ordergen_outbox
				FOR EACH ROW EXECUTE FUNCTION ordergen_outbox_notify()`)
	}
	return stmts
}

// migrate creates or upgrades the tables, in one transaction that no other
// migration runs beside: two replicas starting at once both succeed, and
// only one of them changes anything. It is idempotent.
func (s *Store) migrate(ctx context.Context) error { return s.migrateTo(ctx, SchemaVersion) }

// migrateTo migrates up to version target (tests start from older
// versions).
func (s *Store) migrateTo(ctx context.Context, target int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if err := s.dialect.lockMigrations(ctx, tx); err != nil {
		return err
	}
	integer, _, _ := s.dialect.types()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ordergen_schema (
		version `+integer+` PRIMARY KEY,
		applied_ns `+integer+` NOT NULL)`); err != nil {
		return fmt.Errorf("create schema table: %w", err)
	}
	var current sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM ordergen_schema`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	from := int(current.Int64)
	if from > SchemaVersion {
		return fmt.Errorf("%w: the database has ordergen schema version %d, this ordergen knows up to %d: upgrade github.com/ordergen/ordergen", ErrSchemaTooNew, from, SchemaVersion)
	}
	steps := s.dialect.migrations()
	for v := from; v < target; v++ {
		for _, stmt := range steps[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ordergen_schema (version, applied_ns) VALUES ($1, $2)`, v+1, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("record schema version %d: %w", v+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}

// ErrSchemaTooNew is returned by New for a database whose tables a newer
// ordergen created.
var ErrSchemaTooNew = errors.New("sqlstore: database schema is newer than this ordergen")

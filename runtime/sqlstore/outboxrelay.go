package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The transactional outbox, the relays' side. A relay's round claims some
// keys of an entity (ClaimOutbox): their first unsent events, oldest key
// first, with the keys held against every other relay until the claim
// ends; it sends them, then records in the same transaction what was sent
// and what failed (OutboxClaim.Commit). A crash anywhere before the commit
// leaves every event of the claim unsent, and its keys free: only the
// events a crashed round had sent are sent again.
//
// Holding a key: on PostgreSQL, the claim locks the key's row of
// ordergen_outbox_keys (SELECT ... FOR UPDATE SKIP LOCKED) until it ends,
// so two relays never ship one key at once, and a relay skips, without
// waiting, the keys another holds. Writers never touch that row (they
// advance ordergen_outbox_seq), so a round does not hold up the business
// transactions. On SQLite the claim's transaction holds the database's
// only write lock (BEGIN IMMEDIATE): one relay at a time, and writers wait
// for the round to commit. Either hold lasts as long as the transaction's
// database session; a relay confirms it (OutboxClaim.Held) before each
// send.

// OutboxClaim is one relay round's hold on some keys of an entity's outbox
// (see ClaimOutbox). It ends with Commit or Rollback; until then its keys
// are the round's alone.
type OutboxClaim struct {
	// Keys are the keys claimed, the one with the oldest unsent event first,
	// each with its first unsent events in version order.
	Keys []OutboxClaimKey
	// Busy is how many keys with unsent events the claim left out because
	// other relays hold them (PostgreSQL).
	Busy int

	s      *Store
	tx     *sql.Tx // nil for a claim of nothing
	entity string
	done   bool
}

// OutboxClaimKey is one key of a claim.
type OutboxClaimKey struct {
	// Key is the key, as text (durable.EncodeKey).
	Key string
	// Attempts is how many sends of Events[0] failed before.
	Attempts int
	// Events are the key's first unsent events, in version order.
	Events []OutboxEvent
}

// OutboxResult is what a round did with one key of its claim.
type OutboxResult struct {
	// Sent is how many of the key's events were sent, from the first: they
	// are marked sent.
	Sent int
	// Attempts is how many sends of the key's first unsent event (the one
	// after Sent) failed: 0 when all were sent.
	Attempts int
	// Reason is the last failure, "" when all were sent.
	Reason string
	// RetryAt is when a relay may send the key again after a failure;
	// zero: at once.
	RetryAt time.Time
	// Park parks the key: no relay sends it again until RetryOutboxKey (or
	// DiscardOutboxKey).
	Park bool
}

// outboxPages bounds the pages a PostgreSQL claim reads when every key of
// a page is held by other relays.
const outboxPages = 4

// ClaimOutbox claims up to limit unsent events of entity's outbox for a
// relay's round: the oldest ones, of keys that are neither parked nor
// waiting to retry, nor held by another relay. Each claimed key comes with
// its first unsent events in version order; a key gets as many of the limit
// as it has events among the oldest unsent ones. A claim of nothing has no
// Keys (and holds nothing).
//
// ctx bounds the claim's statements only: the claim's transaction lives
// until Commit or Rollback, whatever becomes of ctx, so that a relay whose
// context ends mid-round still holds its keys until its sends have returned
// and it rolls back. (database/sql rolls back a transaction when the context
// it began with ends, which would let another relay ship the keys while
// this one still sends.)
func (s *Store) ClaimOutbox(ctx context.Context, entity string, limit int) (*OutboxClaim, error) {
	if entity == "" || limit <= 0 {
		return nil, fmt.Errorf("sqlstore: claim outbox events of %q: want an entity and a limit of 1 or more, got %d", entity, limit)
	}
	var c *OutboxClaim
	var err error
	if s.dialect == Postgres {
		c, err = s.claimPostgres(ctx, entity, limit)
	} else {
		c, err = s.claimSQLite(ctx, entity, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlstore: claim outbox events of %s: %w", entity, err)
	}
	return c, nil
}

// scanOutbox is the relays' scan: the oldest unsent events of entity's
// keys that are not parked and not waiting to retry at now, with id above
// after. cols are the columns it selects.
const scanOutbox = ` FROM ordergen_outbox o
	WHERE o.entity = $1 AND o.sent_ns IS NULL AND o.id > $2
	AND NOT EXISTS (SELECT 1 FROM ordergen_outbox_keys k WHERE k.entity = $1 AND k.key = o.key AND (k.parked_ns <> 0 OR k.retry_ns > $3))
	ORDER BY o.id LIMIT $4`

// claimSQLite reads and claims in one transaction, which holds the write
// lock from its start: nothing changes the outbox meanwhile, and ids
// follow versions within a key (one writer at a time numbers and inserts),
// so the oldest unsent rows of a key, in id order, are its first unsent
// events.
func (s *Store) claimSQLite(ctx context.Context, entity string, limit int) (*OutboxClaim, error) {
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	c := &OutboxClaim{s: s, tx: tx, entity: entity}
	events, err := queryOutboxEvents(ctx, tx, `SELECT o.id, o.key, o.version, o.name, o.data, o.created_ns, o.trace_parent, o.trace_state`+scanOutbox,
		entity, 0, time.Now().UnixNano(), limit)
	if err != nil {
		c.Rollback()
		return nil, fmt.Errorf("scan: %w", err)
	}
	byKey := map[string]int{}
	for _, ev := range events {
		i, ok := byKey[ev.Key]
		if !ok {
			i = len(c.Keys)
			byKey[ev.Key] = i
			c.Keys = append(c.Keys, OutboxClaimKey{Key: ev.Key})
		}
		c.Keys[i].Events = append(c.Keys[i].Events, ev)
	}
	if len(c.Keys) == 0 {
		c.Rollback()
		return &OutboxClaim{}, nil
	}
	if err := c.readAttempts(ctx, byKey); err != nil {
		c.Rollback()
		return nil, err
	}
	return c, nil
}

// readAttempts fills in the Attempts of the claim's keys, by index in
// byKey, from their rows (a key without one has never failed).
func (c *OutboxClaim) readAttempts(ctx context.Context, byKey map[string]int) error {
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	cond, args := oneOf(c.s.dialect, "key", 2, keys)
	rows, err := c.tx.QueryContext(ctx, `SELECT key, attempts FROM ordergen_outbox_keys WHERE entity = $1 AND attempts <> 0 AND `+cond,
		append([]any{c.entity}, args...)...)
	if err != nil {
		return fmt.Errorf("read attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var attempts int64
		if err := rows.Scan(&key, &attempts); err != nil {
			return fmt.Errorf("read attempts: %w", err)
		}
		c.Keys[byKey[key]].Attempts = int(attempts)
	}
	return rows.Err()
}

// claimPostgres scans outside any transaction, makes sure the keys found
// have rows, then in the claim's transaction locks the rows it can (SKIP
// LOCKED: those other relays hold are left out) and reads each locked
// key's first unsent events anew, in version order: the scan may be stale
// by then (another relay may have sent them), and ids need not follow
// versions across sessions.
func (s *Store) claimPostgres(ctx context.Context, entity string, limit int) (*OutboxClaim, error) {
	now := time.Now().UnixNano()
	var after int64
	for page := 0; page < outboxPages; page++ {
		keys, counts, last, full, err := s.scanKeys(ctx, entity, after, now, limit)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			return &OutboxClaim{}, nil
		}
		c, err := s.lockKeys(ctx, entity, keys, counts, now)
		if err != nil {
			return nil, err
		}
		if len(c.Keys) > 0 {
			return c, nil
		}
		busy := c.Busy
		c.Rollback()
		if !full || busy == 0 || page == outboxPages-1 {
			return &OutboxClaim{Busy: busy}, nil
		}
		after = last // every key of a full page is another relay's: look further
	}
	return &OutboxClaim{}, nil
}

// scanKeys returns the keys of the oldest unsent events above after, with
// how many of those events each has, the id of the last event read, and
// whether the page was full.
func (s *Store) scanKeys(ctx context.Context, entity string, after, now int64, limit int) (keys []string, counts []int64, last int64, full bool, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT o.id, o.key`+scanOutbox, entity, after, now, limit)
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("scan: %w", err)
	}
	defer rows.Close()
	byKey := map[string]int{}
	n := 0
	for rows.Next() {
		var key string
		if err := rows.Scan(&last, &key); err != nil {
			return nil, nil, 0, false, fmt.Errorf("scan: %w", err)
		}
		n++
		i, ok := byKey[key]
		if !ok {
			i = len(keys)
			byKey[key] = i
			keys = append(keys, key)
			counts = append(counts, 0)
		}
		counts[i]++
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, false, fmt.Errorf("scan: %w", err)
	}
	return keys, counts, last, n == limit, nil
}

// lockKeys makes sure keys have rows, then begins the claim's transaction,
// locks what it can of them and reads their first unsent events, up to
// counts of each.
func (s *Store) lockKeys(ctx context.Context, entity string, keys []string, counts []int64, now int64) (*OutboxClaim, error) {
	// In key order, so that two relays inserting the same new keys never
	// wait for each other in a cycle. Outside the claim's transaction: a
	// row it inserted would be its own until commit, and another relay's
	// insert of the same key would wait for that instead of skipping it.
	sorted := slices.Sorted(slices.Values(keys))
	if _, err := s.db.ExecContext(ctx, `INSERT INTO ordergen_outbox_keys (entity, key)
		SELECT $1, k FROM unnest($2::text[]) AS k ON CONFLICT (entity, key) DO NOTHING`, entity, sorted); err != nil {
		return nil, fmt.Errorf("add key rows: %w", err)
	}
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	c := &OutboxClaim{s: s, tx: tx, entity: entity}
	rows, err := tx.QueryContext(ctx, `SELECT key, attempts, retry_ns, parked_ns FROM ordergen_outbox_keys
		WHERE entity = $1 AND key = ANY($2) FOR UPDATE SKIP LOCKED`, entity, keys)
	if err != nil {
		c.Rollback()
		return nil, fmt.Errorf("lock keys: %w", err)
	}
	attempts := map[string]int{}
	locked := 0
	for rows.Next() {
		var key string
		var n, retry, parked int64
		if err := rows.Scan(&key, &n, &retry, &parked); err != nil {
			rows.Close()
			c.Rollback()
			return nil, fmt.Errorf("lock keys: %w", err)
		}
		locked++
		if parked == 0 && retry <= now { // parked or delayed since the scan
			attempts[key] = int(n)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		c.Rollback()
		return nil, fmt.Errorf("lock keys: %w", err)
	}
	c.Busy = len(keys) - locked
	var ready []string
	var readyCounts []int64
	for i, k := range keys {
		if _, ok := attempts[k]; ok {
			ready = append(ready, k)
			readyCounts = append(readyCounts, counts[i])
		}
	}
	if len(ready) == 0 {
		return c, nil
	}
	events, err := queryOutboxEvents(ctx, tx, `SELECT o.id, o.key, o.version, o.name, o.data, o.created_ns, o.trace_parent, o.trace_state
		FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS k(key, n, i)
		CROSS JOIN LATERAL (SELECT id, key, version, name, data, created_ns, trace_parent, trace_state FROM ordergen_outbox
			WHERE entity = $1 AND key = k.key AND sent_ns IS NULL ORDER BY version LIMIT k.n) o
		ORDER BY k.i, o.version`, entity, ready, readyCounts)
	if err != nil {
		c.Rollback()
		return nil, fmt.Errorf("read claimed events: %w", err)
	}
	for _, ev := range events {
		if n := len(c.Keys); n == 0 || c.Keys[n-1].Key != ev.Key {
			c.Keys = append(c.Keys, OutboxClaimKey{Key: ev.Key, Attempts: attempts[ev.Key]})
		}
		last := &c.Keys[len(c.Keys)-1]
		last.Events = append(last.Events, ev)
	}
	return c, nil
}

// Held confirms that the claim still holds its keys: a statement in the
// claim's transaction reached the database and came back. The hold lasts
// as long as the database session of that transaction, which the server
// may end under it (on PostgreSQL: pg_terminate_backend, a restart, a
// connection cut): its row locks go with it, another relay may ship its
// keys at once, and Held returns an error. A relay calls it before each
// send, so that it stops sending a claim it lost. On SQLite the hold is
// the transaction's write lock, which only the relay's own process ends
// (by ending the claim): Held runs no statement there.
func (c *OutboxClaim) Held(ctx context.Context) error {
	switch {
	case c.tx == nil:
		return fmt.Errorf("sqlstore: outbox claim of %s: a claim of nothing holds no key", c.entity)
	case c.done:
		return fmt.Errorf("sqlstore: outbox claim of %s: %w", c.entity, sql.ErrTxDone)
	case c.s.dialect != Postgres:
		return nil
	}
	if _, err := c.tx.ExecContext(ctx, `SELECT 1`); err != nil {
		return fmt.Errorf("sqlstore: outbox claim of %s is lost: %w", c.entity, err)
	}
	return nil
}

// Commit marks the events sent that results say were, records each key's
// failures, retry time and park, and commits: results[i] is what became of
// Keys[i]. The claim ends, also when Commit fails (its transaction is
// rolled back then, and every event stays unsent).
func (c *OutboxClaim) Commit(ctx context.Context, results []OutboxResult) error {
	if c.tx == nil || c.done {
		if c.done {
			return fmt.Errorf("sqlstore: commit outbox claim of %s: %w", c.entity, sql.ErrTxDone)
		}
		return nil
	}
	if err := c.record(ctx, results); err != nil {
		c.Rollback()
		return fmt.Errorf("sqlstore: commit outbox claim of %s: %w", c.entity, err)
	}
	c.done = true
	if err := c.tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit outbox claim of %s: %w", c.entity, err)
	}
	return nil
}

// outboxIDsPerUpdate bounds the ids of one UPDATE on SQLite (one parameter
// each).
const outboxIDsPerUpdate = 500

func (c *OutboxClaim) record(ctx context.Context, results []OutboxResult) error {
	if len(results) != len(c.Keys) {
		return fmt.Errorf("%d results for %d keys", len(results), len(c.Keys))
	}
	now := time.Now().UnixNano()
	var sent []int64
	for i, r := range results {
		k := c.Keys[i]
		if r.Sent < 0 || r.Sent > len(k.Events) {
			return fmt.Errorf("key %q: %d of its %d events sent", k.Key, r.Sent, len(k.Events))
		}
		for _, ev := range k.Events[:r.Sent] {
			sent = append(sent, ev.ID)
		}
		failed := r.Sent < len(k.Events)
		if !failed && k.Attempts == 0 {
			continue // flowing, and still: its row stays as it is
		}
		var retry, parked int64
		if failed && !r.RetryAt.IsZero() {
			retry = r.RetryAt.UnixNano()
		}
		if failed && r.Park {
			parked = now
		}
		attempts, reason := int64(r.Attempts), r.Reason
		if !failed {
			attempts, reason = 0, ""
		}
		if _, err := c.tx.ExecContext(ctx, `INSERT INTO ordergen_outbox_keys (entity, key, attempts, retry_ns, parked_ns, reason) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (entity, key) DO UPDATE SET attempts = excluded.attempts, retry_ns = excluded.retry_ns, parked_ns = excluded.parked_ns, reason = excluded.reason`,
			c.entity, k.Key, attempts, retry, parked, reason); err != nil {
			return fmt.Errorf("record the failures of %q: %w", k.Key, err)
		}
	}
	step := len(sent)
	if c.s.dialect != Postgres {
		step = outboxIDsPerUpdate
	}
	for start := 0; start < len(sent); start += step {
		chunk := sent[start:min(start+step, len(sent))]
		cond, args := oneOf(c.s.dialect, "id", 2, chunk)
		if _, err := c.tx.ExecContext(ctx, `UPDATE ordergen_outbox SET sent_ns = $1 WHERE `+cond, append([]any{now}, args...)...); err != nil {
			return fmt.Errorf("mark %d events sent: %w", len(chunk), err)
		}
	}
	return nil
}

// Rollback ends the claim without recording anything: every event stays
// unsent and its keys are free again. After Commit, or a second time, it
// does nothing.
func (c *OutboxClaim) Rollback() error {
	if c.tx == nil || c.done {
		return nil
	}
	c.done = true
	if err := c.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("sqlstore: roll back outbox claim of %s: %w", c.entity, err)
	}
	return nil
}

// PruneOutbox deletes up to limit of entity's outbox events that were sent
// before before, and returns how many it deleted.
func (s *Store) PruneOutbox(ctx context.Context, entity string, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM ordergen_outbox WHERE id IN (SELECT id FROM ordergen_outbox
		WHERE entity = $1 AND sent_ns IS NOT NULL AND sent_ns < $2 LIMIT $3)`, entity, before.UnixNano(), limit)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: prune the outbox of %s: %w", entity, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlstore: prune the outbox of %s: %w", entity, err)
	}
	return int(n), nil
}

// OutboxBacklog is the state of an entity's outbox.
type OutboxBacklog struct {
	// Unsent is the number of events not sent yet.
	Unsent int
	// Oldest is when the first of them (in insertion order) was appended;
	// zero when none is unsent.
	Oldest time.Time
	// Parked is the number of parked keys.
	Parked int
	// Retrying is the number of keys whose last send failed, waiting to be
	// tried again.
	Retrying int
}

// OutboxBacklog reads the state of entity's outbox. Counting the unsent
// events takes time in proportion to them.
func (s *Store) OutboxBacklog(ctx context.Context, entity string) (OutboxBacklog, error) {
	var b OutboxBacklog
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM ordergen_outbox WHERE entity = $1 AND sent_ns IS NULL`, entity).Scan(&b.Unsent); err != nil {
		return b, fmt.Errorf("sqlstore: outbox backlog of %s: %w", entity, err)
	}
	if b.Unsent > 0 {
		var oldest int64
		err := s.db.QueryRowContext(ctx, `SELECT created_ns FROM ordergen_outbox WHERE entity = $1 AND sent_ns IS NULL ORDER BY id LIMIT 1`, entity).Scan(&oldest)
		switch {
		case errors.Is(err, sql.ErrNoRows): // sent meanwhile
		case err != nil:
			return b, fmt.Errorf("sqlstore: outbox backlog of %s: %w", entity, err)
		default:
			b.Oldest = timeFromSQL(oldest)
		}
	}
	var parked, retrying sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT SUM(CASE WHEN parked_ns <> 0 THEN 1 ELSE 0 END), SUM(CASE WHEN parked_ns = 0 THEN 1 ELSE 0 END)
		FROM ordergen_outbox_keys WHERE entity = $1 AND (parked_ns <> 0 OR retry_ns <> 0)`, entity).Scan(&parked, &retrying); err != nil {
		return b, fmt.Errorf("sqlstore: outbox backlog of %s: %w", entity, err)
	}
	b.Parked, b.Retrying = int(parked.Int64), int(retrying.Int64)
	return b, nil
}

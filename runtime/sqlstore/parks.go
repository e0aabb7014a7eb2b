package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// parks is the runtime.ParkStore of one namespace. Every change to a key's
// park runs in a transaction that first locks the key's park row, so that
// appends, removals and clears of one key from several processes do not
// interleave.
type parks struct {
	s  *Store
	ns string
}

// eventsPerInsert bounds the rows of one INSERT (8 parameters each), well
// below both databases' parameter limits.
const eventsPerInsert = 100

func (p parks) Append(ctx context.Context, key, reason string, events []runtime.ParkedEvent[durable.RawEvent]) error {
	if len(events) == 0 {
		if _, err := p.s.db.ExecContext(ctx, `UPDATE ordergen_parks SET reason = $3 WHERE namespace = $1 AND key = $2`, p.ns, key, reason); err != nil {
			return fmt.Errorf("sqlstore: update park reason of %s %q: %w", p.ns, key, err)
		}
		return nil
	}
	err := p.s.inTx(ctx, func(tx *sql.Tx) error {
		next, err := p.lockOrCreate(ctx, tx, key, reason)
		if err != nil {
			return err
		}
		for start := 0; start < len(events); start += eventsPerInsert {
			chunk := events[start:min(start+eventsPerInsert, len(events))]
			var q strings.Builder
			q.WriteString(`INSERT INTO ordergen_parked_events (namespace, key, seq, name, data, err, attempts, at_ns) VALUES `)
			args := make([]any, 0, 8*len(chunk))
			for i, ev := range chunk {
				if i > 0 {
					q.WriteString(", ")
				}
				n := len(args)
				fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
				next++
				data := ev.Event.Data
				if data == nil {
					data = []byte{}
				}
				args = append(args, p.ns, key, toSQL(next), ev.Event.Name, data, ev.Err, int64(ev.Attempts), timeToSQL(ev.At))
			}
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("insert parked events: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ordergen_parks SET next_seq = $3, reason = $4 WHERE namespace = $1 AND key = $2`,
			p.ns, key, toSQL(next), reason); err != nil {
			return fmt.Errorf("update park: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlstore: park %d events of %s %q: %w", len(events), p.ns, key, err)
	}
	return nil
}

// lockOrCreate makes sure key has a park row, locks it, and returns the last
// Seq it assigned.
func (p parks) lockOrCreate(ctx context.Context, tx *sql.Tx, key, reason string) (uint64, error) {
	// A concurrent Remove or Clear may delete the row between the insert
	// and the lock; then the insert is tried again.
	for range 3 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ordergen_parks (namespace, key, reason, since_ns, next_seq) VALUES ($1, $2, $3, $4, 0)
			ON CONFLICT (namespace, key) DO NOTHING`, p.ns, key, reason, time.Now().UnixNano()); err != nil {
			return 0, fmt.Errorf("create park: %w", err)
		}
		next, ok, err := p.lock(ctx, tx, key)
		if err != nil || ok {
			return next, err
		}
	}
	return 0, errors.New("create park: the park row kept disappearing")
}

// lock locks key's park row and returns its last Seq, or ok false when key
// is not parked.
func (p parks) lock(ctx context.Context, tx *sql.Tx, key string) (next uint64, ok bool, err error) {
	var n int64
	err = tx.QueryRowContext(ctx, `SELECT next_seq FROM ordergen_parks WHERE namespace = $1 AND key = $2`+p.s.dialect.forUpdate(), p.ns, key).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("lock park: %w", err)
	}
	return fromSQL(n), true, nil
}

func (p parks) Keys(ctx context.Context) ([]runtime.ParkedKey[string], error) {
	rows, err := p.s.db.QueryContext(ctx, `SELECT p.key, p.reason, p.since_ns,
			(SELECT COUNT(*) FROM ordergen_parked_events e WHERE e.namespace = p.namespace AND e.key = p.key)
		FROM ordergen_parks p WHERE p.namespace = $1 ORDER BY p.id`, p.ns)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list parked keys of %s: %w", p.ns, err)
	}
	defer rows.Close()
	var keys []runtime.ParkedKey[string]
	for rows.Next() {
		var k runtime.ParkedKey[string]
		var since, n int64
		if err := rows.Scan(&k.Key, &k.Reason, &since, &n); err != nil {
			return nil, fmt.Errorf("sqlstore: list parked keys of %s: %w", p.ns, err)
		}
		k.Since, k.Events = timeFromSQL(since), int(n)
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list parked keys of %s: %w", p.ns, err)
	}
	return keys, nil
}

func (p parks) Read(ctx context.Context, key string, after uint64, limit int) ([]runtime.ParkedEvent[durable.RawEvent], error) {
	query := `SELECT seq, name, data, err, attempts, at_ns FROM ordergen_parked_events
		WHERE namespace = $1 AND key = $2 AND seq > $3 ORDER BY seq`
	args := []any{p.ns, key, toSQL(after)}
	if limit > 0 {
		query += ` LIMIT $4`
		args = append(args, limit)
	}
	rows, err := p.s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read park of %s %q: %w", p.ns, key, err)
	}
	defer rows.Close()
	var events []runtime.ParkedEvent[durable.RawEvent]
	for rows.Next() {
		var ev runtime.ParkedEvent[durable.RawEvent]
		var seq, attempts, at int64
		if err := rows.Scan(&seq, &ev.Event.Name, &ev.Event.Data, &ev.Err, &attempts, &at); err != nil {
			return nil, fmt.Errorf("sqlstore: read park of %s %q: %w", p.ns, key, err)
		}
		ev.Seq, ev.Attempts, ev.At = fromSQL(seq), int(attempts), timeFromSQL(at)
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: read park of %s %q: %w", p.ns, key, err)
	}
	return events, nil
}

func (p parks) Remove(ctx context.Context, key string, seq uint64) error {
	err := p.s.inTx(ctx, func(tx *sql.Tx) error {
		if _, ok, err := p.lock(ctx, tx, key); err != nil || !ok {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM ordergen_parked_events WHERE namespace = $1 AND key = $2 AND seq = $3`, p.ns, key, toSQL(seq)); err != nil {
			return fmt.Errorf("delete event: %w", err)
		}
		return p.dropIfEmpty(ctx, tx, key)
	})
	if err != nil {
		return fmt.Errorf("sqlstore: remove parked event %d of %s %q: %w", seq, p.ns, key, err)
	}
	return nil
}

// dropIfEmpty unparks key when its park holds no event.
func (p parks) dropIfEmpty(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM ordergen_parks WHERE namespace = $1 AND key = $2
		AND NOT EXISTS (SELECT 1 FROM ordergen_parked_events WHERE namespace = $1 AND key = $2)`, p.ns, key)
	if err != nil {
		return fmt.Errorf("unpark: %w", err)
	}
	return nil
}

func (p parks) Clear(ctx context.Context, key string) (int, error) {
	var n int64
	err := p.s.inTx(ctx, func(tx *sql.Tx) error {
		if _, ok, err := p.lock(ctx, tx, key); err != nil || !ok {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM ordergen_parked_events WHERE namespace = $1 AND key = $2`, p.ns, key)
		if err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("rows affected: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM ordergen_parks WHERE namespace = $1 AND key = $2`, p.ns, key); err != nil {
			return fmt.Errorf("unpark: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: clear park of %s %q: %w", p.ns, key, err)
	}
	return int(n), nil
}

// Times are stored as Unix nanoseconds: exact, and the same in both
// dialects. The zero time is stored as 0 and read back as the zero time.
func timeToSQL(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func timeFromSQL(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

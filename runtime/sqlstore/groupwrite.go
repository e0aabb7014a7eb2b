package sqlstore

import (
	"context"
	"fmt"

	"github.com/ordergen/ordergen/runtime/durable"
)

// A group's keys that had rows are updated where their version and state
// are still what BeginGroup read; the others are inserted, or updated from
// version 0 and state "" only (a row another writer inserted since, as
// keyTx.store does). On PostgreSQL the rows are locked and cannot have
// moved, but the new ones are not: the compare-and-set is what keeps a
// key from being advanced twice from one version by two groups.
const (
	// groupUpdate updates the rows of $2 from the new versions and
	// states $3, $4, where they still hold the old ones $5, $6.
	groupUpdate = `UPDATE ordergen_keys AS o SET version = w.version, state = w.state
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::text[]) AS w(key, version, state, old_version, old_state)
		WHERE o.namespace = $1 AND o.key = w.key AND o.version = w.old_version AND o.state = w.old_state
		RETURNING o.key`
	// groupInsert inserts the keys $7 with the versions and states $8, $9,
	// in key order, so that two groups inserting the same new keys wait
	// for each other in one order.
	groupInsert = `INSERT INTO ordergen_keys (namespace, key, version, state)
		SELECT $1, n.key, n.version, n.state FROM unnest($7::text[], $8::bigint[], $9::text[]) AS n(key, version, state) ORDER BY n.key COLLATE "C"
		ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version, state = excluded.state
		WHERE ordergen_keys.version = 0 AND ordergen_keys.state = ''
		RETURNING key`
	// groupWrite does both in one statement, one round trip, and returns
	// the keys it did not write: those that moved.
	groupWrite = `WITH u AS (` + groupUpdate + `), i AS (` + groupInsert + `)
		SELECT w.key FROM unnest($2::text[] || $7::text[]) AS w(key)
		WHERE w.key NOT IN (SELECT key FROM u UNION ALL SELECT key FROM i)`
)

// storePostgres writes changed in one statement and checks that every key
// was written.
func (g *groupTx) storePostgres(ctx context.Context, changed []durable.KeyWrite) error {
	var upd struct {
		keys, states, oldStates []string
		versions, oldVersions   []int64
	}
	var ins struct {
		keys, states []string
		versions     []int64
	}
	for _, w := range changed {
		r := g.read[w.Key]
		if r.exists {
			upd.keys = append(upd.keys, w.Key)
			upd.versions = append(upd.versions, toSQL(w.Version))
			upd.states = append(upd.states, w.State)
			upd.oldVersions = append(upd.oldVersions, toSQL(r.Version))
			upd.oldStates = append(upd.oldStates, r.State)
		} else {
			ins.keys = append(ins.keys, w.Key)
			ins.versions = append(ins.versions, toSQL(w.Version))
			ins.states = append(ins.states, w.State)
		}
	}
	// An empty part still goes as an empty array: one statement text, whose
	// plan pgx's statement cache keeps.
	if upd.keys == nil {
		upd.keys, upd.states, upd.oldStates, upd.versions, upd.oldVersions = []string{}, []string{}, []string{}, []int64{}, []int64{}
	}
	if ins.keys == nil {
		ins.keys, ins.states, ins.versions = []string{}, []string{}, []int64{}
	}
	rows, err := g.tx.QueryContext(ctx, groupWrite, g.ns,
		upd.keys, upd.versions, upd.states, upd.oldVersions, upd.oldStates,
		ins.keys, ins.versions, ins.states)
	if err != nil {
		return err
	}
	defer rows.Close()
	var moved []string
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			return err
		}
		moved = append(moved, key)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(moved) > 0 {
		return conflict(moved, len(changed))
	}
	return nil
}

// moved names the keys of changed whose stored version and state are not
// what the group wrote, after a write that stored fewer rows than changed
// has: those another writer moved.
func (g *groupTx) moved(ctx context.Context, changed []durable.KeyWrite, n int64) error {
	keys := make([]string, len(changed))
	for i, w := range changed {
		keys[i] = w.Key
	}
	stored := make(map[string]durable.KeyState, len(keys))
	if err := g.s.readKeyStates(ctx, g.tx, g.ns, keys, false, func(k string, ks durable.KeyState, _ int64) { stored[k] = ks }); err != nil {
		return fmt.Errorf("%d of %d keys written (reading which moved: %v): %w", n, len(changed), err, ErrConflict)
	}
	var moved []string
	for _, w := range changed {
		if stored[w.Key] != w.KeyState {
			moved = append(moved, w.Key)
		}
	}
	if len(moved) == 0 {
		return fmt.Errorf("%d of %d keys written: %w", n, len(changed), ErrConflict)
	}
	return conflict(moved, len(changed))
}

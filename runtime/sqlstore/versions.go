package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// versions is the runtime.VersionStore of one namespace.
type versions struct {
	s  *Store
	ns string
}

func (v versions) Version(ctx context.Context, key string) (uint64, error) {
	var n int64
	err := v.s.db.QueryRowContext(ctx, `SELECT version FROM ordergen_keys WHERE namespace = $1 AND key = $2`, v.ns, key).Scan(&n)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlstore: read version of %s %q: %w", v.ns, key, err)
	}
	return fromSQL(n), nil
}

func (v versions) CompareAndSet(ctx context.Context, key string, old, next uint64) (bool, error) {
	var res sql.Result
	var err error
	if old == 0 {
		// No row is the same as version 0.
		res, err = v.s.db.ExecContext(ctx, `INSERT INTO ordergen_keys (namespace, key, version) VALUES ($1, $2, $3)
			ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version WHERE ordergen_keys.version = 0`,
			v.ns, key, toSQL(next))
	} else {
		res, err = v.s.db.ExecContext(ctx, `UPDATE ordergen_keys SET version = $3 WHERE namespace = $1 AND key = $2 AND version = $4`,
			v.ns, key, toSQL(next), toSQL(old))
	}
	if err != nil {
		return false, fmt.Errorf("sqlstore: store version %d of %s %q: %w", next, v.ns, key, err)
	}
	return oneRow(res)
}

// states is the runtime.StateStore of one namespace.
type states struct {
	s  *Store
	ns string
}

func (st states) State(ctx context.Context, key string) (string, error) {
	var state string
	err := st.s.db.QueryRowContext(ctx, `SELECT state FROM ordergen_keys WHERE namespace = $1 AND key = $2`, st.ns, key).Scan(&state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("sqlstore: read state of %s %q: %w", st.ns, key, err)
	}
	return state, nil
}

func (st states) CompareAndSetState(ctx context.Context, key string, old, next string) (bool, error) {
	var res sql.Result
	var err error
	if old == "" {
		res, err = st.s.db.ExecContext(ctx, `INSERT INTO ordergen_keys (namespace, key, state) VALUES ($1, $2, $3)
			ON CONFLICT (namespace, key) DO UPDATE SET state = excluded.state WHERE ordergen_keys.state = ''`,
			st.ns, key, next)
	} else {
		res, err = st.s.db.ExecContext(ctx, `UPDATE ordergen_keys SET state = $3 WHERE namespace = $1 AND key = $2 AND state = $4`,
			st.ns, key, next, old)
	}
	if err != nil {
		return false, fmt.Errorf("sqlstore: store state %q of %s %q: %w", next, st.ns, key, err)
	}
	return oneRow(res)
}

// oneRow reports whether a conditional write changed its row.
func oneRow(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlstore: rows affected: %w", err)
	}
	return n == 1, nil
}

package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// ParkedNamespaces returns the namespaces that have parked keys, sorted.
func (s *Store) ParkedNamespaces(ctx context.Context) ([]string, error) {
	return s.namespaces(ctx, `SELECT DISTINCT namespace FROM ordergen_parks ORDER BY namespace`)
}

// Namespaces returns the namespaces that hold anything (a key's version or
// state, or a parked key), sorted: the subscribers that have used the store.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	return s.namespaces(ctx, `SELECT namespace FROM ordergen_keys UNION SELECT namespace FROM ordergen_parks ORDER BY namespace`)
}

// namespaces runs query, which selects namespaces.
func (s *Store) namespaces(ctx context.Context, query string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list namespaces: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("sqlstore: list namespaces: %w", err)
		}
		out = append(out, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list namespaces: %w", err)
	}
	return out, nil
}

// DeleteNamespace deletes everything stored in namespace: versions, states,
// parked events and requests. Use it for a subscriber that is gone for
// good, never for one that runs: its guards would start again from
// nothing.
func (s *Store) DeleteNamespace(ctx context.Context, namespace string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"ordergen_keys", "ordergen_parked_events", "ordergen_parks", "ordergen_requests"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE namespace = $1`, namespace); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlstore: delete namespace %s: %w", namespace, err)
	}
	return nil
}

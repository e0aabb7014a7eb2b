package sqlstore_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/storetest"
)

// TestConformance runs the stores' shared suite on SQLite and PostgreSQL.
func TestConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		storetest.Run(t, storetest.Harness{Open: func(t *testing.T) durable.Store { return b.handle(t) }})
	})
}

// TestGroupConformance runs the suite of group commit on SQLite and
// PostgreSQL. The handlers' writes go to a table of the test's.
func TestGroupConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		admin := b.handleClosed(t)
		table := "test_group_writes_" + randomSuffix(t)
		if _, err := admin.DB().ExecContext(t.Context(), `CREATE TABLE `+table+` (namespace TEXT NOT NULL, key TEXT NOT NULL, n BIGINT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.DB().ExecContext(context.Background(), `DROP TABLE `+table) })
		storetest.RunGroups(t, storetest.GroupHarness[*sql.Tx]{
			Open: func(t *testing.T) durable.GroupTxStore[*sql.Tx] { return b.handle(t) },
			Write: func(ctx context.Context, tx *sql.Tx, ns, key string, n uint64) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (namespace, key, n) VALUES ($1, $2, $3)`, ns, key, int64(n))
				return err
			},
			Written: func(t *testing.T, ns, key string) []uint64 {
				rows, err := admin.DB().QueryContext(t.Context(), `SELECT n FROM `+table+` WHERE namespace = $1 AND key = $2`, ns, key)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var got []uint64
				for rows.Next() {
					var n int64
					if err := rows.Scan(&n); err != nil {
						t.Fatal(err)
					}
					got = append(got, uint64(n))
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return got
			},
			Move: func(ctx context.Context, tx *sql.Tx, ns, key string, to durable.KeyState) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO ordergen_keys (namespace, key, version, state) VALUES ($1, $2, $3, $4)
					ON CONFLICT (namespace, key) DO UPDATE SET version = excluded.version, state = excluded.state`, ns, key, int64(to.Version), to.State)
				return err
			},
			Fail: func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (namespace, key, n) VALUES (NULL, NULL, NULL)`)
				return err
			},
			Serial:   b.name == "sqlite",
			AnyBytes: b.name == "sqlite",
		})
	})
}

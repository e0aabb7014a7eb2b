package sqlstore_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// TestOutboxTraceMigratesAndStores: a database at schema version 2 (the
// outbox without trace columns) keeps its unsent rows through the
// migration to version 3, without a trace context; a store given a
// TraceFunc stores the writer's with each row it appends, and the claim a
// relay makes returns it.
func TestOutboxTraceMigratesAndStores(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		b = isolated(t, b)
		driver, dialect := "sqlite", sqlstore.SQLite
		if b.name == "postgres" {
			driver, dialect = "pgx", sqlstore.Postgres
		}
		db, err := sql.Open(driver, b.dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := sqlstore.MigrateTo(t.Context(), db, dialect, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO ordergen_outbox (entity, key, version, name, data, created_ns) VALUES ('Account', 'old', 1, 'E', $1, 1)`, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}

		s := b.handleClosed(t)
		const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		s.Trace(func(ctx context.Context) (string, string) {
			if ctx.Value(writerKey{}) == nil {
				return "", ""
			}
			return parent, "vendor=1"
		})
		if _, err := appendEvent(context.WithValue(t.Context(), writerKey{}, true), s, "Account", "new", false); err != nil {
			t.Fatal(err)
		}
		if _, err := appendEvent(t.Context(), s, "Account", "untraced", false); err != nil {
			t.Fatal(err)
		}
		c, err := s.ClaimOutbox(t.Context(), "Account", 10)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Rollback()
		want := map[string][2]string{"old": {}, "new": {parent, "vendor=1"}, "untraced": {}}
		for _, k := range c.Keys {
			if len(k.Events) != 1 {
				t.Fatalf("key %s: %d events, want 1", k.Key, len(k.Events))
			}
			ev := k.Events[0]
			if got := [2]string{ev.TraceParent, ev.TraceState}; got != want[k.Key] {
				t.Errorf("key %s: trace context %q, want %q", k.Key, got, want[k.Key])
			}
			delete(want, k.Key)
		}
		if len(want) != 0 {
			t.Errorf("keys not claimed: %v (the migration lost the old row?)", want)
		}
	})
}

type writerKey struct{}

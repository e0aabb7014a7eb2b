package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// isolated returns a backend on a database of its own: a fresh SQLite file,
// or a fresh schema of the PostgreSQL database (dropped at the end), for
// tests that change the store's own tables.
func isolated(t *testing.T, b backend) backend {
	t.Helper()
	if b.name != "postgres" {
		return b
	}
	schema := "ordergen_test_" + randomSuffix(t)
	admin, err := sql.Open("pgx", b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", b.dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(b.dsn)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", postgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	b.dsn = u.String()
	return b
}

// TestMigrationsRunOnceWhenReplicasStartAtOnce opens many handles on a new
// database at once: every one succeeds, and each schema version is recorded once.
func TestMigrationsRunOnceWhenReplicasStartAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		b = isolated(t, b)
		const replicas = 8
		var wg sync.WaitGroup
		stores := make([]*sqlstore.Store, replicas)
		errs := make([]error, replicas)
		for i := range replicas {
			wg.Go(func() { stores[i], errs[i] = b.open(t.Context(), b.dsn) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
			defer stores[i].Close()
		}
		var rows, version int
		if err := stores[0].DB().QueryRowContext(t.Context(), `SELECT COUNT(*), MAX(version) FROM ordergen_schema`).Scan(&rows, &version); err != nil {
			t.Fatal(err)
		}
		if rows != sqlstore.SchemaVersion || version != sqlstore.SchemaVersion {
			t.Fatalf("ordergen_schema has %d rows up to version %d, want a row for each version up to %d", rows, version, sqlstore.SchemaVersion)
		}
		// Opening again changes nothing.
		again := b.handleClosed(t)
		if err := again.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM ordergen_schema`).Scan(&rows); err != nil || rows != sqlstore.SchemaVersion {
			t.Fatalf("after reopening: %d rows, %v", rows, err)
		}
	})
}

// TestNewerSchemaIsRefused: a database migrated by a newer ordergen is not
// misread.
func TestNewerSchemaIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		b = isolated(t, b)
		s := b.handle(t)
		if _, err := s.DB().ExecContext(t.Context(), `INSERT INTO ordergen_schema (version, applied_ns) VALUES ($1, 0)`, sqlstore.SchemaVersion+1); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := b.open(t.Context(), b.dsn); !errors.Is(err, sqlstore.ErrSchemaTooNew) {
			t.Fatalf("open: %v, want ErrSchemaTooNew", err)
		}
	})
}

// TestBadInputGivesErrors: bad paths, DSNs and arguments are errors, never
// panics.
func TestBadInputGivesErrors(t *testing.T) {
	ctx := t.Context()
	for _, path := range []string{"", "file:x.db", "x.db?mode=ro", t.TempDir() + "/missing/dir/x.db"} {
		if s, err := sqlite.Open(ctx, path); err == nil {
			s.Close()
			t.Errorf("sqlite.Open(%q) succeeded", path)
		}
	}
	for _, dsn := range []string{"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=5", "postgres://%zz", "not a dsn at all = ="} {
		if s, err := postgres.Open(ctx, dsn); err == nil {
			s.Close()
			t.Errorf("postgres.Open(%q) succeeded", dsn)
		}
	}
	if _, err := sqlstore.New(ctx, nil, sqlstore.SQLite); err == nil {
		t.Error("New with a nil database succeeded")
	}
	db, err := sql.Open("sqlite", t.TempDir()+"/x.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlstore.New(ctx, db, sqlstore.Dialect(9)); err == nil {
		t.Error("New with an unknown dialect succeeded")
	}
}

package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// ledgerTable creates a table for a handler's own writes, unique to the test.
func ledgerTable(t *testing.T, s *sqlstore.Store) string {
	t.Helper()
	name := fmt.Sprintf("test_writes_%s", randomSuffix(t))
	if _, err := s.DB().ExecContext(t.Context(), `CREATE TABLE `+name+` (key TEXT NOT NULL, version BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = s.DB().ExecContext(context.Background(), `DROP TABLE `+name) })
	return name
}

// writes returns how many rows the handler wrote for key and version.
func writes(t *testing.T, s *sqlstore.Store, table, key string, version uint64) int {
	t.Helper()
	var n int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM `+table+` WHERE key = $1 AND version = $2`, key, int64(version)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func write(ctx context.Context, tx *sql.Tx, table, key string, version uint64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (key, version) VALUES ($1, $2)`, key, int64(version))
	return err
}

// TestKeyTxCommitsWritesWithVersion: the handler's write and the version
// advance commit together; a rollback or a cancelled context keeps neither.
func TestKeyTxCommitsWritesWithVersion(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		table := ledgerTable(t, s)
		ns := "keytx-" + randomSuffix(t)

		tx, err := s.BeginKey(ctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if tx.Version() != 0 || tx.State() != "" {
			t.Fatalf("a new key reads version %d state %q", tx.Version(), tx.State())
		}
		if err := write(ctx, tx.Tx(), table, "k", 1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx, 1, "Open"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatalf("rollback after commit: %v", err)
		}
		if v, _ := s.Versions(ns).Version(ctx, "k"); v != 1 || writes(t, s, table, "k", 1) != 1 {
			t.Fatalf("after commit: version %d, %d writes", v, writes(t, s, table, "k", 1))
		}

		// Rolled back: neither the write nor the version.
		tx, err = s.BeginKey(ctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if tx.Version() != 1 || tx.State() != "Open" {
			t.Fatalf("reads version %d state %q, want 1 Open", tx.Version(), tx.State())
		}
		if err := write(ctx, tx.Tx(), table, "k", 2); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}

		// Interrupted between the write and the commit: the context ends.
		cctx, cancel := context.WithCancel(ctx)
		tx, err = s.BeginKey(cctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := write(cctx, tx.Tx(), table, "k", 2); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := tx.Commit(cctx, 2, "Open"); err == nil {
			t.Fatal("commit with a cancelled context succeeded")
		}
		if v, _ := s.Versions(ns).Version(ctx, "k"); v != 1 || writes(t, s, table, "k", 2) != 0 {
			t.Fatalf("after an interrupted transaction: version %d, %d writes of version 2", v, writes(t, s, table, "k", 2))
		}

		// Redelivered, it is applied once.
		tx, err = s.BeginKey(ctx, ns, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := write(ctx, tx.Tx(), table, "k", 2); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx, 2, "Open"); err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Versions(ns).Version(ctx, "k"); v != 2 || writes(t, s, table, "k", 2) != 1 {
			t.Fatalf("after redelivery: version %d, %d writes of version 2", v, writes(t, s, table, "k", 2))
		}
		if err := tx.Commit(ctx, 3, "Open"); !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("a second commit: %v, want sql.ErrTxDone", err)
		}
	})
}

// TestKeyTxConflict: two transactions that read a new key both try to
// advance it; the second commit is refused and its write rolled back.
// (SQLite serialises the two transactions, so only PostgreSQL can race.)
func TestKeyTxConflict(t *testing.T) {
	b := postgresBackend(t)
	ctx := t.Context()
	s := b.handleClosed(t)
	table := ledgerTable(t, s)
	ns := "conflict-" + randomSuffix(t)
	one, err := s.BeginKey(ctx, ns, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer one.Rollback()
	two, err := s.BeginKey(ctx, ns, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer two.Rollback()
	for _, tx := range []interface{ Tx() *sql.Tx }{one, two} {
		if err := write(ctx, tx.Tx(), table, "k", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.Commit(ctx, 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := two.Commit(ctx, 1, ""); !errors.Is(err, sqlstore.ErrConflict) {
		t.Fatalf("second commit: %v, want ErrConflict", err)
	}
	if n := writes(t, s, table, "k", 1); n != 1 {
		t.Fatalf("version 1 written %d times, want once", n)
	}
}

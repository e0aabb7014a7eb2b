package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// TestGroupNewKeyRace: on PostgreSQL a key without a row is not locked by
// BeginGroup; when another writer creates it before the group commits, the
// commit is refused with ErrConflict naming the key, Retryable, and the
// group's writes are rolled back.
func TestGroupNewKeyRace(t *testing.T) {
	b := postgresBackend(t)
	ctx := t.Context()
	s, other := b.handleClosed(t), b.handleClosed(t)
	table := ledgerTable(t, s)
	ns := "group-race-" + randomSuffix(t)
	ok, err := s.Versions(ns).CompareAndSet(ctx, "old", 0, 1)
	if err != nil || !ok {
		t.Fatalf("seed: %v %v", ok, err)
	}
	gtx, err := s.BeginGroup(ctx, ns, []string{"old", "new"})
	if err != nil {
		t.Fatal(err)
	}
	defer gtx.Rollback()
	for _, k := range []string{"old", "new"} {
		if err := write(ctx, gtx.Tx(), table, k, gtx.Read(k).Version+1); err != nil {
			t.Fatal(err)
		}
	}
	// Another process applies the new key's first event meanwhile.
	ktx, err := other.BeginKey(ctx, ns, "new")
	if err != nil {
		t.Fatal(err)
	}
	if err := ktx.Commit(ctx, 1, "theirs"); err != nil {
		t.Fatal(err)
	}
	err = gtx.Commit(ctx, []durable.KeyWrite{
		{Key: "old", KeyState: durable.KeyState{Version: 2}},
		{Key: "new", KeyState: durable.KeyState{Version: 1, State: "ours"}},
	})
	if !errors.Is(err, sqlstore.ErrConflict) || !s.Retryable(err) || !strings.Contains(err.Error(), `"new"`) || strings.Contains(err.Error(), `"old"`) {
		t.Fatalf("commit after another writer created the key: %v, want ErrConflict naming only \"new\"", err)
	}
	if v, _ := s.Versions(ns).Version(ctx, "old"); v != 1 {
		t.Fatalf("old at version %d after the refused commit", v)
	}
	if st, _ := s.States(ns).State(ctx, "new"); st != "theirs" {
		t.Fatalf("new has state %q, want the other writer's", st)
	}
	if n := writes(t, s, table, "old", 2) + writes(t, s, table, "new", 1); n != 0 {
		t.Fatalf("%d handler writes of the refused group kept", n)
	}
}

// TestGroupRetryableDeadlock: a real PostgreSQL deadlock is Retryable
// (pgx's error is recognised without this package importing pgx).
func TestGroupRetryableDeadlock(t *testing.T) {
	b := postgresBackend(t)
	ctx := t.Context()
	s := b.handleClosed(t)
	ns := "group-deadlock-" + randomSuffix(t)
	for _, k := range []string{"a", "b"} {
		if ok, err := s.Versions(ns).CompareAndSet(ctx, k, 0, 1); err != nil || !ok {
			t.Fatalf("seed %s: %v %v", k, ok, err)
		}
	}
	one, err := s.BeginGroup(ctx, ns, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Rollback()
	two, err := s.BeginGroup(ctx, ns, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Rollback()
	lock := func(tx *sql.Tx, key string) error {
		_, err := tx.ExecContext(ctx, `SELECT 1 FROM ordergen_keys WHERE namespace = $1 AND key = $2 FOR UPDATE`, ns, key)
		return err
	}
	type result struct{ err error }
	results := make(chan result, 2)
	go func() { results <- result{lock(one.Tx(), "b")} }() // waits for two
	go func() { results <- result{lock(two.Tx(), "a")} }() // waits for one: a cycle
	// The server breaks the cycle by failing one of them; the other then
	// gets its lock.
	first, second := <-results, <-results
	if (first.err == nil) == (second.err == nil) {
		t.Fatalf("want exactly one of them failed: %v, %v", first.err, second.err)
	}
	err = errors.Join(first.err, second.err)
	if !s.Retryable(err) {
		t.Fatalf("Retryable(%v) = false for a deadlock", err)
	}
}

// TestGroupRetryableSQLiteBusy: a SQLite group that cannot get the write
// lock fails with SQLITE_BUSY, which Retryable accepts.
func TestGroupRetryableSQLiteBusy(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "store.db")
	b := backend{name: "sqlite", dsn: path, open: sqlite.Open}
	s := b.handleClosed(t)
	db, err := sql.Open("sqlite", path+"?_txlock=immediate&_busy_timeout=0&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	impatient, err := sqlstore.New(ctx, db, sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	held, err := s.BeginGroup(ctx, "ns", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback()
	gtx, err := impatient.BeginGroup(ctx, "ns", []string{"a"})
	if err == nil {
		gtx.Rollback()
		t.Fatal("a second writer got the write lock")
	}
	if !impatient.Retryable(err) {
		t.Fatalf("Retryable(%v) = false for a busy database", err)
	}
}

// codeErr is a driver error with a SQLite result code.
type codeErr int

func (c codeErr) Error() string { return fmt.Sprintf("code %d", int(c)) }
func (c codeErr) Code() int     { return int(c) }

func TestGroupRetryableClassifies(t *testing.T) {
	stores := map[sqlstore.Dialect]*sqlstore.Store{}
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		stores[d] = sqlstore.ForDialect(d)
	}
	wrap := func(err error) error { return fmt.Errorf("sqlstore: commit group: %w", err) }
	for _, c := range []struct {
		d    sqlstore.Dialect
		err  error
		want bool
	}{
		{sqlstore.SQLite, wrap(sqlstore.ErrConflict), true},
		{sqlstore.Postgres, wrap(sqlstore.ErrConflict), true},
		{sqlstore.Postgres, wrap(&pgconn.PgError{Code: "40001"}), true},
		{sqlstore.Postgres, wrap(&pgconn.PgError{Code: "40P01"}), true},
		{sqlstore.Postgres, wrap(&pgconn.PgError{Code: "23505"}), false},
		{sqlstore.SQLite, wrap(codeErr(5)), true},        // SQLITE_BUSY
		{sqlstore.SQLite, wrap(codeErr(6)), true},        // SQLITE_LOCKED
		{sqlstore.SQLite, wrap(codeErr(5 | 2<<8)), true}, // SQLITE_BUSY_SNAPSHOT
		{sqlstore.SQLite, wrap(codeErr(19)), false},      // SQLITE_CONSTRAINT
		{sqlstore.Postgres, wrap(codeErr(5)), false},     // not a SQLite store
		{sqlstore.SQLite, wrap(&pgconn.PgError{Code: "40001"}), false},
		{sqlstore.Postgres, wrap(context.Canceled), false},
		{sqlstore.Postgres, nil, false},
	} {
		if got := stores[c.d].Retryable(c.err); got != c.want {
			t.Errorf("%v Retryable(%v) = %v, want %v", c.d, c.err, got, c.want)
		}
	}
}

// TestGroupManyKeys: a group larger than one SQLite statement's parameters
// reads and writes all its keys.
func TestGroupManyKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		ns := "group-many-" + randomSuffix(t)
		keys := make([]string, 30_007)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%05d", i)
		}
		for round := uint64(1); round <= 2; round++ { // inserts, then updates
			gtx, err := s.BeginGroup(ctx, ns, keys)
			if err != nil {
				t.Fatal(err)
			}
			writes := make([]durable.KeyWrite, len(keys))
			for i, k := range keys {
				if got := gtx.Read(k).Version; got != round-1 {
					gtx.Rollback()
					t.Fatalf("round %d: %s reads version %d", round, k, got)
				}
				writes[i] = durable.KeyWrite{Key: k, KeyState: durable.KeyState{Version: round}}
			}
			if err := gtx.Commit(ctx, writes); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM ordergen_keys WHERE namespace = $1 AND version = 2`, ns).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(keys) {
			t.Fatalf("%d keys at version 2, want %d", n, len(keys))
		}
	})
}

// TestGroupSQLitePlans: SQLite runs a group's statements as a loop over
// the JSON array that finds each row by a key, never a scan of the table
// (which would make a group cost the namespace's size times its own).
func TestGroupSQLitePlans(t *testing.T) {
	s := sqliteBackend(t).handleClosed(t)
	for name, stmt := range sqlstore.SQLiteGroupStatements {
		rows, err := s.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+stmt, "ns", "[]")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN") && strings.Contains(step, "ordergen_keys") ||
				strings.HasPrefix(step, "SEARCH") && strings.Contains(step, "(namespace=?)") {
				t.Errorf("%s scans the table: %s", name, strings.Join(plan, "; "))
			}
		}
		t.Logf("%s: %s", name, strings.Join(plan, "; "))
	}
}

// TestGroupRefusedCommitKeepsTransaction: a Commit refused for its writes
// writes nothing and leaves the transaction open, the handlers' writes in
// it: a corrected Commit then stores them.
func TestGroupRefusedCommitKeepsTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handleClosed(t)
		table := ledgerTable(t, s)
		ns := "group-refused-" + randomSuffix(t)
		gtx, err := s.BeginGroup(ctx, ns, []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		defer gtx.Rollback()
		if err := write(ctx, gtx.Tx(), table, "a", 1); err != nil {
			t.Fatal(err)
		}
		one := durable.KeyWrite{Key: "a", KeyState: durable.KeyState{Version: 1}}
		for _, bad := range [][]durable.KeyWrite{
			{one, {Key: "z", KeyState: durable.KeyState{Version: 1}}},
			{one, one},
		} {
			if err := gtx.Commit(ctx, bad); err == nil || errors.Is(err, sqlstore.ErrConflict) {
				t.Fatalf("commit of %+v: %v, want an error that is not a conflict", bad, err)
			}
		}
		if err := gtx.Commit(ctx, []durable.KeyWrite{one}); err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Versions(ns).Version(ctx, "a"); v != 1 || writes(t, s, table, "a", 1) != 1 {
			t.Fatalf("after the corrected commit: version %d, %d writes", v, writes(t, s, table, "a", 1))
		}
	})
}

package groupcommit_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

// eachSQLStore runs fn on SQLite, and on PostgreSQL when configured (a
// skipped subtest otherwise).
func eachSQLStore(t *testing.T, fn func(t *testing.T, b backend[*sql.Tx])) {
	t.Run("sqlite", func(t *testing.T) { fn(t, sqlBackend(t, "sqlite", sqliteStore(t))) })
	t.Run("postgres", func(t *testing.T) {
		s := postgresStore(t)
		if s == nil {
			t.Skip(skipPostgres)
		}
		fn(t, sqlBackend(t, "postgres", s))
	})
}

// sqlApply is the work of key's next event on a SQL store: the application
// written in tx, then the new version.
func sqlApply(b backend[*sql.Tx], ns, key string) groupcommit.Work[*sql.Tx] {
	return func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
		if err := b.apply(ctx, tx, ns, key, read.Version+1); err != nil {
			return groupcommit.Result{}, err
		}
		return groupcommit.Result{Write: durable.KeyState{Version: read.Version + 1, State: read.State}}, nil
	}
}

// On a real store: a slow key's work is evicted from its group, its mates'
// writes commit while it still runs, and it then commits alone; a failing
// key's writes are rolled back while its mates' commit.
func TestASlowKeyLeavesItsGroupOnSQL(t *testing.T) {
	eachSQLStore(t, func(t *testing.T, b backend[*sql.Tx]) {
		ns := uniqueNamespace(t)
		cfg := calm()
		cfg.MaxEvents, cfg.Linger = 4, time.Hour // one group of the four keys
		cfg.MaxWork = 300 * time.Millisecond
		c, err := groupcommit.New(b.store, ns, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		matesCommitted := make(chan struct{})
		first := true
		slow := func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
			if first {
				first = false
				if err := b.apply(ctx, tx, ns, "slow", read.Version+1); err != nil {
					return groupcommit.Result{}, err
				}
				<-ctx.Done()
				if !errors.Is(context.Cause(ctx), groupcommit.ErrEvicted) {
					return groupcommit.Result{}, errors.New("slow work's context did not end with ErrEvicted")
				}
				<-matesCommitted
				return groupcommit.Result{}, ctx.Err()
			}
			return sqlApply(b, ns, "slow")(ctx, tx, read)
		}
		failing := func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
			if err := b.apply(ctx, tx, ns, "fail", read.Version+1); err != nil {
				return groupcommit.Result{}, err
			}
			return groupcommit.Result{}, errHandler
		}
		do := func(key string, work groupcommit.Work[*sql.Tx]) <-chan error {
			done := make(chan error, 1)
			go func() { done <- c.Do(context.Background(), key, 1, work) }()
			return done
		}
		s, f := do("slow", slow), do("fail", failing)
		a, m := do("a", sqlApply(b, ns, "a")), do("b", sqlApply(b, ns, "b"))
		for _, d := range []<-chan error{a, m} {
			if err := <-d; err != nil {
				t.Fatal(err)
			}
		}
		if err := <-f; !errors.Is(err, errHandler) {
			t.Fatalf("failing key's Do returned %v, want its error", err)
		}
		// a and b committed while the slow work still ran.
		for _, key := range []string{"a", "b"} {
			if v, apps, err := b.committed(ns, key); err != nil || v != 1 || apps[1] != 1 || len(apps) != 1 {
				t.Fatalf("%s at version %d, applications %v (%v); want 1 applied once", key, v, apps, err)
			}
		}
		close(matesCommitted)
		if err := <-s; err != nil {
			t.Fatalf("evicted key's Do: %v", err)
		}
		if v, apps, err := b.committed(ns, "slow"); err != nil || v != 1 || apps[1] != 1 || len(apps) != 1 {
			t.Fatalf("slow at version %d, applications %v (%v); want 1 applied once, alone", v, apps, err)
		}
		if v, apps, err := b.committed(ns, "fail"); err != nil || v != 0 || len(apps) != 0 {
			t.Fatalf("failed key at version %d, applications %v (%v); want nothing", v, apps, err)
		}
		if st := c.Stats(); st.Evictions != 1 || st.Alone != 1 || st.Failed != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

package states

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/examples/states/shipping"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

// store is one way the guards run: in memory (sql nil), over a durable
// store's guards with an in-memory handler, or in the store's transactions
// with a transactional handler (tx).
type store struct {
	name string
	sql  *sqlstore.Store
	tx   bool
}

// stores returns the in-memory guards, and SQLite and PostgreSQL (its
// cases skip without ORDERGEN_TEST_POSTGRES) each with and without
// transactions, each database empty and of its own.
func stores(t *testing.T) []store {
	t.Helper()
	out := []store{{name: "memory"}}
	for _, dialect := range []string{"sqlite", "postgres"} {
		if dialect == "postgres" && os.Getenv("ORDERGEN_TEST_POSTGRES") == "" {
			t.Log("PostgreSQL cases skipped: set ORDERGEN_TEST_POSTGRES to a database DSN to run them; .ci/run starts one")
			continue
		}
		for _, tx := range []bool{false, true} {
			s, err := dsn.Open(t.Context(), database(t, dialect))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			name := dialect
			if tx {
				name += "-tx"
			}
			out = append(out, store{name: name, sql: s, tx: tx})
		}
	}
	return out
}

// database returns the DSN of an empty database: a file for SQLite, a
// schema of its own (dropped when the test ends) for PostgreSQL.
func database(t *testing.T, dialect string) string {
	t.Helper()
	if dialect == "sqlite" {
		return filepath.Join(t.TempDir(), "states.db")
	}
	base := os.Getenv("ORDERGEN_TEST_POSTGRES")
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "states_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// skip is a guard's skip as OnSkip tells it: the key, the event's record
// and the reason.
type skip struct {
	key, event, reason string
}

// skips records what a subscriber's OnSkip is told.
type skips struct {
	mu   sync.Mutex // guards list
	list []skip
}

func (s *skips) add(key, event, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, skip{key, event, reason})
}

func (s *skips) all() []skip {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// run is a dispatcher of one entity on one store, with what its handler
// applied and what its guards skipped.
type run[D any] struct {
	d       D
	applied func(ctx context.Context, key string) ([]string, error)
	skips   *skips
}

// handlers returns the tracker that st's dispatchers use, in memory or in
// st's database.
func handlers(t *testing.T, st store) (*tracker, *sqlTracker) {
	t.Helper()
	if !st.tx {
		return newTracker(), nil
	}
	tr, err := newSQLTracker(t.Context(), st.sql.DB())
	if err != nil {
		t.Fatal(err)
	}
	return nil, tr
}

func startShipments(t *testing.T, st store, opts ...shipping.ShipmentOption) run[*shipping.ShipmentDispatcher] {
	t.Helper()
	r := run[*shipping.ShipmentDispatcher]{skips: &skips{}}
	opts = append([]shipping.ShipmentOption{func(c *shipping.ShipmentConfig) {
		c.Logger = quiet()
		c.OnSkip = func(key string, ev shipping.ShipmentEvent, reason string) { r.skips.add(key, record(ev), reason) }
		if st.sql != nil && !st.tx {
			c.Store = st.sql
		}
	}}, opts...)
	mem, tx := handlers(t, st)
	var err error
	if tx != nil {
		r.d, err = shipping.NewShipmentTxDispatcher(st.sql, tx, opts...)
		r.applied = tx.of
	} else {
		r.d, err = shipping.NewShipmentDispatcher(mem, opts...)
		r.applied = mem.of
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Close(context.Background()) })
	return r
}

func startParcels(t *testing.T, st store, opts ...shipping.ParcelOption) run[*shipping.ParcelDispatcher] {
	t.Helper()
	r := run[*shipping.ParcelDispatcher]{skips: &skips{}}
	opts = append([]shipping.ParcelOption{func(c *shipping.ParcelConfig) {
		c.Logger = quiet()
		c.OnSkip = func(key string, ev shipping.ParcelEvent, reason string) { r.skips.add(key, record(ev), reason) }
		if st.sql != nil && !st.tx {
			c.Store = st.sql
		}
	}}, opts...)
	mem, tx := handlers(t, st)
	var err error
	if tx != nil {
		r.d, err = shipping.NewParcelTxDispatcher(st.sql, tx, opts...)
		r.applied = tx.of
	} else {
		r.d, err = shipping.NewParcelDispatcher(mem, opts...)
		r.applied = mem.of
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Close(context.Background()) })
	return r
}

func startContainers(t *testing.T, st store, opts ...shipping.ContainerOption) run[*shipping.ContainerDispatcher] {
	t.Helper()
	r := run[*shipping.ContainerDispatcher]{skips: &skips{}}
	opts = append([]shipping.ContainerOption{func(c *shipping.ContainerConfig) {
		c.Logger = quiet()
		c.OnSkip = func(key string, ev shipping.ContainerEvent, reason string) { r.skips.add(key, record(ev), reason) }
		if st.sql != nil && !st.tx {
			c.Store = st.sql
		}
	}}, opts...)
	mem, tx := handlers(t, st)
	var err error
	if tx != nil {
		r.d, err = shipping.NewContainerTxDispatcher(st.sql, tx, opts...)
		r.applied = tx.of
	} else {
		r.d, err = shipping.NewContainerDispatcher(mem, opts...)
		r.applied = mem.of
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Close(context.Background()) })
	return r
}

func startCrates(t *testing.T, st store, opts ...shipping.CrateOption) run[*shipping.CrateDispatcher] {
	t.Helper()
	r := run[*shipping.CrateDispatcher]{skips: &skips{}}
	opts = append([]shipping.CrateOption{func(c *shipping.CrateConfig) {
		c.Logger = quiet()
		c.OnSkip = func(key int64, ev shipping.CrateEvent, reason string) {
			r.skips.add(strconv.FormatInt(key, 10), record(ev), reason)
		}
		if st.sql != nil && !st.tx {
			c.Store = st.sql
		}
	}}, opts...)
	mem, tx := handlers(t, st)
	var err error
	if tx != nil {
		r.d, err = shipping.NewCrateTxDispatcher(st.sql, tx, opts...)
		r.applied = tx.of
	} else {
		r.d, err = shipping.NewCrateDispatcher(mem, opts...)
		r.applied = mem.of
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Close(context.Background()) })
	return r
}

// publisher is what the tests need of a dispatcher to publish.
type publisher[E any] interface {
	Publish(ctx context.Context, e E) error
	Flush(ctx context.Context) error
}

// publish publishes events in order and waits until each has an outcome.
func publish[E any](t *testing.T, d publisher[E], events ...E) {
	t.Helper()
	for _, e := range events {
		if err := d.Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// wantApplied checks what the handler applied to key.
func wantApplied(t *testing.T, applied func(context.Context, string) ([]string, error), key string, want ...string) {
	t.Helper()
	got, err := applied(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: applied\n\t%q\nwant\n\t%q", key, got, want)
	}
}

// wantSkips checks what the guards skipped, each key's in order (keys
// run in parallel).
func wantSkips(t *testing.T, s *skips, want ...skip) {
	t.Helper()
	got := s.all()
	byKey := func(list []skip) map[string][]skip {
		out := map[string][]skip{}
		for _, sk := range list {
			out[sk.key] = append(out[sk.key], sk)
		}
		return out
	}
	g, w := byKey(got), byKey(want)
	if len(g) != len(w) {
		t.Errorf("skipped\n\t%q\nwant\n\t%q", got, want)
		return
	}
	for key := range w {
		if !slices.Equal(g[key], w[key]) {
			t.Errorf("skipped\n\t%q\nwant\n\t%q", got, want)
			return
		}
	}
}

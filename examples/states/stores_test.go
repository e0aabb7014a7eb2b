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
	"github.com/ordergen/ordergen/runtime/durable"
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

// start starts a dispatcher of one entity on st: with a tracker in memory
// (newMem) or, in st's transactions, with a tracker in its database
// (newTx). configure sets the subscriber's logger, its OnSkip (into the
// run's skips) and, for the store's guards without transactions, its
// store; opts come after it.
func start[D interface{ Close(context.Context) error }, O ~func(*C), C, H, TH any](
	t *testing.T, st store, configure func(*C, *skips),
	newMem func(H, ...O) (D, error), newTx func(durable.TxStore[*sql.Tx], TH, ...O) (D, error), opts []O,
) run[D] {
	t.Helper()
	r := run[D]{skips: &skips{}}
	opts = append([]O{func(c *C) { configure(c, r.skips) }}, opts...)
	var err error
	if st.tx {
		tr, terr := newSQLTracker(t.Context(), st.sql.DB())
		if terr != nil {
			t.Fatal(terr)
		}
		r.d, err = newTx(st.sql, any(tr).(TH), opts...)
		r.applied = tr.of
	} else {
		tr := newTracker()
		r.d, err = newMem(any(tr).(H), opts...)
		r.applied = tr.of
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.d.Close(context.Background()) })
	return r
}

// guardStore is the store of st's guards for a dispatcher without
// transactions: nil for the in-memory ones and for st's transactions,
// whose dispatchers take the store themselves.
func guardStore(st store) durable.Store {
	if st.sql == nil || st.tx {
		return nil
	}
	return st.sql
}

func startShipments(t *testing.T, st store, opts ...shipping.ShipmentOption) run[*shipping.ShipmentDispatcher] {
	t.Helper()
	return start(t, st, func(c *shipping.ShipmentConfig, s *skips) {
		c.Logger, c.Store = quiet(), guardStore(st)
		c.OnSkip = func(key string, ev shipping.ShipmentEvent, reason string) { s.add(key, record(ev), reason) }
	}, shipping.NewShipmentDispatcher, shipping.NewShipmentTxDispatcher, opts)
}

func startParcels(t *testing.T, st store, opts ...shipping.ParcelOption) run[*shipping.ParcelDispatcher] {
	t.Helper()
	return start(t, st, func(c *shipping.ParcelConfig, s *skips) {
		c.Logger, c.Store = quiet(), guardStore(st)
		c.OnSkip = func(key string, ev shipping.ParcelEvent, reason string) { s.add(key, record(ev), reason) }
	}, shipping.NewParcelDispatcher, shipping.NewParcelTxDispatcher, opts)
}

func startContainers(t *testing.T, st store, opts ...shipping.ContainerOption) run[*shipping.ContainerDispatcher] {
	t.Helper()
	return start(t, st, func(c *shipping.ContainerConfig, s *skips) {
		c.Logger, c.Store = quiet(), guardStore(st)
		c.OnSkip = func(key string, ev shipping.ContainerEvent, reason string) { s.add(key, record(ev), reason) }
	}, shipping.NewContainerDispatcher, shipping.NewContainerTxDispatcher, opts)
}

func startCrates(t *testing.T, st store, opts ...shipping.CrateOption) run[*shipping.CrateDispatcher] {
	t.Helper()
	return start(t, st, func(c *shipping.CrateConfig, s *skips) {
		c.Logger, c.Store = quiet(), guardStore(st)
		c.OnSkip = func(key int64, ev shipping.CrateEvent, reason string) {
			s.add(strconv.FormatInt(key, 10), record(ev), reason)
		}
	}, shipping.NewCrateDispatcher, shipping.NewCrateTxDispatcher, opts)
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

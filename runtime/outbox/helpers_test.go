package outbox_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// postgresEnv names the variable that holds the DSN of a PostgreSQL
// database the tests may use (.ci/run starts a throwaway one and sets it).
const postgresEnv = "ORDERGEN_TEST_POSTGRES"

// backend opens handles on one database.
type backend struct {
	name string
	dsn  string // the SQLite file or the PostgreSQL DSN
	open func(ctx context.Context, dsn string) (*sqlstore.Store, error)
}

// handle returns a handle closed when the test ends.
func (b backend) handle(t testing.TB) *sqlstore.Store {
	t.Helper()
	s, err := b.open(context.Background(), b.dsn)
	if err != nil {
		t.Fatalf("open %s store: %v", b.name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sqliteBackend(t testing.TB) backend {
	return backend{name: "sqlite", dsn: filepath.Join(t.TempDir(), "store.db"), open: sqlite.Open}
}

// postgresBackend skips the test when no PostgreSQL is configured.
func postgresBackend(t testing.TB) backend {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		t.Skipf("PostgreSQL tests skipped: set %s to a database DSN (postgres://user@localhost:5432/db?sslmode=disable) to run them; .ci/run starts one", postgresEnv)
	}
	return backend{name: "postgres", dsn: dsn, open: postgres.Open}
}

// eachBackend runs fn on SQLite, and on PostgreSQL when configured (a
// skipped subtest otherwise).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresBackend(t)) })
}

// entityName returns an entity name unique to this run, for a database
// shared with earlier runs.
func entityName(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "Test" + hex.EncodeToString(b[:])
}

// event is the tests' event: its key, the version the outbox stamped, and
// a payload.
type event struct {
	Key     string
	Version uint64
	N       int
}

func (e event) EventKey() string { return e.Key }

// codec is the JSON codec of event; it refuses the name "poison".
type codec struct{}

func (codec) Encode(e event) (string, []byte, error) {
	data, err := json.Marshal(e)
	return "event", data, err
}

func (codec) Decode(name string, data []byte) (event, error) {
	var e event
	if name != "event" {
		return e, fmt.Errorf("%w: %q", durable.ErrUnknownEventType, name)
	}
	err := json.Unmarshal(data, &e)
	return e, err
}

// appendTx appends e to entity's outbox in tx, as a generated outbox does:
// the version the store gives is stamped into it before it is encoded.
func appendTx(ctx context.Context, s *sqlstore.Store, tx *sql.Tx, entity string, e event) (uint64, error) {
	return s.AppendOutbox(ctx, tx, entity, e.Key, func(v uint64) (durable.RawEvent, error) {
		e.Version = v
		name, data, err := codec{}.Encode(e)
		return durable.RawEvent{Name: name, Data: data}, err
	})
}

// write appends e in a transaction of its own.
func write(ctx context.Context, s *sqlstore.Store, entity string, e event) (uint64, error) {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	v, err := appendTx(ctx, s, tx, entity, e)
	if err != nil {
		tx.Rollback()
		return 0, err
	}
	return v, tx.Commit()
}

// writeAll writes n events of each key, keys interleaved.
func writeAll(t testing.TB, s *sqlstore.Store, entity string, keys []string, n int) {
	t.Helper()
	for i := range n {
		for _, k := range keys {
			if _, err := write(context.Background(), s, entity, event{Key: k, N: i}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// delivery is one event a sink took.
type delivery struct {
	key     string
	version uint64
	round   uint64 // the relay's round (see RoundOf); 0 when unknown
	relay   int    // which relay of the test sent it
	failed  bool   // the sink took it but answered with an error
}

// recorder is a sink that records what it takes, safe for concurrent use.
type recorder struct {
	relay int
	log   *deliveries
	// refuse, when set, decides whether to refuse an event without taking
	// it.
	refuse func(ctx context.Context, e event) error
}

// deliveries is what the sinks of a test took, in order.
type deliveries struct {
	mu     sync.Mutex
	got    []delivery
	notify chan struct{} // a value after every delivery
}

func newDeliveries() *deliveries { return &deliveries{notify: make(chan struct{}, 1)} }

func (d *deliveries) add(x delivery) {
	d.mu.Lock()
	d.got = append(d.got, x)
	d.mu.Unlock()
	select {
	case d.notify <- struct{}{}:
	default:
	}
}

func (d *deliveries) all() []delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

// waitFor waits until cond holds of the deliveries, or ctx ends.
func (d *deliveries) waitFor(ctx context.Context, cond func([]delivery) bool) error {
	for {
		if cond(d.all()) {
			return nil
		}
		select {
		case <-d.notify:
		case <-ctx.Done():
			return fmt.Errorf("%w: %d deliveries so far", ctx.Err(), len(d.all()))
		}
	}
}

func (r *recorder) Send(ctx context.Context, key string, e event) error {
	if key != e.Key {
		return fmt.Errorf("key %q for an event of %q", key, e.Key)
	}
	if r.refuse != nil {
		if err := r.refuse(ctx, e); err != nil {
			return err
		}
	}
	r.log.add(delivery{key: key, version: e.Version, round: outbox.RoundOf(ctx), relay: r.relay})
	return nil
}

// perKey returns each key's versions in the order they arrived.
func perKey(ds []delivery) map[string][]uint64 {
	out := map[string][]uint64{}
	for _, d := range ds {
		out[d.key] = append(out[d.key], d.version)
	}
	return out
}

// checkOrder checks that, after dropping re-sends, each key's versions
// arrived increasing from 1 without gaps, up to want[key] when want is not
// nil, and returns how many deliveries were re-sends.
func checkOrder(ds []delivery, want map[string]uint64) (resent int, err error) {
	var errs []error
	seen := map[string]uint64{}
	for _, d := range ds {
		last := seen[d.key]
		switch {
		case d.version <= last:
			resent++
		case d.version == last+1:
			seen[d.key] = d.version
		default:
			errs = append(errs, fmt.Errorf("key %s: version %d arrived after %d", d.key, d.version, last))
		}
	}
	for k, v := range want {
		if seen[k] != v {
			errs = append(errs, fmt.Errorf("key %s: got up to version %d, want %d", k, seen[k], v))
		}
	}
	return resent, errors.Join(errs...)
}

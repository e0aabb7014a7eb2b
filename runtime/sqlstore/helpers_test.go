package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// postgresEnv names the variable that holds the DSN of a PostgreSQL
// database the tests may use (.ci/run starts a throwaway one and sets it).
const postgresEnv = "ORDERGEN_TEST_POSTGRES"

// backend opens handles on one database of a dialect.
type backend struct {
	name string
	// dsn is the SQLite file path or the PostgreSQL DSN.
	dsn  string
	open func(ctx context.Context, dsn string) (*sqlstore.Store, error)
}

func (b backend) handle(t testing.TB) *sqlstore.Store {
	t.Helper()
	s, err := b.open(context.Background(), b.dsn)
	if err != nil {
		t.Fatalf("open %s store: %v", b.name, err)
	}
	return s
}

// handleClosed returns a handle that is closed when the test ends.
func (b backend) handleClosed(t testing.TB) *sqlstore.Store {
	t.Helper()
	s := b.handle(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
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

// backends returns the backends a test runs on: SQLite always, PostgreSQL
// when configured (a skipped subtest otherwise).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteBackend(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, postgresBackend(t)) })
}

// randomSuffix returns a name part unique to this test run, for tables and
// namespaces in a database shared with earlier runs.
func randomSuffix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

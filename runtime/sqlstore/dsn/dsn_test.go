package dsn_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOpenPicksTheDialect(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "b.db")} {
		s, err := dsn.Open(t.Context(), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Dialect() != sqlstore.SQLite {
			t.Errorf("%s: dialect %v", name, s.Dialect())
		}
		s.Close()
	}
	if pg := os.Getenv("ORDERGEN_TEST_POSTGRES"); pg != "" {
		s, err := dsn.Open(t.Context(), pg)
		if err != nil {
			t.Fatal(err)
		}
		if s.Dialect() != sqlstore.Postgres {
			t.Errorf("dialect %v", s.Dialect())
		}
		s.Close()
	}
	for _, bad := range []string{"", "postgres://%zz"} {
		if s, err := dsn.Open(t.Context(), bad); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db": "postgres://u:xxxxx@h:5432/db",
		"postgresql://u@h/db":           "postgresql://u@h/db",
		"/tmp/x.db":                     "/tmp/x.db",
		"postgres://u:p@ss@h/db?x=1":    "postgres://u:xxxxx@h/db?x=1",
	} {
		if got := dsn.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSQLitePath(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/app/ordergen.db":        "/var/lib/app/ordergen.db",
		"sqlite:/var/lib/app/ordergen.db": "/var/lib/app/ordergen.db",
		"ordergen.db":                     "ordergen.db",
		"postgres://u@h/db":               "",
		"postgresql://u@h/db":             "",
	} {
		got, ok := dsn.SQLitePath(in)
		if got != want || ok != (want != "") {
			t.Errorf("SQLitePath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

package dsn

import (
	"context"
	"fmt"
	"strings"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// Open opens the store that s names (see the package documentation). A
// SQLite file that does not exist is created (see SQLitePath to tell
// first).
func Open(ctx context.Context, s string) (*sqlstore.Store, error) {
	if s == "" {
		return nil, fmt.Errorf("dsn: empty store name: give a postgres:// URL or a SQLite file path")
	}
	if path, ok := SQLitePath(s); ok {
		return sqlite.Open(ctx, path)
	}
	return postgres.Open(ctx, s)
}

// SQLitePath returns the path of the SQLite file that s names, or false
// when s names a PostgreSQL database: a command that should not create a
// store can look for the file before Open creates it.
func SQLitePath(s string) (string, bool) {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		return "", false
	}
	return strings.TrimPrefix(s, "sqlite:"), true
}

// Redact returns s with a PostgreSQL password replaced by "xxxxx", for
// messages and logs.
func Redact(s string) string {
	for _, scheme := range []string{"postgres://", "postgresql://"} {
		rest, ok := strings.CutPrefix(s, scheme)
		if !ok {
			continue
		}
		authority, _, _ := strings.Cut(rest, "/")
		at := strings.LastIndex(authority, "@")
		if at < 0 {
			return s
		}
		if user, _, hasPass := strings.Cut(rest[:at], ":"); hasPass {
			return scheme + user + ":xxxxx" + rest[at:]
		}
	}
	return s
}

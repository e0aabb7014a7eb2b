package dsn

import (
	"context"
	"fmt"
	"strings"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// Open opens the store that s names (see the package documentation).
func Open(ctx context.Context, s string) (*sqlstore.Store, error) {
	switch {
	case s == "":
		return nil, fmt.Errorf("dsn: empty store name: give a postgres:// URL or a SQLite file path")
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return postgres.Open(ctx, s)
	case strings.HasPrefix(s, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(s, "sqlite:"))
	}
	return sqlite.Open(ctx, s)
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

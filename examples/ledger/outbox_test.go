package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

// TestOutboxLeg plays the outbox leg on SQLite and PostgreSQL: balances and
// events written in one transaction each, relayed to kfake with a relay
// crash mid-stream, consumed behind the guards: the consumer ends where
// the owner's table and in-order application do (runOutbox fails
// otherwise).
func TestOutboxLeg(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			store, err := dsn.Open(ctx, crashDatabase(t, dialect))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			var out bytes.Buffer
			if err := runOutbox(ctx, &out, store, 5); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "13 of 13 accounts") || !strings.Contains(out.String(), "crashed between send and mark") {
				t.Fatalf("report:\n%s", out.String())
			}
			t.Log("\n" + out.String())
		})
	}
}

package outbox_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// counter is the benchmark's sink: it counts what it takes.
type counter struct{ n atomic.Int64 }

func (c *counter) Send(context.Context, string, event) error { c.n.Add(1); return nil }

// benchKeys is how many keys the benchmark's events spread over.
const benchKeys = 1000

// BenchmarkOutboxRelay relays b.N events of 1,000 keys from the outbox to a
// counting sink (one relay, the default Batch and Senders) and reports its
// throughput, relay-events/s, next to insert-events/s: a plain INSERT loop
// of the same rows into a table with only a primary key, in transactions
// of the relay's Batch, measured in the same run (ratio: relay/insert).
// The outbox is filled before the timer starts; append-events/s is what
// that took, through AppendOutbox in transactions of 256 events.
//
//	go test -run '^$' -bench OutboxRelay -benchtime 20000x ./runtime/outbox
func BenchmarkOutboxRelay(b *testing.B) {
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			be := sqliteBackend(b)
			if name == "postgres" {
				be = postgresBackend(b)
			}
			s := be.handle(b)
			ctx := context.Background()
			entity := entityName(b)
			b.Cleanup(func() { s.DeleteOutbox(context.Background(), entity) })

			insert := plainInserts(b, s, b.N, outbox.DefaultBatch)
			fill := time.Now()
			for i := 0; i < b.N; i += 256 {
				tx, err := s.DB().BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				for j := i; j < min(i+256, b.N); j++ {
					if _, err := appendTx(ctx, s, tx, entity, event{Key: fmt.Sprintf("key-%04d", j%benchKeys), N: j}); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			appendRate := float64(b.N) / time.Since(fill).Seconds()

			sink := &counter{}
			r, err := outbox.New(outbox.Config[string, event]{Store: s, Entity: entity, Codec: codec{}, Sink: sink, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(ctx)
			b.ResetTimer()
			start := time.Now()
			for sink.n.Load() < int64(b.N) {
				if _, err := r.RunOnce(ctx); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			relay := float64(b.N) / elapsed.Seconds()
			b.ReportMetric(relay, "relay-events/s")
			b.ReportMetric(insert, "insert-events/s")
			b.ReportMetric(relay/insert, "ratio")
			b.ReportMetric(appendRate, "append-events/s")
		})
	}
}

// plainInserts inserts n rows like the outbox's into a table of their own,
// one INSERT each, in transactions of batch rows, and returns the rows per
// second.
func plainInserts(b *testing.B, s *sqlstore.Store, n, batch int) float64 {
	b.Helper()
	ctx := context.Background()
	table := "bench_plain_" + entityName(b)
	integer, blob, id := "INTEGER", "BLOB", "INTEGER PRIMARY KEY AUTOINCREMENT"
	if s.Dialect() == sqlstore.Postgres {
		integer, blob, id = "BIGINT", "BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
	}
	if _, err := s.DB().ExecContext(ctx, `CREATE TABLE `+table+` (id `+id+`, entity TEXT NOT NULL, key TEXT NOT NULL, version `+integer+` NOT NULL,
		name TEXT NOT NULL, data `+blob+` NOT NULL, created_ns `+integer+` NOT NULL, sent_ns `+integer+`)`); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.DB().ExecContext(context.Background(), `DROP TABLE `+table) })
	start := time.Now()
	for i := 0; i < n; i += batch {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for j := i; j < min(i+batch, n); j++ {
			name, data, _ := codec{}.Encode(event{Key: fmt.Sprintf("key-%04d", j%benchKeys), Version: uint64(j/benchKeys + 1), N: j})
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (entity, key, version, name, data, created_ns) VALUES ($1, $2, $3, $4, $5, $6)`,
				"E", fmt.Sprintf("key-%04d", j%benchKeys), j/benchKeys+1, name, data, time.Now().UnixNano()); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

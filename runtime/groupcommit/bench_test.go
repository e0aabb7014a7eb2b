package groupcommit_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/genimpl"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// The benchmarks' stream: benchKeys keys, each with versions 1, 2, ...,
// arriving in per-key order, the keys interleaved round-robin (event i is
// key i%benchKeys's version i/benchKeys+1).
const benchKeys = 2000

func benchKey(i int) string { return fmt.Sprintf("key%04d", i%benchKeys) }

// benchSetup is how the grouped benchmarks run on one store.
type benchSetup struct {
	committer groupcommit.Config
	engine    runtime.Config[string, uint64]
	// rows makes the handler insert a row per event (gc_bench), in one
	// statement per work.
	rows bool
}

// benchSetups are the settings measured best on each store: on PostgreSQL a second group reads and locks
// while the first commits; SQLite has one writer.
func benchSetups(store string) benchSetup {
	s := benchSetup{
		committer: groupcommit.Config{Name: "bench", MaxEvents: 1000, MaxWork: time.Second, Logger: quiet},
		engine: runtime.Config[string, uint64]{Name: "bench", MaxActive: 512, BatchSize: 64, Logger: quiet,
			Backlog: runtime.Backlog{PerKey: 1000, Total: 200000, WhenFull: runtime.Block},
			Retry:   runtime.Retry{Attempts: 100, Initial: 100 * time.Microsecond, Max: time.Millisecond}},
	}
	if store == "postgres" {
		s.committer.MaxGroups = 2
	}
	return s
}

// BenchmarkGroupCommit compares a grouped engine with the store doing the
// same stream's version updates by itself. raw: per chunk of MaxEvents
// events, BeginGroup of the chunk's keys and Commit of each key's last
// version, with no engine and no handler (the batched conditional version
// updates as the store does them). grouped: a batch engine whose handler
// calls Committer.Do with a guard-like work (CheckVersion per event, the
// key's new version, a handler that does nothing). The gate: grouped at
// least half of raw on each store.
//
//	go test -run '^$' -bench GroupCommit -benchtime 200000x ./runtime/groupcommit
func BenchmarkGroupCommit(b *testing.B) {
	for _, store := range []string{"postgres", "sqlite"} {
		b.Run(store+"/raw", func(b *testing.B) {
			s := benchStore(b, store)
			benchRaw(b, s, benchSetups(store).committer.MaxEvents)
		})
		b.Run(store+"/grouped", func(b *testing.B) {
			s := benchStore(b, store)
			benchGrouped(b, s, benchSetups(store), 0)
		})
		// Not a part of the gate: batches of one event, so that every
		// event is a key's write, as in raw.
		b.Run(store+"/grouped-batch1", func(b *testing.B) {
			s := benchStore(b, store)
			setup := benchSetups(store)
			setup.engine.BatchSize, setup.engine.MaxActive = 1, 1024
			benchGrouped(b, s, setup, 0)
		})
	}
}

// BenchmarkGroupIsolation measures the two ways a group survives a failing
// key: running the group again without it and taking savepoints from then
// on (regroup, the default), or taking a savepoint before every key from
// the start (savepoints), with no failing works and with 1% of works
// failing (after their writes; the engine retries them), and with works
// that write nothing (write=none) or one row per event in one INSERT per
// work (write=rows, a batch handler's projection).
//
//	go test -run '^$' -bench GroupIsolation -benchtime 100000x ./runtime/groupcommit
func BenchmarkGroupIsolation(b *testing.B) {
	for _, store := range []string{"postgres", "sqlite"} {
		for _, rows := range []bool{false, true} {
			for _, fail := range []float64{0, 0.01} {
				for _, savepoints := range []bool{false, true} {
					mode, write := "regroup", "none"
					if savepoints {
						mode = "savepoints"
					}
					if rows {
						write = "rows"
					}
					b.Run(fmt.Sprintf("%s/write=%s/fail=%g%%/%s", store, write, fail*100, mode), func(b *testing.B) {
						s := benchStore(b, store)
						setup := benchSetups(store)
						setup.committer.Savepoints = savepoints
						setup.rows = rows
						benchGrouped(b, s, setup, fail)
					})
				}
			}
		}
	}
}

// benchStore opens the store named, or skips.
func benchStore(b *testing.B, store string) *sqlstore.Store {
	b.Helper()
	if store == "sqlite" {
		return sqliteStore(b)
	}
	s := postgresStore(b)
	if s == nil {
		b.Skip(skipPostgres)
	}
	return s
}

func benchRaw(b *testing.B, s *sqlstore.Store, maxEvents int) {
	ns := uniqueNamespace(b)
	ctx := context.Background()
	keys := make([]string, 0, maxEvents)
	last := make(map[string]uint64, maxEvents)
	b.ResetTimer()
	for start := 0; start < b.N; start += maxEvents {
		keys, writes := keys[:0], make([]durable.KeyWrite, 0, maxEvents)
		clear(last)
		for i := start; i < min(start+maxEvents, b.N); i++ {
			key := benchKey(i)
			if _, ok := last[key]; !ok {
				keys = append(keys, key)
			}
			last[key] = uint64(i/benchKeys + 1)
		}
		gtx, err := s.BeginGroup(ctx, ns, keys)
		if err != nil {
			b.Fatal(err)
		}
		for _, key := range keys {
			writes = append(writes, durable.KeyWrite{Key: key, KeyState: durable.KeyState{Version: last[key]}})
		}
		if err := gtx.Commit(ctx, writes); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

var errBenchFailure = errors.New("bench: a failing work")

// benchGrouped runs the stream through a batch engine and a Committer, with
// a work that fails at the rate fail.
func benchGrouped(b *testing.B, s *sqlstore.Store, setup benchSetup, fail float64) {
	ns := uniqueNamespace(b)
	c, err := groupcommit.New[*sql.Tx](s, ns, setup.committer)
	if err != nil {
		b.Fatal(err)
	}
	if setup.rows {
		if _, err := s.DB().Exec(`CREATE TABLE IF NOT EXISTS gc_bench (ns TEXT NOT NULL, key TEXT NOT NULL, version BIGINT NOT NULL)`); err != nil {
			b.Fatal(err)
		}
	}
	work := func(key string, events []uint64) groupcommit.Work[*sql.Tx] {
		return func(ctx context.Context, tx *sql.Tx, read durable.KeyState) (groupcommit.Result, error) {
			verdicts := make([]error, len(events))
			var apply []uint64
			v := read.Version
			for i, e := range events {
				if verdicts[i] = genimpl.CheckVersion(e, v, false); verdicts[i] == nil {
					v = e
					apply = append(apply, e)
				}
			}
			if setup.rows && len(apply) > 0 {
				if err := insertRows(ctx, tx, ns, key, apply); err != nil {
					return groupcommit.Result{}, err
				}
			}
			if fail > 0 && mrand.Float64() < fail {
				return groupcommit.Result{}, errBenchFailure
			}
			return groupcommit.Result{Write: durable.KeyState{Version: v, State: read.State}, Verdict: genimpl.Verdicts(verdicts)}, nil
		}
	}
	eng, err := runtime.NewBatch(func(ctx context.Context, key string, events []uint64) error {
		return c.Do(ctx, key, len(events), work(key, events))
	}, setup.engine)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if err := eng.Submit(ctx, benchKey(i), uint64(i/benchKeys+1)); err != nil {
			b.Fatal(err)
		}
	}
	if err := eng.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	st := c.Stats()
	if st.Committed > 0 {
		b.ReportMetric(float64(st.Events)/float64(st.Committed), "events/group")
	}
	if n := st.FailureRollbacks + st.EvictionRollbacks + st.ConflictRollbacks; n > 0 {
		b.ReportMetric(float64(n), "rollbacks")
	}
	if st.SavepointRollbacks > 0 {
		b.ReportMetric(float64(st.SavepointRollbacks), "savepoint-rollbacks")
	}
	if es := eng.Stats(); es.Handled != uint64(b.N) {
		b.Fatalf("%d events handled of %d (stats %+v)", es.Handled, b.N, es)
	}
	if err := eng.Close(ctx); err != nil {
		b.Fatal(err)
	}
	_ = c.Close()
}

// insertRows is a batch handler's write: a row per event, in one statement.
func insertRows(ctx context.Context, tx *sql.Tx, ns, key string, versions []uint64) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO gc_bench (ns, key, version) VALUES `)
	args := make([]any, 0, 2+len(versions))
	args = append(args, ns, key)
	for i, v := range versions {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "($1, $2, $%d)", i+3)
		args = append(args, int64(v))
	}
	_, err := tx.ExecContext(ctx, q.String(), args...)
	return err
}

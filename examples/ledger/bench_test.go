package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// The benchmarks of version-guarded handling: the same stream of Deposited
// events (benchKeys accounts, versions 1, 2, ... each) through the version
// guard, on the in-memory stores and, effectively once, on SQLite and
// PostgreSQL (ORDERGEN_TEST_POSTGRES), side by side from the schema.
// per-event: Account's generated dispatcher, one transaction per event
// (handler write + version advance). grouped: the same, committed as the
// schema's group: says (many keys' events in one transaction, a handler
// write each). batched: Wallet's, which the schema batches: one
// transaction per batch of up to 64 events of a key (one write of the
// balance, one version advance).
//
//	go test -run '^$' -bench Guarded -benchtime 2000x ./examples/ledger
const benchKeys = 32

// benchStore opens an empty store for one run of a benchmark; nil means the
// in-memory stores.
type benchStore struct {
	name string
	open func(b *testing.B) *sqlstore.Store
	// maxActive is the keys in progress at once: 1 for SQLite, whose one
	// writer at a time makes more workers only contend for its connection.
	maxActive int
}

func benchStores(b *testing.B) []benchStore {
	stores := []benchStore{
		{name: "memory", maxActive: 16, open: func(*testing.B) *sqlstore.Store { return nil }},
		{name: "sqlite", maxActive: 1, open: func(b *testing.B) *sqlstore.Store {
			s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	if pg := os.Getenv("ORDERGEN_TEST_POSTGRES"); pg != "" {
		stores = append(stores, benchStore{name: "postgres", maxActive: 16, open: func(b *testing.B) *sqlstore.Store {
			s, err := postgres.Open(b.Context(), pg)
			if err != nil {
				b.Fatal(err)
			}
			return s
		}})
	}
	return stores
}

// benchBalances creates (or empties) the handlers' table and the Account
// namespace.
func benchBalances(b *testing.B, s *sqlstore.Store) {
	ctx := b.Context()
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS bench_balances (account TEXT PRIMARY KEY, balance BIGINT NOT NULL)`,
		`DELETE FROM bench_balances`,
	} {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.DeleteNamespace(ctx, "Account"); err != nil {
		b.Fatal(err)
	}
	if err := s.DeleteNamespace(ctx, "Wallet"); err != nil {
		b.Fatal(err)
	}
}

func deposit(ctx context.Context, tx *sql.Tx, account string, amount int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO bench_balances (account, balance) VALUES ($1, $2)
		ON CONFLICT (account) DO UPDATE SET balance = bench_balances.balance + excluded.balance`, account, amount)
	return err
}

// txBook is the benchmarks' AccountTxHandler: one write per deposit.
type txBook struct{ ledger.AccountTxHandler }

func (txBook) HandleDeposited(ctx context.Context, tx *sql.Tx, e ledger.Deposited) error {
	return deposit(ctx, tx, e.AccountID, e.Amount)
}

// memBook is the benchmarks' in-memory AccountHandler: it does nothing.
type memBook struct{ ledger.AccountHandler }

func (memBook) HandleDeposited(context.Context, ledger.Deposited) error { return nil }

func benchConfig(maxActive int) ledger.AccountOption {
	return func(c *ledger.AccountConfig) {
		c.MaxActive = maxActive
		c.Backlog = runtime.Backlog{PerKey: 1 << 20, Total: 1 << 22, WhenFull: runtime.Block}
		c.Logger = quietLogger()
	}
}

func BenchmarkGuardedHandling(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name+"/per-event", func(b *testing.B) { benchPerEvent(b, st, false) })
		if st.name != "memory" { // nothing to commit in memory
			b.Run(st.name+"/grouped", func(b *testing.B) { benchPerEvent(b, st, true) })
		}
		b.Run(st.name+"/batched", func(b *testing.B) { benchBatched(b, st) })
	}
}

// events returns b.N deposits over benchKeys accounts, versions in order,
// the accounts interleaved.
func events(n int) []ledger.Deposited {
	out := make([]ledger.Deposited, 0, n)
	for i := range n {
		out = append(out, ledger.Deposited{AccountID: fmt.Sprintf("acct-%d", i%benchKeys), Version: uint64(i/benchKeys + 1), Amount: 1})
	}
	return out
}

// benchPerEvent runs the deposits through Account's dispatcher, whose
// schema groups its transactional subscribers (group: {max_events: 512,
// linger: 2ms}). grouped: as the schema says, with every key in progress at
// once so that groups can form. Otherwise groups of one event
// (Group.MaxEvents 1): one transaction per event, as without group:.
func benchPerEvent(b *testing.B, st benchStore, grouped bool) {
	ctx := b.Context()
	s := st.open(b)
	var d *ledger.AccountDispatcher
	var err error
	if s == nil {
		d, err = ledger.NewAccountDispatcher(memBook{}, benchConfig(st.maxActive))
	} else {
		defer s.Close()
		benchBalances(b, s)
		group := func(c *ledger.AccountConfig) { c.Group.MaxEvents = 1 }
		if grouped {
			group = func(c *ledger.AccountConfig) { c.MaxActive = benchKeys }
		}
		d, err = ledger.NewAccountTxDispatcher(s, txBook{}, benchConfig(st.maxActive), group)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close(context.Background())
	evs := events(b.N)
	b.ResetTimer()
	for _, e := range evs {
		if err := d.PublishDeposited(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if st := d.Stats()["Account"]; st.Handled != uint64(b.N) {
		b.Fatalf("handled %d of %d events: %+v", st.Handled, b.N, st)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// benchBatched runs the same deposits as Credited events of Wallet, which
// the schema batches (batch: {max_events: 64, linger: 2ms}): the generated
// batch guard decides each event, the handler gets up to 64 events of a
// wallet in one call, and on a store one transaction (one write of the
// balance, one version advance) covers them.
func benchBatched(b *testing.B, st benchStore) {
	ctx := b.Context()
	s := st.open(b)
	opt := func(c *ledger.WalletConfig) {
		c.MaxActive = st.maxActive
		c.Backlog = runtime.Backlog{PerKey: 1 << 20, Total: 1 << 22, WhenFull: runtime.Block}
		c.Logger = quietLogger()
	}
	var d *ledger.WalletDispatcher
	var err error
	if s == nil {
		d, err = ledger.NewWalletDispatcher(memWallets{}, opt)
	} else {
		defer s.Close()
		benchBalances(b, s)
		var w *sqlWallets
		w, err = newSQLWallets(ctx, s.DB(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		w.applied = "" // no log of the versions: one write per batch, as a ledger would
		d, err = ledger.NewWalletTxDispatcher(s, w, opt)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close(context.Background())
	evs := events(b.N)
	b.ResetTimer()
	for _, e := range evs {
		if err := d.PublishCredited(ctx, ledger.Credited{WalletID: e.AccountID, Version: e.Version, Amount: e.Amount}); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if st := d.Stats()["Wallet"]; st.Handled != uint64(b.N) {
		b.Fatalf("handled %d of %d events: %+v", st.Handled, b.N, st)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// memWallets is the benchmarks' in-memory WalletHandler: it does nothing.
type memWallets struct{}

func (memWallets) HandleWalletBatch(context.Context, string, []ledger.WalletEvent) error { return nil }

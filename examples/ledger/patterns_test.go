package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

// The handling patterns of examples/schema.yaml (Account's on_gap: resync,
// Wallet's batch, Customer's notifications), through the generated code on
// the in-memory guards, SQLite and PostgreSQL (ORDERGEN_TEST_POSTGRES; its
// cases skip without it).

// patternStore is one store the patterns' tests run on; a nil store means
// the in-memory guards and in-memory handlers.
type patternStore struct {
	name  string
	store *sqlstore.Store
}

func patternStores(t *testing.T) []patternStore {
	t.Helper()
	out := []patternStore{{name: "memory"}}
	for _, dialect := range []string{"sqlite", "postgres"} {
		if dialect == "postgres" && os.Getenv("ORDERGEN_TEST_POSTGRES") == "" {
			t.Log("PostgreSQL cases skipped: set ORDERGEN_TEST_POSTGRES to a database DSN to run them; .ci/run starts one")
			continue
		}
		s, err := dsn.Open(t.Context(), crashDatabase(t, dialect)) // an empty database of its own
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, patternStore{name: dialect, store: s})
	}
	return out
}

// accountRun is an Account dispatcher on one store, with a handler whose
// ResyncAccount reads src, and a way to read the balance it reached.
type accountRun struct {
	d       *ledger.AccountDispatcher
	balance func(account string) int64
}

func startAccounts(t *testing.T, ps patternStore, src *truth, opts ...ledger.AccountOption) accountRun {
	t.Helper()
	ctx := t.Context()
	opts = append([]ledger.AccountOption{func(c *ledger.AccountConfig) { c.Logger = quietLogger() }}, opts...)
	var run accountRun
	var err error
	if ps.store == nil {
		b := newBook(0, 1)
		b.source = src
		run.d, err = ledger.NewAccountDispatcher(b, opts...)
		run.balance = b.balance
	} else {
		var b *sqlBook
		b, err = newSQLBook(ctx, ps.store.DB(), "patterns")
		if err != nil {
			t.Fatal(err)
		}
		b.source = src
		run.d, err = ledger.NewAccountTxDispatcher(ps.store, b, opts...)
		run.balance = func(account string) int64 {
			balances, _, err := b.snapshot(ctx, ps.store.DB())
			if err != nil {
				t.Fatal(err)
			}
			return balances[account]
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.d.Close(context.Background()) })
	return run
}

func publishAccounts(t *testing.T, d *ledger.AccountDispatcher, events []ledger.AccountEvent) {
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

// TestResyncPastTheBound: version 4 of an account is lost; versions 5 to 8
// wait for it until the resequencer's bound (3 held) is hit; the account is
// resynced from the source of truth (version 12) and moves on, without an
// operator, to a new event after it.
func TestResyncPastTheBound(t *testing.T) {
	for _, ps := range patternStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			src := newTruth()
			events := accountStreamOf("a", 13)
			src.record(events[:12]...) // the writer is at version 12
			run := startAccounts(t, ps, src, func(c *ledger.AccountConfig) { c.MaxHeld = 3 })
			var delivered []ledger.AccountEvent
			for _, e := range events[:12] {
				if e.EventVersion() != 4 { // lost on its way
					delivered = append(delivered, e)
				}
			}
			publishAccounts(t, run.d, delivered)
			st := run.d.Stats()["Account"]
			// 1-3 applied; 5-8 held, resynced to 12 (covered: skipped); 9-12
			// stale after it: skipped.
			if st.Resynced != 1 || st.Handled != 3 || st.Skipped != 8 || st.Parked != 0 || st.Held != 0 || st.Pending != 0 {
				t.Fatalf("stats %+v", st)
			}
			if got, want := run.balance("a"), int64(66); got != want { // 1+2+...+11
				t.Fatalf("balance %d after the resync, the source has %d", got, want)
			}
			src.record(events[12])
			publishAccounts(t, run.d, events[12:])
			if got, want := run.balance("a"), int64(78); got != want {
				t.Fatalf("balance %d after version 13, want %d", got, want)
			}
			if v, err := run.d.Version(t.Context(), "Account", "a"); err != nil || v != 13 {
				t.Fatalf("version %d, %v; want 13", v, err)
			}
			if s, err := run.d.State(t.Context(), "Account", "a"); err != nil || s != ledger.AccountStateOpen {
				t.Fatalf("state %q, %v; want Open", s, err)
			}
			parked, err := run.d.ParkedKeys(t.Context())
			if err != nil || len(parked) != 0 {
				t.Fatalf("parked %v, %v", parked, err)
			}
		})
	}
}

// TestResyncThatFailsParks: the source of truth is down; the resync is
// retried, then the account parks with the reason and its held events. An
// operator's replay, once the missing event arrived, still works.
func TestResyncThatFailsParks(t *testing.T) {
	for _, ps := range patternStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := t.Context()
			src := newTruth()
			events := accountStreamOf("a", 8)
			src.record(events...)
			src.fail(errors.New("core banking is down"))
			run := startAccounts(t, ps, src, func(c *ledger.AccountConfig) {
				c.MaxHeld = 2
				c.Retry = runtime.Retry{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond, NoJitter: true}
			})
			var delivered []ledger.AccountEvent
			for _, e := range events {
				if e.EventVersion() != 3 {
					delivered = append(delivered, e)
				}
			}
			publishAccounts(t, run.d, delivered)
			if n := src.readCount(); n != 3 {
				t.Fatalf("%d reads of the source, want the 3 attempts", n)
			}
			parked, err := run.d.ParkedKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			keys := parked["Account"]
			if len(keys) != 1 || keys[0].Key != "a" || !strings.Contains(keys[0].Reason, "resync failed after 3 attempts") ||
				!strings.Contains(keys[0].Reason, "core banking is down") {
				t.Fatalf("parked %+v", parked)
			}
			held, err := run.d.ParkedEvents(ctx, "Account", "a")
			if err != nil || len(held) != 5 { // 4..8
				t.Fatalf("parked events %d, %v; want versions 4 to 8", len(held), err)
			}
			if st := run.d.Stats()["Account"]; st.Resynced != 0 || st.Handled != 2 {
				t.Fatalf("stats %+v", st)
			}
			// The lost event turns up; the operator replays.
			publishAccounts(t, run.d, events[2:3])
			if err := run.d.Replay(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			if err := run.d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := run.balance("a"), int64(28); got != want { // 1+...+7
				t.Fatalf("balance %d after the replay, want %d", got, want)
			}
		})
	}
}

// walletRun is a Wallet dispatcher on one store, with what its handler
// reached.
type walletRun struct {
	d     *ledger.WalletDispatcher
	state func(wallet string) (int64, [][]uint64)
	gate  chan struct{} // in memory: closed to let the handler go on
}

func startWallets(t *testing.T, ps patternStore, opts ...ledger.WalletOption) walletRun {
	t.Helper()
	ctx := t.Context()
	opts = append([]ledger.WalletOption{func(c *ledger.WalletConfig) { c.Logger = quietLogger() }}, opts...)
	var run walletRun
	var err error
	if ps.store == nil {
		w := newWallets()
		run.gate = make(chan struct{})
		w.gate = run.gate
		run.d, err = ledger.NewWalletDispatcher(w, opts...)
		run.state = func(wallet string) (int64, [][]uint64) { return w.balance(wallet), w.callsOf(wallet) }
	} else {
		var w *sqlWallets
		w, err = newSQLWallets(ctx, ps.store.DB(), "patterns")
		if err != nil {
			t.Fatal(err)
		}
		run.d, err = ledger.NewWalletTxDispatcher(ps.store, w, opts...)
		run.state = func(wallet string) (int64, [][]uint64) {
			b, calls, err := w.state(ctx, ps.store.DB(), wallet)
			if err != nil {
				t.Fatal(err)
			}
			return b, calls
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if run.gate != nil {
			select {
			case <-run.gate:
			default:
				close(run.gate)
			}
		}
		run.d.Close(context.Background())
	})
	return run
}

// TestBatchNeverSpansAGapNorAppliesADuplicate publishes a wallet's events
// with duplicates, stale redeliveries and versions out of order, and checks
// every call of the batch handler: its versions follow each other (after a
// snapshot that crossed a gap), no version reaches the handler twice, and
// the balance is that of in-order application.
func TestBatchNeverSpansAGapNorAppliesADuplicate(t *testing.T) {
	// Versions, as delivered: 1 opens; 2, 3; 3 again; 6 and 7 before 4 and
	// 5; 2 again; 9 (a snapshot: a new opening) before 8; 10.
	order := []uint64{1, 2, 3, 3, 6, 7, 4, 5, 2, 9, 8, 10}
	event := func(v uint64) ledger.WalletEvent {
		switch v {
		case 1, 9:
			return ledger.WalletOpened{WalletID: "w", Version: v, Owner: "o"}
		case 5:
			return ledger.Debited{WalletID: "w", Version: v, Amount: 1}
		}
		return ledger.Credited{WalletID: "w", Version: v, Amount: int64(v)}
	}
	for _, ps := range patternStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := t.Context()
			run := startWallets(t, ps, func(c *ledger.WalletConfig) { c.Linger = 0 })
			for _, v := range order {
				if err := run.d.Publish(ctx, event(v)); err != nil {
					t.Fatal(err)
				}
			}
			if run.gate != nil {
				close(run.gate) // the first call waited: the rest queued behind it
			}
			if err := run.d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			balance, calls := run.state("w")
			seen := map[uint64]bool{}
			for _, call := range calls {
				for i, v := range call {
					if seen[v] {
						t.Fatalf("version %d applied twice: calls %v", v, calls)
					}
					seen[v] = true
					if i > 0 && v != call[i-1]+1 {
						t.Fatalf("a call spans a gap: %v (calls %v)", call, calls)
					}
				}
			}
			// 8 is stale once the snapshot 9 is applied; everything else
			// reaches the handler once.
			for _, v := range []uint64{1, 2, 3, 4, 5, 6, 7, 9, 10} {
				if !seen[v] {
					t.Fatalf("version %d never applied: calls %v", v, calls)
				}
			}
			if balance != 10 { // 9 reopens at 0, then 10
				t.Fatalf("balance %d, want 10 (calls %v)", balance, calls)
			}
			st := run.d.Stats()["Wallet"]
			if st.Handled != 9 || st.Skipped != 3 || st.Held != 0 || st.Pending != 0 || st.Parked != 0 {
				t.Fatalf("stats %+v", st)
			}
			if v, err := run.d.Version(ctx, "Wallet", "w"); err != nil || v != 10 {
				t.Fatalf("version %d, %v; want 10", v, err)
			}
			if ps.store == nil && len(calls) >= len(order)-3 {
				t.Errorf("%d calls for %d events: nothing was batched (%v)", len(calls), len(order), calls)
			}
		})
	}
}

// TestNotificationsCoalesce: while a customer's handler is busy with one
// notification, 50 more of that customer arrive; they make one more call,
// not 50.
func TestNotificationsCoalesce(t *testing.T) {
	for _, ps := range patternStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			ctx := t.Context()
			c := newCustomers()
			c.started, c.gate = make(chan string, 10), make(chan struct{})
			var d *ledger.CustomerDispatcher
			var err error
			quiet := func(c *ledger.CustomerConfig) { c.Logger = quietLogger() }
			if ps.store == nil {
				d, err = ledger.NewCustomerDispatcher(c, quiet)
			} else {
				table := "patterns_customers"
				if _, err := ps.store.DB().ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (customer TEXT PRIMARY KEY, fetches BIGINT NOT NULL)`); err != nil {
					t.Fatal(err)
				}
				d, err = ledger.NewCustomerTxDispatcher(ps.store, &sqlCustomers{table: table, customers: c}, quiet)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close(context.Background())
			if err := d.PublishCustomerChanged(ctx, ledger.CustomerChanged{CustomerID: "c"}); err != nil {
				t.Fatal(err)
			}
			if key := <-c.started; key != "c" { // the handler is busy with it
				t.Fatalf("started %q", key)
			}
			const burst = 50
			for range burst {
				if err := d.PublishCustomerChanged(ctx, ledger.CustomerChanged{CustomerID: "c"}); err != nil {
					t.Fatal(err)
				}
			}
			close(c.gate)
			if err := d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if n := c.fetchesOf("c"); n != 2 {
				t.Fatalf("%d calls for 1 + %d notifications, want 2", n, burst)
			}
			st := d.Stats()["Customer"]
			if st.Accepted != burst+1 || st.Handled != 2 || st.Conflated != burst-1 {
				t.Fatalf("stats %+v", st)
			}
			if ps.store != nil {
				var fetches int
				if err := ps.store.DB().QueryRowContext(ctx, `SELECT fetches FROM patterns_customers WHERE customer = $1`, "c").Scan(&fetches); err != nil || fetches != 2 {
					t.Fatalf("fetches committed: %d, %v; want 2", fetches, err)
				}
			}
		})
	}
}

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// The handling patterns of the schema, one line each: Account's resync past
// the resequencer's bound, Wallet's batches, Customer's notifications.

const (
	lostAccount = "acct-lost"
	lostVersion = 7
)

// runPatterns plays the three patterns and checks what each promises.
func runPatterns(ctx context.Context, out io.Writer, store *sqlstore.Store) error {
	if err := runResync(ctx, out); err != nil {
		return fmt.Errorf("resync: %w", err)
	}
	if err := runBatches(ctx, out, store); err != nil {
		return fmt.Errorf("batches: %w", err)
	}
	return runNotifications(ctx, out)
}

// runResync loses one event of an account on its way: the account's later
// events wait for it until the resequencer's bound, then the account is
// resynced from its source of truth and goes on without an operator.
func runResync(ctx context.Context, out io.Writer) error {
	const maxHeld = 8
	src := newTruth()
	events := accountStreamOf(lostAccount, 20)
	src.record(events...)
	b := newBook(0, 1)
	b.source = src
	d, err := ledger.NewAccountDispatcher(b, func(c *ledger.AccountConfig) {
		c.MaxHeld = maxHeld
		c.Logger = quietLogger()
	})
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	for _, e := range events {
		if e.EventVersion() == lostVersion {
			continue // lost on its way
		}
		if err := d.Publish(ctx, e); err != nil {
			return err
		}
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	st := d.Stats()["Account"]
	want, err := src.read(lostAccount)
	if err != nil {
		return err
	}
	if st.Resynced != 1 || st.ParkedKeys != 0 || st.Held != 0 || b.balance(lostAccount) != want.balance {
		return fmt.Errorf("%s after the lost v%d: balance %d, the source has %d; stats %+v", lostAccount, lostVersion, b.balance(lostAccount), want.balance, st)
	}
	fmt.Fprintf(out, "resync   %s v%d never arrived: %d later events waited, then the key was resynced from its source of truth\n"+
		"         (ResyncAccount, version %d): %d events it covered skipped, balance %d as at the source, 0 keys parked\n",
		lostAccount, lostVersion, maxHeld+1, want.version, st.Skipped, b.balance(lostAccount))
	return nil
}

// runBatches credits wallets through their batch handler, in the store's
// transactions: one call, one write and one version advance per batch.
func runBatches(ctx context.Context, out io.Writer, store *sqlstore.Store) error {
	const walletCount, perWallet = 8, 50
	w, err := newSQLWallets(ctx, store.DB(), "ledger_example")
	if err != nil {
		return err
	}
	d, err := ledger.NewWalletTxDispatcher(store, w, func(c *ledger.WalletConfig) { c.Logger = quietLogger() })
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	want := map[string]int64{}
	for v := 1; v <= perWallet; v++ {
		for i := range walletCount {
			id := fmt.Sprintf("wallet-%d", i)
			var e ledger.WalletEvent = ledger.Credited{WalletID: id, Version: uint64(v), Amount: int64(v)}
			if v == 1 {
				e = ledger.WalletOpened{WalletID: id, Version: 1, Owner: "owner " + id}
			} else {
				want[id] += int64(v)
			}
			if err := d.Publish(ctx, e); err != nil {
				return err
			}
		}
	}
	if err := d.Flush(ctx); err != nil {
		return err
	}
	calls := 0
	for id, balance := range want {
		got, perCall, err := w.state(ctx, store.DB(), id)
		if err != nil {
			return err
		}
		if got != balance {
			return fmt.Errorf("%s: balance %d, in-order application gives %d", id, got, balance)
		}
		calls += len(perCall)
	}
	fmt.Fprintf(out, "batches  %d events of %d wallets in %d calls of HandleWalletBatch (a transaction, a write and a version\n"+
		"         advance each); balances equal in-order application\n", walletCount*perWallet, walletCount, calls)
	return nil
}

// runNotifications sends a burst of notifications for one customer while
// its handler is busy: they make one call, which fetches the customer.
func runNotifications(ctx context.Context, out io.Writer) error {
	const burst = 100
	c := newCustomers()
	c.started, c.gate = make(chan string, 1), make(chan struct{})
	d, err := ledger.NewCustomerDispatcher(c, func(c *ledger.CustomerConfig) { c.Logger = quietLogger() })
	if err != nil {
		return err
	}
	defer d.Close(context.Background())
	if err := d.PublishCustomerChanged(ctx, ledger.CustomerChanged{CustomerID: "cust-1"}); err != nil {
		return err
	}
	<-c.started // busy with the first one
	for range burst {
		if err := d.PublishCustomerChanged(ctx, ledger.CustomerChanged{CustomerID: "cust-1"}); err != nil {
			return err
		}
	}
	close(c.gate) // the second call's start finds room in c.started
	if err := d.Flush(ctx); err != nil {
		return err
	}
	if n := c.fetchesOf("cust-1"); n != 2 {
		return fmt.Errorf("%d calls for 1 + %d notifications, want 2", n, burst)
	}
	st := d.Stats()["Customer"]
	fmt.Fprintf(out, "notify   1 + %d notifications of cust-1 while its handler was busy made %d calls of HandleCustomerChanged\n"+
		"         (%d conflated); each call fetches the customer's current state from its owner\n", burst, c.fetchesOf("cust-1"), st.Conflated)
	return nil
}

// accountStreamOf returns account's events 1..n, in order: an opening, then
// deposits of 1, 2, 3, ... (version v deposits v-1).
func accountStreamOf(account string, n int) []ledger.AccountEvent {
	events := []ledger.AccountEvent{ledger.AccountOpened{AccountID: account, Version: 1, Owner: "o"}}
	for v := 2; v <= n; v++ {
		events = append(events, ledger.Deposited{AccountID: account, Version: uint64(v), Amount: int64(v - 1)})
	}
	return events
}

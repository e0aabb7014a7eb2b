package main

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/examples/gen"
)

// walletDelta returns what a batch of wallet events does to the balance, in
// one sum: a batch's whole point is one write for many events.
func walletDelta(events []ledger.WalletEvent) (delta int64, opened bool) {
	for _, ev := range events {
		switch e := ev.(type) {
		case ledger.WalletOpened:
			delta, opened = 0, true // a snapshot: the wallet starts again
		case ledger.Credited:
			delta += e.Amount
		case ledger.Debited:
			delta -= e.Amount
		}
	}
	return delta, opened
}

// versionsOf returns the versions of events, in order.
func versionsOf(events []ledger.WalletEvent) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.EventVersion()
	}
	return out
}

// wallets is the example's ledger.WalletHandler: balances in memory, one
// update per batch, and the versions of every call kept, so that a test can
// see that no batch spans a gap and no version is applied twice.
type wallets struct {
	mu       sync.Mutex
	balances map[string]int64
	calls    map[string][][]uint64 // per wallet, the versions of each call
	// gate, when set, holds every call until it is closed.
	gate chan struct{}
}

func newWallets() *wallets {
	return &wallets{balances: map[string]int64{}, calls: map[string][][]uint64{}}
}

// HandleWalletBatch implements ledger.WalletHandler.
func (w *wallets) HandleWalletBatch(ctx context.Context, key string, events []ledger.WalletEvent) error {
	if w.gate != nil {
		select {
		case <-w.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	delta, opened := walletDelta(events)
	w.mu.Lock()
	defer w.mu.Unlock()
	if opened {
		w.balances[key] = 0
	}
	w.balances[key] += delta
	w.calls[key] = append(w.calls[key], versionsOf(events))
	return nil
}

func (w *wallets) balance(key string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.balances[key]
}

func (w *wallets) callsOf(key string) [][]uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]uint64(nil), w.calls[key]...)
}

// sqlWallets is the example's ledger.WalletTxHandler: one write of the
// balance per batch in the store's transaction, which commits with the
// wallet's version, and a log of the versions applied.
type sqlWallets struct {
	balances, applied string // table names
}

func newSQLWallets(ctx context.Context, db *sql.DB, prefix string) (*sqlWallets, error) {
	w := &sqlWallets{balances: prefix + "_wallets", applied: prefix + "_wallet_versions"}
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS ` + w.balances + ` (wallet TEXT PRIMARY KEY, balance BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + w.applied + ` (wallet TEXT NOT NULL, version BIGINT NOT NULL, call BIGINT NOT NULL)`,
		`DELETE FROM ` + w.balances,
		`DELETE FROM ` + w.applied,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("wallet tables: %w", err)
		}
	}
	return w, nil
}

// HandleWalletBatch implements ledger.WalletTxHandler.
func (w *sqlWallets) HandleWalletBatch(ctx context.Context, tx *sql.Tx, key string, events []ledger.WalletEvent) error {
	delta, opened := walletDelta(events)
	set := `balance = ` + w.balances + `.balance + excluded.balance`
	if opened {
		set = `balance = excluded.balance`
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+w.balances+` (wallet, balance) VALUES ($1, $2)
		ON CONFLICT (wallet) DO UPDATE SET `+set, key, delta); err != nil {
		return fmt.Errorf("wallet %s: %w", key, err)
	}
	if w.applied == "" {
		return nil
	}
	// The call's number: its first version, unique per call of a wallet.
	call := int64(events[0].EventVersion())
	for _, ev := range events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+w.applied+` (wallet, version, call) VALUES ($1, $2, $3)`, key, int64(ev.EventVersion()), call); err != nil {
			return fmt.Errorf("wallet %s: %w", key, err)
		}
	}
	return nil
}

// state returns a wallet's balance and the versions of each call, in call
// order.
func (w *sqlWallets) state(ctx context.Context, db *sql.DB, key string) (int64, [][]uint64, error) {
	var balance int64
	if err := db.QueryRowContext(ctx, `SELECT balance FROM `+w.balances+` WHERE wallet = $1`, key).Scan(&balance); err != nil {
		return 0, nil, fmt.Errorf("wallet %s: %w", key, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT call, version FROM `+w.applied+` WHERE wallet = $1 ORDER BY call, version`, key)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var calls [][]uint64
	last := int64(-1)
	for rows.Next() {
		var call, version int64
		if err := rows.Scan(&call, &version); err != nil {
			return 0, nil, err
		}
		if call != last {
			calls = append(calls, nil)
			last = call
		}
		calls[len(calls)-1] = append(calls[len(calls)-1], uint64(version))
	}
	return balance, calls, rows.Err()
}

// customers is the example's ledger.CustomerHandler: told that a customer
// changed, it "fetches" the customer from its owner (counts the reads).
type customers struct {
	mu      sync.Mutex
	fetches map[string]int
	// started, when set, hears the key of every call as it starts; gate,
	// when set, holds every call until it is closed.
	started chan string
	gate    chan struct{}
}

func newCustomers() *customers { return &customers{fetches: map[string]int{}} }

// HandleCustomerChanged implements ledger.CustomerHandler.
func (c *customers) HandleCustomerChanged(ctx context.Context, key string) error {
	if c.started != nil {
		c.started <- key
	}
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetches[key]++
	return nil
}

func (c *customers) fetchesOf(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches[key]
}

// sqlCustomers is the example's ledger.CustomerTxHandler: each call records
// a fetch in the store's transaction.
type sqlCustomers struct {
	*customers
	table string
}

// HandleCustomerChanged implements ledger.CustomerTxHandler.
func (c *sqlCustomers) HandleCustomerChanged(ctx context.Context, tx *sql.Tx, key string) error {
	if err := c.customers.HandleCustomerChanged(ctx, key); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+c.table+` (customer, fetches) VALUES ($1, 1)
		ON CONFLICT (customer) DO UPDATE SET fetches = `+c.table+`.fetches + 1`, key); err != nil {
		return fmt.Errorf("customer %s: %w", key, err)
	}
	return nil
}

var (
	_ ledger.WalletHandler     = (*wallets)(nil)
	_ ledger.WalletTxHandler   = (*sqlWallets)(nil)
	_ ledger.CustomerHandler   = (*customers)(nil)
	_ ledger.CustomerTxHandler = (*sqlCustomers)(nil)
)

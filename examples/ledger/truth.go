package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// truth is the accounts' source of truth, as their single writer keeps it:
// each account's version, balance and state after the events it published.
// A resync (ResyncAccount) reads it when an account's resequencer bound is
// hit: a lost event then costs a read instead of an operator.
type truth struct {
	mu       sync.Mutex
	accounts map[string]accountTruth
	down     error // every read fails with it while set
	reads    int
}

// accountTruth is one account at the source.
type accountTruth struct {
	version uint64
	balance int64
	opened  bool
	state   ledger.AccountState
}

// errNoSource is what a book without a source of truth answers a resync:
// permanent, so the key parks as it would without on_gap: resync.
var errNoSource = errors.New("no source of truth to resync from")

func newTruth() *truth { return &truth{accounts: map[string]accountTruth{}} }

// record applies events, in publication order, as the writer does.
func (t *truth) record(events ...ledger.AccountEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ev := range events {
		a := t.accounts[ev.EventKey()]
		a.version = ev.EventVersion()
		switch e := ev.(type) {
		case ledger.AccountOpened:
			a.opened, a.balance, a.state = true, 0, ledger.AccountStateOpen
		case ledger.Deposited:
			a.balance += e.Amount
		case ledger.Withdrew:
			a.balance -= e.Amount
		case ledger.AccountFrozen:
			a.state = ledger.AccountStateFrozen
		case ledger.AccountClosed:
			a.state = ledger.AccountStateClosed
		}
		t.accounts[ev.EventKey()] = a
	}
}

// fail makes every read fail with err (nil: the source is back).
func (t *truth) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.down = err
}

// read returns account as the source has it now.
func (t *truth) read(account string) (accountTruth, error) {
	if t == nil {
		return accountTruth{}, runtime.Permanent(errNoSource)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reads++
	if t.down != nil {
		return accountTruth{}, t.down
	}
	a, ok := t.accounts[account]
	if !ok {
		return accountTruth{}, runtime.Permanent(fmt.Errorf("account %s is unknown to the source of truth", account))
	}
	return a, nil
}

// readCount returns how many reads were made.
func (t *truth) readCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.reads
}

func (a accountTruth) snapshot() ledger.AccountSnapshot {
	return ledger.AccountSnapshot{Version: a.version, State: a.state}
}

// ResyncAccount implements ledger.AccountHandler: it copies the account
// from the source of truth into the book.
func (b *book) ResyncAccount(_ context.Context, account string) (ledger.AccountSnapshot, error) {
	a, err := b.source.read(account)
	if err != nil {
		return ledger.AccountSnapshot{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.balances[account], b.opened[account] = a.balance, a.opened
	b.resynced[account]++
	return a.snapshot(), nil
}

// ResyncAccount implements ledger.AccountTxHandler: it writes the account's
// balance from the source of truth through tx, so that it commits together
// with the version and state the resync stores.
func (b *sqlBook) ResyncAccount(ctx context.Context, tx *sql.Tx, account string) (ledger.AccountSnapshot, error) {
	a, err := b.source.read(account)
	if err != nil {
		return ledger.AccountSnapshot{}, err
	}
	if a.opened {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+b.balances+` (account, balance) VALUES ($1, $2)
			ON CONFLICT (account) DO UPDATE SET balance = excluded.balance`, account, a.balance); err != nil {
			return ledger.AccountSnapshot{}, fmt.Errorf("resync %s: %w", account, err)
		}
	}
	return a.snapshot(), nil
}

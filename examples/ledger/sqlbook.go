package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// sqlBook is the example's ledger.AccountTxHandler: it keeps balances in the
// store's database, writing through the transaction it is handed, so each
// write commits together with the account's version. Every applied event is
// also logged, so that a test can see that none was applied twice.
type sqlBook struct {
	balances string // table names
	applied  string

	mu     sync.Mutex
	faults map[fault]error // permanent failures, until fixed
	stopAt *fault          // where to stop between a write and its commit
	// stopped is closed when the handler reached stopAt, wrote, and now
	// waits for its context to end: a crash or a shutdown at that point.
	stopped  chan struct{}
	stopOnce sync.Once
	// stopShared stops, instead of at stopAt, the first handler whose
	// transaction already holds another account's writes: a group commit's
	// shared transaction, written by several keys and not committed.
	stopShared bool
	// sharedAfter is how many writes stopShared lets through first, and
	// written how many it saw.
	sharedAfter, written int
	// txWrites are the events written in each transaction, while
	// stopShared; sharedWrites those of the stopped handler's transaction.
	txWrites     map[*sql.Tx][]fault
	txOrder      []*sql.Tx // txWrites' keys, in the order of their first write
	sharedWrites []fault
	// source is the source of truth that ResyncAccount reads; nil: none.
	source *truth
	// chaos, when set, is called after each event's writes, in the
	// handler: its error fails the event (a test's fault injection).
	chaos func(ctx context.Context, account string, version uint64) error
}

// newSQLBook returns a book whose tables are named after prefix, creating
// them if needed.
func newSQLBook(ctx context.Context, db *sql.DB, prefix string) (*sqlBook, error) {
	b := &sqlBook{balances: prefix + "_balances", applied: prefix + "_applied", faults: map[fault]error{}, stopped: make(chan struct{})}
	for _, stmt := range []string{
		`CREATE TABLE IF NOT EXISTS ` + b.balances + ` (account TEXT PRIMARY KEY, balance BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS ` + b.applied + ` (account TEXT NOT NULL, version BIGINT NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("create the book's tables: %w", err)
		}
	}
	return b, nil
}

// reset empties the book's tables.
func (b *sqlBook) reset(ctx context.Context, db *sql.DB) error {
	for _, table := range []string{b.balances, b.applied} {
		if _, err := db.ExecContext(ctx, `DELETE FROM `+table); err != nil {
			return fmt.Errorf("reset %s: %w", table, err)
		}
	}
	return nil
}

// failPermanently makes the event fail permanently until fix is called.
func (b *sqlBook) failPermanently(account string, version uint64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults[fault{account, version}] = err
}

// fix clears every fault of account.
func (b *sqlBook) fix(account string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for f := range b.faults {
		if f.account == account {
			delete(b.faults, f)
		}
	}
}

// stopBeforeCommit makes the handler of the event, after its write, wait
// for its context to end instead of returning.
func (b *sqlBook) stopBeforeCommit(account string, version uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopAt = &fault{account, version}
}

// stopInSharedTx makes the first handler, after the first after writes,
// that writes in a transaction in which another account wrote already
// wait, after its write, for its context to end instead of returning (see
// stopShared).
func (b *sqlBook) stopInSharedTx(after int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopShared, b.sharedAfter = true, after
	b.txWrites, b.txOrder = map[*sql.Tx][]fault{}, nil
}

// sharedStop returns the events written in the transaction of the handler
// that stopInSharedTx stopped, once it stopped.
func (b *sqlBook) sharedStop() []sharedEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sharedEvent
	for _, w := range b.sharedWrites {
		out = append(out, sharedEvent{w.account, w.version})
	}
	return out
}

// transactions describes, for a test's failure, the transactions written
// in while stopShared: how many, and the accounts and writes of each.
func (b *sqlBook) transactions() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s strings.Builder
	fmt.Fprintf(&s, "%d writes in %d transactions (accounts/writes each):", b.written, len(b.txOrder))
	for _, tx := range b.txOrder {
		accounts := map[string]bool{}
		for _, w := range b.txWrites[tx] {
			accounts[w.account] = true
		}
		fmt.Fprintf(&s, " %d/%d", len(accounts), len(b.txWrites[tx]))
	}
	return s.String()
}

// sharedEvent is an event written in the stopped shared transaction.
type sharedEvent struct {
	Account string
	Version uint64
}

// wroteShared records that tx holds the write of account's version, and
// reports whether the handler is to stop there: the first whose tx holds
// another account's writes too, while stopShared.
func (b *sqlBook) wroteShared(tx *sql.Tx, account string, version uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopShared {
		return false
	}
	w := fault{account, version}
	if _, seen := b.txWrites[tx]; !seen {
		b.txOrder = append(b.txOrder, tx)
	}
	b.txWrites[tx] = append(b.txWrites[tx], w)
	if b.written++; b.sharedWrites != nil || b.written <= b.sharedAfter {
		return false
	}
	shared := false
	for _, w := range b.txWrites[tx] {
		shared = shared || w.account != account
	}
	if shared {
		b.sharedWrites = slices.Clone(b.txWrites[tx])
	}
	return shared
}

// resume undoes stopBeforeCommit.
func (b *sqlBook) resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopAt = nil
}

// apply writes one event: the applied log and the balance change.
func (b *sqlBook) apply(ctx context.Context, tx *sql.Tx, account string, version uint64, open bool, delta int64) error {
	b.mu.Lock()
	err := b.faults[fault{account, version}]
	stop := b.stopAt != nil && *b.stopAt == fault{account, version}
	b.mu.Unlock()
	if err != nil {
		return runtime.Permanent(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+b.applied+` (account, version) VALUES ($1, $2)`, account, int64(version)); err != nil {
		return fmt.Errorf("log %s v%d: %w", account, version, err)
	}
	if open {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+b.balances+` (account, balance) VALUES ($1, 0) ON CONFLICT (account) DO NOTHING`, account); err != nil {
			return fmt.Errorf("open %s: %w", account, err)
		}
	} else if delta != 0 {
		var balance int64
		err := tx.QueryRowContext(ctx, `SELECT balance FROM `+b.balances+` WHERE account = $1`, account).Scan(&balance)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return runtime.Permanent(fmt.Errorf("account %s is not open", account))
		case err != nil:
			return fmt.Errorf("read %s: %w", account, err)
		case balance+delta < 0:
			return runtime.Permanent(fmt.Errorf("account %s would go negative", account))
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+b.balances+` SET balance = $2 WHERE account = $1`, account, balance+delta); err != nil {
			return fmt.Errorf("update %s: %w", account, err)
		}
	}
	if b.chaos != nil {
		if err := b.chaos(ctx, account, version); err != nil {
			return err
		}
	}
	if b.wroteShared(tx, account, version) {
		stop = true
	}
	if stop {
		b.stopOnce.Do(func() { close(b.stopped) })
		<-ctx.Done() // written, not committed: the process dies or shuts down here
		return ctx.Err()
	}
	return nil
}

// HandleAccountOpened implements ledger.AccountTxHandler.
func (b *sqlBook) HandleAccountOpened(ctx context.Context, tx *sql.Tx, e ledger.AccountOpened) error {
	return b.apply(ctx, tx, e.AccountID, e.Version, true, 0)
}

// HandleDeposited implements ledger.AccountTxHandler.
func (b *sqlBook) HandleDeposited(ctx context.Context, tx *sql.Tx, e ledger.Deposited) error {
	return b.apply(ctx, tx, e.AccountID, e.Version, false, e.Amount)
}

// HandleWithdrew implements ledger.AccountTxHandler.
func (b *sqlBook) HandleWithdrew(ctx context.Context, tx *sql.Tx, e ledger.Withdrew) error {
	return b.apply(ctx, tx, e.AccountID, e.Version, false, -e.Amount)
}

// HandleAccountFrozen implements ledger.AccountTxHandler.
func (b *sqlBook) HandleAccountFrozen(ctx context.Context, tx *sql.Tx, e ledger.AccountFrozen) error {
	return b.apply(ctx, tx, e.AccountID, e.Version, false, 0)
}

// HandleAccountClosed implements ledger.AccountTxHandler.
func (b *sqlBook) HandleAccountClosed(ctx context.Context, tx *sql.Tx, e ledger.AccountClosed) error {
	return b.apply(ctx, tx, e.AccountID, e.Version, false, 0)
}

// snapshot returns every balance and the events applied more than once.
func (b *sqlBook) snapshot(ctx context.Context, db *sql.DB) (balances map[string]int64, twice int, err error) {
	rows, err := db.QueryContext(ctx, `SELECT account, balance FROM `+b.balances)
	if err != nil {
		return nil, 0, fmt.Errorf("read balances: %w", err)
	}
	defer rows.Close()
	balances = map[string]int64{}
	for rows.Next() {
		var account string
		var balance int64
		if err := rows.Scan(&account, &balance); err != nil {
			return nil, 0, fmt.Errorf("read balances: %w", err)
		}
		balances[account] = balance
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read balances: %w", err)
	}
	err = db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT account, version FROM `+b.applied+
		` GROUP BY account, version HAVING COUNT(*) > 1) AS twice`).Scan(&twice)
	if err != nil {
		return nil, 0, fmt.Errorf("count events applied twice: %w", err)
	}
	return balances, twice, nil
}

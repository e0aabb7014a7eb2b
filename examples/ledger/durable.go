package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

const (
	durableAccounts = 10
	durableEvents   = 20
	stopAccount     = "acct-2" // stopped between its write and its commit
	stopVersion     = 7
	durableParked   = stopAccount // parked across a restart, after the stop
	durableParkedV  = 12
)

// durableLedger is the transactional ledger: AccountTxHandler writes the
// balances in the store's transaction, so every event is applied once
// however often it is delivered and wherever the process stops.
type durableLedger struct {
	store *sqlstore.Store
	book  *sqlBook
	seq   []entry          // every account's events, interleaved
	want  map[string]int64 // balances by in-order application
}

// newDurableLedger prepares the tables and the streams; fresh empties the
// book and the Account namespace of the store first.
func newDurableLedger(ctx context.Context, store *sqlstore.Store, seed uint64, fresh bool) (*durableLedger, error) {
	book, err := newSQLBook(ctx, store.DB(), "ledger_example")
	if err != nil {
		return nil, err
	}
	if fresh {
		if err := book.reset(ctx, store.DB()); err != nil {
			return nil, err
		}
		if err := store.DeleteNamespace(ctx, "Account"); err != nil {
			return nil, err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 13))
	l := &durableLedger{store: store, book: book, want: map[string]int64{}}
	var streams [][]entry
	for i := range durableAccounts {
		s, balance := accountStream(rng, fmt.Sprintf("acct-%d", i), durableEvents)
		streams = append(streams, s)
		l.want[s[0].account] = balance
	}
	l.seq = interleave(rng, streams)
	return l, nil
}

// start returns a transactional dispatcher over the store: a process
// (re)starting.
func (l *durableLedger) start(opts ...ledger.AccountOption) (*ledger.AccountDispatcher, error) {
	return ledger.NewAccountTxDispatcher(l.store, l.book, append([]ledger.AccountOption{func(c *ledger.AccountConfig) {
		c.MaxActive = workersInExample
		c.Backlog.WhenFull = runtime.Block
		c.Logger = quietLogger()
	}}, opts...)...)
}

// deliver publishes every event, as an at-least-once source redelivers from
// its last checkpoint (here: from the start), and waits for the outcomes.
func (l *durableLedger) deliver(ctx context.Context, d *ledger.AccountDispatcher) error {
	if err := publishAll(ctx, d, l.seq); err != nil {
		return err
	}
	return d.Flush(ctx)
}

// check compares the stored balances with in-order application.
func (l *durableLedger) check(ctx context.Context) (equal, twice int, err error) {
	balances, twice, err := l.book.snapshot(ctx, l.store.DB())
	if err != nil {
		return 0, 0, err
	}
	for account, want := range l.want {
		if got, ok := balances[account]; ok && got == want {
			equal++
		}
	}
	return equal, twice, nil
}

// committed returns how many events the book holds.
func (l *durableLedger) committed(ctx context.Context) (int, error) {
	var n int
	err := l.store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+l.book.applied).Scan(&n)
	return n, err
}

// runDurable shows effectively-once handling on the store: a process
// stopped between a handler's write and its commit, a restart with full
// redelivery, and a parked account that survives a second restart.
func runDurable(ctx context.Context, out io.Writer, store *sqlstore.Store, seed uint64) error {
	l, err := newDurableLedger(ctx, store, seed, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "durable  %d accounts, %d events: AccountTxHandler writes balances in the store's transaction, with the version\n", durableAccounts, len(l.seq))

	// The first process stops mid-transaction: its context ends there.
	l.book.stopBeforeCommit(stopAccount, stopVersion)
	d, err := l.start()
	if err != nil {
		return err
	}
	if err := publishAll(ctx, d, l.seq); err != nil {
		return err
	}
	select {
	case <-l.book.stopped:
	case <-ctx.Done():
		return ctx.Err()
	}
	stop, cancel := context.WithCancel(ctx)
	cancel()
	var ce *runtime.CloseError
	if err := d.Close(stop); err != nil && !errors.As(err, &ce) {
		return err
	}
	before, err := l.committed(ctx)
	if err != nil {
		return err
	}

	// The second process: everything is delivered again.
	l.book.resume()
	l.book.failPermanently(durableParked, durableParkedV, errors.New("ledger row locked by a migration"))
	if d, err = l.start(); err != nil {
		return err
	}
	if err := l.deliver(ctx, d); err != nil {
		return err
	}
	st := d.Stats()["Account"]
	fmt.Fprintf(out, "crash    stopped between the write and the commit of %s v%d: %d events committed; restarted, all %d redelivered: %d skipped as applied, %d applied\n",
		stopAccount, stopVersion, before, len(l.seq), st.Skipped, st.Handled)
	if err := d.Close(ctx); err != nil {
		return err
	}

	// The third process finds the account still parked.
	if d, err = l.start(); err != nil {
		return err
	}
	defer d.Close(context.Background())
	pk, err := parkedAlone(ctx, d, durableParked)
	if err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	late := ledger.Deposited{AccountID: durableParked, Version: durableEvents + 1, Amount: 5}
	if err := d.PublishDeposited(ctx, late); err != nil {
		return err
	}
	l.want[durableParked] += late.Amount
	if err := d.Flush(ctx); err != nil {
		return err
	}
	after, err := d.ParkedKeys(ctx)
	if err != nil {
		return err
	}
	if len(after["Account"]) != 1 || after["Account"][0].Events != pk.Events+1 {
		return fmt.Errorf("the new event of %s did not join its park: %+v", durableParked, after)
	}
	// The operator asks for a replay (ordergen-parked replay Account
	// acct-2); the service's request server carries it out.
	l.book.fix(durableParked)
	req, err := store.Request(ctx, "Account", durableParked, sqlstore.Replay)
	if err != nil {
		return err
	}
	srv := &sqlstore.Server[string]{Store: store, Entity: "Account", Operator: d, Logger: quietLogger()}
	if _, err := srv.ServeOnce(ctx); err != nil {
		return err
	}
	if req, err = store.RequestByID(ctx, req.ID); err != nil {
		return err
	}
	if req.Result != "replayed" {
		return fmt.Errorf("the replay request of %s: %q", durableParked, req.Result)
	}
	fmt.Fprintf(out, "restart  %s parked with %d events survived a restart; a new event joined its park (%d); an operator's replay request, served after the fix: %s\n",
		durableParked, pk.Events, after["Account"][0].Events, req.Result)
	equal, twice, err := l.check(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "balances %d of %d accounts equal in-order application, %d events applied twice\n", equal, len(l.want), twice)
	if equal != len(l.want) || twice != 0 {
		return fmt.Errorf("the durable ledger differs from in-order application")
	}
	return nil
}

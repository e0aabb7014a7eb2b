package main

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/groupcommit"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/dsn"
)

// openGroupLedger returns a fresh transactional ledger on a new database of
// dialect (skipped for PostgreSQL without ORDERGEN_TEST_POSTGRES).
func openGroupLedger(t *testing.T, dialect string) *durableLedger {
	t.Helper()
	store, err := dsn.Open(t.Context(), crashDatabase(t, dialect))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	l, err := newDurableLedger(t.Context(), store, crashSeed, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// slowBook is the ledger's book with one slow account: the first call of
// its first event's handler writes, then stays blocked until its context
// ends and, past that, until the test lets it go.
type slowBook struct {
	*sqlBook
	slow    string
	entered chan struct{} // closed when the slow call began
	release chan struct{} // closed by the test: the slow call may return
	once    sync.Once
	cause   error // the slow call's context's cause
}

// HandleAccountOpened implements ledger.AccountTxHandler.
func (b *slowBook) HandleAccountOpened(ctx context.Context, tx *sql.Tx, e ledger.AccountOpened) error {
	first := false
	if e.AccountID == b.slow {
		b.once.Do(func() { first = true })
	}
	if !first {
		return b.sqlBook.HandleAccountOpened(ctx, tx, e)
	}
	if err := b.sqlBook.HandleAccountOpened(ctx, tx, e); err != nil {
		return err
	}
	close(b.entered)
	<-ctx.Done()
	b.cause = context.Cause(ctx)
	<-b.release // slow past its eviction too: its group-mates do not wait for it
	return ctx.Err()
}

// TestSlowKeyLeavesItsGroup: one account's handler blocks in its group's
// transaction. Past MaxWork it is evicted (its context ends with
// groupcommit.ErrEvicted); every other account's events commit while it is
// still blocked, and then its own events commit on their own. Every event
// is applied once, every balance is that of in-order application, and the
// eviction is counted (ordergen.group.evictions).
func TestSlowKeyLeavesItsGroup(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := t.Context()
			l := openGroupLedger(t, dialect)
			book := &slowBook{sqlBook: l.book, slow: "acct-3", entered: make(chan struct{}), release: make(chan struct{})}
			others := 0
			for _, e := range l.seq {
				if e.account != book.slow {
					others++
				}
			}
			var mu sync.Mutex
			handled := 0
			othersDone := make(chan struct{})
			provider := metricstest.New()
			d, err := ledger.NewAccountTxDispatcher(l.store, book, func(c *ledger.AccountConfig) {
				c.MaxActive = durableAccounts
				c.Backlog.WhenFull = runtime.Block
				c.Logger = quietLogger()
				c.MeterProvider = provider
				c.Group.MaxWork = 200 * time.Millisecond
				c.OnOutcome = func(key string, _ uint64, o runtime.Outcome) {
					if key == book.slow || o != runtime.Handled {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if handled++; handled == others {
						close(othersDone)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close(context.Background())
			if err := publishAll(ctx, d, l.seq); err != nil {
				t.Fatal(err)
			}
			<-book.entered
			select {
			case <-othersDone: // every other account committed while the slow one was blocked
			case <-ctx.Done():
				t.Fatal("the other accounts never committed while the slow one was blocked")
			}
			if n, _ := l.committedOf(ctx, book.slow); n != 0 {
				t.Fatalf("%s committed %d events while its handler was still blocked", book.slow, n)
			}
			close(book.release)
			if err := d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(book.cause, groupcommit.ErrEvicted) {
				t.Fatalf("the slow handler's context ended with %v, want groupcommit.ErrEvicted", book.cause)
			}
			balances, twice, err := l.book.snapshot(ctx, l.store.DB())
			if err != nil {
				t.Fatal(err)
			}
			if twice != 0 || !maps.Equal(balances, l.want) {
				t.Fatalf("balances %v (%d events applied twice), in-order application gives %v", balances, twice, l.want)
			}
			account := meter.Attribute{Key: meter.AttrDestination, Value: "Account"}
			if n, _ := provider.Collect().Sum(groupcommit.MetricEvictions, account); n < 1 {
				t.Errorf("%s = %v, want at least the slow key's eviction", groupcommit.MetricEvictions, n)
			}
			if n, _ := provider.Collect().Sum(groupcommit.MetricCommitted, account); n < 1 {
				t.Errorf("%s = %v, want the groups committed", groupcommit.MetricCommitted, n)
			}
		})
	}
}

// committedOf returns how many events of account the book holds.
func (l *durableLedger) committedOf(ctx context.Context, account string) (int, error) {
	var n int
	err := l.store.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM `+l.book.applied+` WHERE account = $1`, account).Scan(&n)
	return n, err
}

// TestGroupFailureParksAtTheEvent: a permanent failure in the middle of an
// account's batch parks the account at that event, as without group
// commit: the events before it commit (without it), the other accounts are
// not held back, and the stored version is the one before the failure.
func TestGroupFailureParksAtTheEvent(t *testing.T) {
	const failing, failAt = "acct-5", 9
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := t.Context()
			l := openGroupLedger(t, dialect)
			l.book.failPermanently(failing, failAt, errors.New("row locked by a migration"))
			d, err := l.start()
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close(context.Background())
			if err := l.deliver(ctx, d); err != nil {
				t.Fatal(err)
			}
			parked, err := d.ParkedKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if keys := parked[ledger.AccountFirstSubscriber]; len(keys) != 1 || keys[0].Key != failing || keys[0].Events != durableEvents-failAt+1 {
				t.Fatalf("parked %+v, want %s with its %d events from v%d", keys, failing, durableEvents-failAt+1, failAt)
			}
			v, err := d.Version(ctx, ledger.AccountFirstSubscriber, failing)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := l.committedOf(ctx, failing); v != failAt-1 || n != failAt-1 {
				t.Fatalf("%s is at version %d with %d events applied, want the %d before the failure", failing, v, n, failAt-1)
			}
			balances, twice, err := l.book.snapshot(ctx, l.store.DB())
			if err != nil {
				t.Fatal(err)
			}
			for account, want := range l.want {
				if account != failing && balances[account] != want {
					t.Errorf("%s: balance %d, in-order application gives %d", account, balances[account], want)
				}
			}
			if twice != 0 {
				t.Fatalf("%d events applied twice", twice)
			}
		})
	}
}

// txOnly hides every method of a store but those of durable.TxStore: a
// store without group commit.
type txOnly struct{ durable.TxStore[*sql.Tx] }

// TestGroupNeedsAGroupTxStore: the schema asks for group commit of
// Account, so a transactional subscriber over a store that cannot group
// is refused, with an error that names the store's type and the schema's
// group:, and nothing is subscribed.
func TestGroupNeedsAGroupTxStore(t *testing.T) {
	l := openGroupLedger(t, "sqlite")
	var store durable.TxStore[*sql.Tx] = txOnly{l.store}
	_, err := ledger.NewAccountTxDispatcher(store, l.book)
	if err == nil {
		t.Fatal("a store without GroupTxStore was accepted")
	}
	for _, want := range []string{"group commit", "group:", "main.txOnly", "durable.GroupTxStore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	d, err := ledger.NewAccountDispatcher(ledger.UnimplementedAccountHandler{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	if err := d.SubscribeTx("audit", store, l.book); err == nil {
		t.Fatal("SubscribeTx accepted a store without GroupTxStore")
	}
	if _, ok := d.Stats()[ledger.AccountSubscriberNamed("audit")]; ok {
		t.Fatal("the refused subscriber was subscribed all the same")
	}
	var _ *sqlstore.Store = l.store // the store that groups
}

package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func openTestStore(t *testing.T) *sqlstore.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSubscribeTxHasItsOwnNamespace: a second transactional subscriber
// keeps its versions under "Account/audit", and redeliveries are skipped by
// both subscribers.
func TestSubscribeTxHasItsOwnNamespace(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t)
	primary, err := newSQLBook(ctx, s.DB(), "main")
	if err != nil {
		t.Fatal(err)
	}
	audit, err := newSQLBook(ctx, s.DB(), "audit")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ledger.NewAccountTxDispatcher(s, primary, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	if err := d.SubscribeTx("audit", s, audit, func(c *ledger.AccountConfig) { c.Logger = quietLogger() }); err != nil {
		t.Fatal(err)
	}
	if err := d.SubscribeTx("audit", s, audit); err == nil {
		t.Fatal("a second subscriber named audit was accepted")
	}
	if _, err := ledger.NewAccountTxDispatcher(nil, primary); err == nil {
		t.Fatal("a nil store was accepted")
	}
	seq := []entry{{"a", 1, "open", 0}, {"a", 2, "deposit", 5}, {"a", 2, "deposit", 5}, {"a", 1, "open", 0}, {"a", 3, "withdraw", 2}}
	for _, e := range seq {
		if err := publish(ctx, d, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*sqlBook{primary, audit} {
		balances, twice, err := b.snapshot(ctx, s.DB())
		if err != nil {
			t.Fatal(err)
		}
		if balances["a"] != 3 || twice != 0 {
			t.Fatalf("%s: balance %d, %d applied twice; want 3, 0", b.balances, balances["a"], twice)
		}
	}
	for _, ns := range []string{"Account", "Account/audit"} {
		if v, err := s.Versions(ns).Version(ctx, "a"); err != nil || v != 3 {
			t.Fatalf("%s: version %d, %v; want 3", ns, v, err)
		}
		if st, err := s.States(ns).State(ctx, "a"); err != nil || st != "Open" {
			t.Fatalf("%s: state %q, %v; want Open", ns, st, err)
		}
	}
	for name, st := range d.Stats() {
		if st.Handled != 3 || st.Skipped != 2 {
			t.Fatalf("%s: handled %d, skipped %d; want 3 and 2", name, st.Handled, st.Skipped)
		}
	}
}

// txShipments is a transactional OrderHandler that counts its calls.
type txShipments struct {
	mu    sync.Mutex
	calls map[string]int
}

func (s *txShipments) record(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
	return nil
}

func (s *txShipments) HandleOrderPlaced(context.Context, *sql.Tx, ledger.OrderPlaced) error {
	return s.record("Placed")
}
func (s *txShipments) HandleOrderPaid(context.Context, *sql.Tx, ledger.OrderPaid) error {
	return s.record("Paid")
}
func (s *txShipments) HandleOrderShipped(context.Context, *sql.Tx, ledger.OrderShipped) error {
	return s.record("Shipped")
}
func (s *txShipments) HandleOrderTracked(context.Context, *sql.Tx, ledger.OrderTracked) error {
	return s.record("Tracked")
}
func (s *txShipments) HandleOrderDelivered(context.Context, *sql.Tx, ledger.OrderDelivered) error {
	return s.record("Delivered")
}
func (s *txShipments) HandleOrderCancelled(context.Context, *sql.Tx, ledger.OrderCancelled) error {
	return s.record("Cancelled")
}

// TestTxStateGuardAcrossRestart: the state guard of a transactional
// subscriber reads the state stored by an earlier process.
func TestTxStateGuardAcrossRestart(t *testing.T) {
	ctx := t.Context()
	s := openTestStore(t)
	h := &txShipments{calls: map[string]int{}}
	steps := [][]string{{"Placed", "Paid"}, {"Paid", "Shipped", "Cancelled", "Placed"}} // the second process gets redeliveries
	for _, run := range steps {
		d, err := ledger.NewOrderTxDispatcher(s, h, func(c *ledger.OrderConfig) { c.Logger = quietLogger() })
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range run {
			if err := publishOrder(ctx, d, "o-1", step); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := s.States("Order").State(ctx, "o-1"); err != nil || st != "Shipped" {
		t.Fatalf("stored state %q, %v; want Shipped", st, err)
	}
	for name, n := range h.calls {
		if n != 1 {
			t.Fatalf("%s handled %d times: %v", name, n, h.calls)
		}
	}
	if h.calls["Shipped"] != 1 || h.calls["Cancelled"] != 0 {
		t.Fatalf("calls %v", h.calls)
	}
}

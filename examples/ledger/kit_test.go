package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/examples/gen/ledgertest"
)

// accountEvents returns the in-order events of several accounts, mixed:
// each account opens, then deposits and withdraws (never below zero).
func accountEvents(rng *rand.Rand, accounts, perAccount int) []ledger.AccountEvent {
	var events []ledger.AccountEvent
	balance := make([]int64, accounts)
	left := make([]int, accounts)
	for a := range left {
		left[a] = perAccount
	}
	for remaining := accounts * perAccount; remaining > 0; remaining-- {
		a := rng.IntN(accounts)
		for left[a] == 0 {
			a = (a + 1) % accounts
		}
		id := fmt.Sprintf("acct-%d", a)
		switch amount := 1 + rng.Int64N(50); {
		case left[a] == perAccount:
			events = append(events, ledger.AccountOpened{AccountID: id, Owner: "owner " + id})
		case rng.IntN(3) == 0 && balance[a] >= amount:
			balance[a] -= amount
			events = append(events, ledger.Withdrew{AccountID: id, Amount: amount})
		default:
			balance[a] += amount
			events = append(events, ledger.Deposited{AccountID: id, Amount: amount})
		}
		left[a]--
	}
	return ledgertest.SequenceAccount(events...)
}

// TestKitChaosReachesInOrderBalances delivers the ledger's events through
// the generated harness with seeded duplicates, redeliveries, reorderings
// and gaps, and compares balances and each account's handled events with
// in-order application.
func TestKitChaosReachesInOrderBalances(t *testing.T) {
	if testing.Short() {
		t.Skip("randomized chaos: the full run (without -short) runs it")
	}
	rapid.Check(t, func(rt *rapid.T) {
		accounts := rapid.IntRange(1, 6).Draw(rt, "accounts")
		perAccount := rapid.IntRange(1, 30).Draw(rt, "perAccount")
		chaos := ledgertest.Chaos{
			Seed:         rapid.Int().Draw(rt, "seed"),
			Duplicates:   rapid.Float64Range(0, 0.5).Draw(rt, "duplicates"),
			Redeliveries: rapid.Float64Range(0, 0.5).Draw(rt, "redeliveries"),
			Reorder:      rapid.IntRange(0, 8).Draw(rt, "reorder"),
			Gaps:         rapid.Float64Range(0, 0.2).Draw(rt, "gaps"),
		}
		events := accountEvents(rand.New(rand.NewPCG(uint64(chaos.Seed), 5)), accounts, perAccount)
		ctx := context.Background()
		got, want := newBook(0, 1), newBook(0, 1)
		gotRec, wantRec := ledgertest.NewAccountRecorder(got), ledgertest.NewAccountRecorder(want)
		quiet := func(c *ledger.AccountConfig) { c.Logger = quietLogger(); c.MaxHeld = 8 }
		h, err := ledgertest.NewAccountHarness(gotRec, quiet)
		if err != nil {
			rt.Fatal(err)
		}
		defer h.Close(ctx)
		report, err := h.Deliver(ctx, events, chaos)
		if err != nil {
			rt.Fatal(err)
		}
		if err := ledgertest.ApplyAccountInOrder(ctx, wantRec, events, quiet); err != nil {
			rt.Fatal(err)
		}
		for a := range accounts {
			id := fmt.Sprintf("acct-%d", a)
			if g, w := got.balance(id), want.balance(id); g != w {
				rt.Fatalf("%s: balance %d after %v, in-order application gives %d", id, g, chaos, w)
			}
			if g, w := gotRec.EventsOf(id), wantRec.EventsOf(id); !reflect.DeepEqual(g, w) {
				rt.Fatalf("%s: handled\n%v\nin-order application handles\n%v", id, g, w)
			}
		}
		s := report.Stats
		if s.Handled != uint64(len(events)) || s.Held != 0 || s.Parked != 0 || s.Pending != 0 {
			rt.Fatalf("stats after %v: %+v; want every one of the %d events handled once", chaos, s, len(events))
		}
		if copies := report.Count(ledgertest.Duplicate) + report.Count(ledgertest.Redelivery); s.Skipped != uint64(copies) {
			rt.Fatalf("skipped %d, want the %d copies", s.Skipped, copies)
		}
	})
}

// TestKitStateGuardSkipsRepeatedTransitions delivers order transitions
// with duplicates and stale redeliveries: Order has no version, so the
// state guard alone keeps each order's final status.
func TestKitStateGuardSkipsRepeatedTransitions(t *testing.T) {
	ctx := context.Background()
	var events []ledger.OrderEvent
	for i, life := range [][]ledger.OrderEvent{
		{ledger.OrderPlaced{}, ledger.OrderPaid{}, ledger.OrderShipped{}, ledger.OrderDelivered{}},
		{ledger.OrderPlaced{}, ledger.OrderPaid{}, ledger.OrderCancelled{}},
		{ledger.OrderPlaced{}, ledger.OrderShipped{}},
	} {
		for _, e := range life {
			events = append(events, withOrderID(e, fmt.Sprintf("order-%d", i)))
		}
	}
	for seed := range 20 {
		got, want := &shipments{status: map[string]string{}}, &shipments{status: map[string]string{}}
		quiet := func(c *ledger.OrderConfig) { c.Logger = quietLogger() }
		h, err := ledgertest.NewOrderHarness(got, quiet)
		if err != nil {
			t.Fatal(err)
		}
		report, err := h.Deliver(ctx, events, ledgertest.Chaos{Seed: seed, Duplicates: 0.5, Redeliveries: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ledgertest.ApplyOrderInOrder(ctx, want, events, quiet); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.status, want.status) {
			t.Fatalf("seed %d: status %v, in-order application gives %v", seed, got.status, want.status)
		}
		if report.Stats.Handled != uint64(len(events)) {
			t.Fatalf("seed %d: handled %d transitions, want %d: %+v", seed, report.Stats.Handled, len(events), report.Stats)
		}
	}
	// Order has no version: the harness refuses to reorder it.
	h, err := ledgertest.NewOrderHarness(&shipments{status: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.Deliver(ctx, events, ledgertest.Chaos{Reorder: 1}); !errors.Is(err, ledgertest.ErrUnrepairable) {
		t.Errorf("reordering an entity without a version: %v, want ErrUnrepairable", err)
	}
}

func withOrderID(e ledger.OrderEvent, id string) ledger.OrderEvent {
	switch e := e.(type) {
	case ledger.OrderPlaced:
		e.OrderID = id
		return e
	case ledger.OrderPaid:
		e.OrderID = id
		return e
	case ledger.OrderShipped:
		e.OrderID = id
		return e
	case ledger.OrderDelivered:
		e.OrderID = id
		return e
	case ledger.OrderCancelled:
		e.OrderID = id
		return e
	}
	return e
}

// TestKitReadme is the test docs/testing.md shows.
func TestKitReadme(t *testing.T) {
	ctx := context.Background()
	events := ledgertest.SequenceAccount(ledger.AccountOpened{AccountID: "a"},
		ledger.Deposited{AccountID: "a", Amount: 5}, ledger.Withdrew{AccountID: "a", Amount: 2})
	got, want := newBook(0, 1), newBook(0, 1)
	h, err := ledgertest.NewAccountHarness(got)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.Deliver(ctx, events, ledgertest.Chaos{Seed: 1, Duplicates: 0.3, Redeliveries: 0.3, Reorder: 2}); err != nil {
		t.Fatal(err)
	}
	if err := ledgertest.ApplyAccountInOrder(ctx, want, events); err != nil {
		t.Fatal(err)
	}
	if got.balance("a") != want.balance("a") || got.balance("a") != 3 {
		t.Errorf("balance %d, in order %d", got.balance("a"), want.balance("a"))
	}
}

// TestKitChaosLosesEvents delivers the ledger's events through the
// generated harness with seeded losses besides duplicates, redeliveries and
// reorderings: Account resyncs (on_gap: resync), so a key that lost an event
// is brought up to date from the source of truth once its resequencer bound
// is hit, and every account still ends at the balance of in-order
// application, with nothing parked or held.
func TestKitChaosLosesEvents(t *testing.T) {
	var lostInAll, resyncsInAll int
	defer func() {
		if !t.Failed() && (lostInAll == 0 || resyncsInAll == 0) {
			t.Errorf("no run lost an event (%d) or resynced (%d): the test checked nothing", lostInAll, resyncsInAll)
		}
		t.Logf("%d events lost, %d resyncs", lostInAll, resyncsInAll)
	}()
	rapid.Check(t, func(rt *rapid.T) {
		accounts := rapid.IntRange(1, 5).Draw(rt, "accounts")
		perAccount := rapid.IntRange(1, 40).Draw(rt, "perAccount")
		chaos := ledgertest.Chaos{
			Seed:         rapid.Int().Draw(rt, "seed"),
			Duplicates:   rapid.Float64Range(0, 0.3).Draw(rt, "duplicates"),
			Redeliveries: rapid.Float64Range(0, 0.3).Draw(rt, "redeliveries"),
			Reorder:      rapid.IntRange(0, 4).Draw(rt, "reorder"),
			Losses:       rapid.Float64Range(0.01, 0.3).Draw(rt, "losses"),
		}
		events := accountEvents(rand.New(rand.NewPCG(uint64(chaos.Seed), 5)), accounts, perAccount)
		src := newTruth()
		src.record(events...) // the writer published them all
		ctx := context.Background()
		got, want := newBook(0, 1), newBook(0, 1)
		got.source = src
		quiet := func(c *ledger.AccountConfig) { c.Logger = quietLogger(); c.MaxHeld = 4 }
		h, err := ledgertest.NewAccountHarness(got, quiet)
		if err != nil {
			rt.Fatal(err)
		}
		defer h.Close(ctx)
		report, err := h.Deliver(ctx, events, chaos)
		if err != nil {
			rt.Fatal(err)
		}
		if err := ledgertest.ApplyAccountInOrder(ctx, want, events, quiet); err != nil {
			rt.Fatal(err)
		}
		for a := range accounts {
			id := fmt.Sprintf("acct-%d", a)
			if g, w := got.balance(id), want.balance(id); g != w {
				rt.Fatalf("%s: balance %d after %v, in-order application gives %d", id, g, chaos, w)
			}
		}
		s, lost := report.Stats, report.Count(ledgertest.Lost)
		if s.Held != 0 || s.Parked != 0 || s.Pending != 0 {
			rt.Fatalf("stats after %v: %+v; want nothing held, parked or pending", chaos, s)
		}
		if delivered := uint64(len(report.Sent) - lost); s.Accepted != delivered || s.Handled+s.Skipped != delivered {
			rt.Fatalf("stats after %v: %+v; %d delivered", chaos, s, delivered)
		}
		if (lost > 0) != (s.Resynced > 0) {
			rt.Fatalf("%d events lost, %d resyncs (%v)", lost, s.Resynced, chaos)
		}
		lostInAll += lost
		resyncsInAll += int(s.Resynced)
	})
}

// TestKitChaosBatches delivers wallets' credits and debits through the
// generated harness with seeded duplicates, redeliveries, reorderings and
// gaps: Wallet's batch guard decides each event, and every wallet ends at
// the balance of in-order application, no call of its handler spanning a
// version gap or applying a version twice.
func TestKitChaosBatches(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		walletCount := rapid.IntRange(1, 4).Draw(rt, "wallets")
		perWallet := rapid.IntRange(1, 60).Draw(rt, "perWallet")
		chaos := ledgertest.Chaos{
			Seed:         rapid.Int().Draw(rt, "seed"),
			Duplicates:   rapid.Float64Range(0, 0.5).Draw(rt, "duplicates"),
			Redeliveries: rapid.Float64Range(0, 0.5).Draw(rt, "redeliveries"),
			Reorder:      rapid.IntRange(0, 8).Draw(rt, "reorder"),
			Gaps:         rapid.Float64Range(0, 0.2).Draw(rt, "gaps"),
		}
		rng := rand.New(rand.NewPCG(uint64(chaos.Seed), 9))
		var events []ledger.WalletEvent
		for i := range perWallet * walletCount {
			id := fmt.Sprintf("wallet-%d", i%walletCount)
			switch amount := 1 + rng.Int64N(20); {
			case i < walletCount:
				events = append(events, ledger.WalletOpened{WalletID: id, Owner: "o"})
			case rng.IntN(3) == 0:
				events = append(events, ledger.Debited{WalletID: id, Amount: amount})
			default:
				events = append(events, ledger.Credited{WalletID: id, Amount: amount})
			}
		}
		events = ledgertest.SequenceWallet(events...)
		ctx := context.Background()
		got, want := newWallets(), newWallets()
		quiet := func(c *ledger.WalletConfig) { c.Logger = quietLogger(); c.MaxHeld = 8; c.BatchSize = 16 }
		h, err := ledgertest.NewWalletHarness(ledgertest.NewWalletRecorder(got), quiet)
		if err != nil {
			rt.Fatal(err)
		}
		defer h.Close(ctx)
		report, err := h.Deliver(ctx, events, chaos)
		if err != nil {
			rt.Fatal(err)
		}
		if err := ledgertest.ApplyWalletInOrder(ctx, want, events, quiet); err != nil {
			rt.Fatal(err)
		}
		for i := range walletCount {
			id := fmt.Sprintf("wallet-%d", i)
			if g, w := got.balance(id), want.balance(id); g != w {
				rt.Fatalf("%s: balance %d after %v, in-order application gives %d", id, g, chaos, w)
			}
			seen := map[uint64]bool{}
			for _, call := range got.callsOf(id) {
				for j, v := range call {
					if seen[v] || (j > 0 && v != call[j-1]+1) {
						rt.Fatalf("%s: call %v applies a version twice or spans a gap (calls %v)", id, call, got.callsOf(id))
					}
					seen[v] = true
				}
			}
			if len(seen) != perWallet {
				rt.Fatalf("%s: %d versions applied, want %d", id, len(seen), perWallet)
			}
		}
		s := report.Stats
		if s.Handled != uint64(len(events)) || s.Held != 0 || s.Parked != 0 || s.Pending != 0 {
			rt.Fatalf("stats after %v: %+v; want every one of the %d events handled once", chaos, s, len(events))
		}
		if copies := report.Count(ledgertest.Duplicate) + report.Count(ledgertest.Redelivery); s.Skipped != uint64(copies) {
			rt.Fatalf("skipped %d, want the %d copies", s.Skipped, copies)
		}
	})
}

// TestKitNotifications delivers customers' notifications through the
// generated harness with duplicates, redeliveries and reorderings (order
// does not matter to notifications): every notification is handled or
// coalesced, and every customer's handler is called at least once; gaps,
// which need a version, are refused.
func TestKitNotifications(t *testing.T) {
	ctx := context.Background()
	var events []ledger.CustomerEvent
	for i := range 30 {
		events = append(events, ledger.CustomerChanged{CustomerID: fmt.Sprintf("cust-%d", i%3)})
	}
	rec := ledgertest.NewCustomerRecorder(newCustomers())
	h, err := ledgertest.NewCustomerHarness(rec, func(c *ledger.CustomerConfig) { c.Logger = quietLogger() })
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	report, err := h.Deliver(ctx, events, ledgertest.Chaos{Seed: 3, Duplicates: 0.5, Redeliveries: 0.5, Reorder: 5})
	if err != nil {
		t.Fatal(err)
	}
	s := report.Stats
	if s.Accepted != uint64(len(report.Sent)) || s.Handled+s.Conflated != s.Accepted || s.Handled != uint64(len(rec.Keys())) {
		t.Fatalf("stats %+v, %d sent, %d calls recorded", s, len(report.Sent), len(rec.Keys()))
	}
	for i := range 3 {
		if n := rec.CallsOf(fmt.Sprintf("cust-%d", i)); n == 0 {
			t.Errorf("cust-%d: no call", i)
		}
	}
	if report.Late() == 0 {
		t.Error("no notification was reordered")
	}
	if _, err := h.Deliver(ctx, events, ledgertest.Chaos{Gaps: 0.5}); !errors.Is(err, ledgertest.ErrUnrepairable) {
		t.Errorf("gaps in notifications: %v, want ErrUnrepairable", err)
	}
}

package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/examples/gen/ledgertest"
)

// balances implements the deposits and withdrawals of AccountHandler only:
// the generated base acknowledges the rest (openings, freezes, closings).
type balances struct {
	ledger.UnimplementedAccountHandler
	mu sync.Mutex
	by map[string]int64
}

func (b *balances) HandleDeposited(_ context.Context, e ledger.Deposited) error {
	b.add(e.AccountID, e.Amount)
	return nil
}

func (b *balances) HandleWithdrew(_ context.Context, e ledger.Withdrew) error {
	b.add(e.AccountID, -e.Amount)
	return nil
}

func (b *balances) add(account string, amount int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[string]int64{}
	}
	b.by[account] += amount
}

func (b *balances) of(account string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.by[account]
}

// TestSkippedEventsFillVersionGaps: an event the handler does not implement
// and a late state transition are skipped, but their versions are stored,
// so the events held back on the gaps they fill are applied (the guards
// skip them with runtime.SkipApplied). Over many seeds of reordering the
// result is in-order application's, and nothing stays held. Before, an
// unimplemented event that filled a gap left the later events held until
// Close parked them.
func TestSkippedEventsFillVersionGaps(t *testing.T) {
	ctx := context.Background()
	events := ledgertest.SequenceAccount(
		ledger.AccountOpened{AccountID: "a", Owner: "ada"}, // unimplemented
		ledger.Deposited{AccountID: "a", Amount: 5},
		ledger.AccountFrozen{AccountID: "a", Reason: "audit"}, // unimplemented
		ledger.Deposited{AccountID: "a", Amount: 3},
		ledger.AccountClosed{AccountID: "a"},                 // unimplemented
		ledger.AccountFrozen{AccountID: "a", Reason: "late"}, // a late transition: skipped
		ledger.Withdrew{AccountID: "a", Amount: 1},
	)
	want := &balances{}
	in, err := ledgertest.NewAccountHarness(want)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	// The late transition is skipped in order too, on purpose: allowed by
	// its reason. Without it, the in-order run fails.
	const late = "late transition: state Frozen ranks below Closed"
	if _, err := in.ApplyInOrder(ctx, events); !errors.Is(err, ledgertest.ErrSkippedInOrder) || !strings.Contains(err.Error(), "AccountFrozen (key \"a\", version 6): "+late) {
		t.Fatalf("in order without allowing the late transition: %v", err)
	}
	want = &balances{}
	if err := applyAccountsAllowing(ctx, want, events, late); err != nil {
		t.Fatal(err)
	}
	if want.of("a") != 7 {
		t.Fatalf("in order: balance %d, want 7", want.of("a"))
	}
	for seed := range 50 {
		got := &balances{}
		h, err := ledgertest.NewAccountHarness(got, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
		if err != nil {
			t.Fatal(err)
		}
		report, err := h.Deliver(ctx, events, ledgertest.Chaos{Seed: seed, Duplicates: 0.3, Reorder: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got.of("a") != want.of("a") || report.Stats.Held != 0 || report.Stats.Parked != 0 {
			t.Fatalf("seed %d: balance %d, in order %d; stats %+v", seed, got.of("a"), want.of("a"), report.Stats)
		}
	}
}

// applyAccountsAllowing applies events to h in order, through a harness
// whose in-order run allows the skips with the reasons in allow.
func applyAccountsAllowing(ctx context.Context, h ledger.AccountHandler, events []ledger.AccountEvent, allow ...string) error {
	in, err := ledgertest.NewAccountHarness(h, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
	if err != nil {
		return err
	}
	_, err = in.ApplyInOrder(ctx, events, allow...)
	return errors.Join(err, in.Close(ctx))
}

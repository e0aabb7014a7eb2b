package brokerdemo

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCheckSeesWhatWentWrong: the tally is OK only when every event was
// applied once, in order, and every version stored.
func TestCheckSeesWhatWentWrong(t *testing.T) {
	ctx := context.Background()
	accounts := Stream(1, 2, 3, 4)
	total := 3 * 4
	apply := func(b *Book, versions *runtime.MemoryVersionStore[string], evs []ledger.AccountEvent) {
		h := Handler{Who: "a", Book: b}
		for _, e := range evs {
			var err error
			switch e := e.(type) {
			case ledger.AccountOpened:
				err = h.HandleAccountOpened(ctx, e)
			case ledger.Deposited:
				err = h.HandleDeposited(ctx, e)
			case ledger.Withdrew:
				err = h.HandleWithdrew(ctx, e)
			}
			if err != nil {
				t.Fatal(err)
			}
			old, err := versions.Version(ctx, e.EventKey())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := versions.CompareAndSet(ctx, e.EventKey(), old, e.EventVersion()); err != nil {
				t.Fatal(err)
			}
		}
	}

	b, versions := NewBook(total), runtime.NewMemoryVersionStore[string]()
	half := b.After(total / 2)
	for _, evs := range accounts {
		apply(b, versions, evs)
	}
	<-half
	<-b.Done()
	if tally := Check(ctx, b, versions, accounts, 4); !tally.OK(total) || tally.By["a"] != total {
		t.Fatalf("in order: %+v", tally)
	}

	// The last two events of the first account swapped: its balance may
	// still agree, but the version stored last is the older one.
	b, versions = NewBook(total), runtime.NewMemoryVersionStore[string]()
	swapped := append([]ledger.AccountEvent(nil), accounts[0]...)
	swapped[2], swapped[3] = swapped[3], swapped[2]
	apply(b, versions, swapped)
	for _, evs := range accounts[1:] {
		apply(b, versions, evs)
	}
	if tally := Check(ctx, b, versions, accounts, 4); tally.OK(total) || tally.Complete != 2 {
		t.Fatalf("reordered: %+v", tally)
	}

	// An event applied twice.
	b, versions = NewBook(total), runtime.NewMemoryVersionStore[string]()
	for _, evs := range accounts {
		apply(b, versions, evs)
	}
	apply(b, versions, accounts[1][3:])
	if tally := Check(ctx, b, versions, accounts, 4); tally.OK(total) || tally.Equal != 2 || tally.Applied != total+1 {
		t.Fatalf("applied twice: %+v", tally)
	}
}

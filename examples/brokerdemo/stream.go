package brokerdemo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
)

// Stream returns each of n accounts' events, in order: an AccountOpened,
// then deposits and withdrawals up to version events, each with the next
// version. seed and stream (each example passes its own) draw the amounts.
func Stream(seed, stream uint64, accounts, events int) [][]ledger.AccountEvent {
	rng := rand.New(rand.NewPCG(seed, stream))
	out := make([][]ledger.AccountEvent, accounts)
	opened := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for a := range out {
		id := fmt.Sprintf("acct-%03d", a)
		evs := []ledger.AccountEvent{ledger.AccountOpened{AccountID: id, Version: 1, Owner: "owner-" + id, OpenedAt: opened}}
		for v := uint64(2); v <= uint64(events); v++ {
			amount := rng.Int64N(100) + 1
			if rng.IntN(3) == 0 {
				evs = append(evs, ledger.Withdrew{AccountID: id, Version: v, Amount: amount})
			} else {
				evs = append(evs, ledger.Deposited{AccountID: id, Version: v, Amount: amount})
			}
		}
		out[a] = evs
	}
	return out
}

// InOrder returns the balances that applying each account's events in
// order gives.
func InOrder(accounts [][]ledger.AccountEvent) map[string]int64 {
	out := make(map[string]int64, len(accounts))
	for _, evs := range accounts {
		for _, e := range evs {
			switch e := e.(type) {
			case ledger.AccountOpened:
				out[e.AccountID] = 0
			case ledger.Deposited:
				out[e.AccountID] += e.Amount
			case ledger.Withdrew:
				out[e.AccountID] -= e.Amount
			}
		}
	}
	return out
}

// Publish sends every account's events through p, in order per account,
// from 8 goroutines.
func Publish(ctx context.Context, p ledger.AccountPublisher, accounts [][]ledger.AccountEvent) error {
	const publishers = 8
	errs := make([]error, publishers)
	var wg sync.WaitGroup
	for w := range publishers {
		wg.Go(func() {
			for a := w; a < len(accounts); a += publishers {
				for _, e := range accounts[a] {
					if err := publishOne(ctx, p, e); err != nil {
						errs[w] = err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
	}
	return nil
}

func publishOne(ctx context.Context, p ledger.AccountPublisher, e ledger.AccountEvent) error {
	switch e := e.(type) {
	case ledger.AccountOpened:
		return p.PublishAccountOpened(ctx, e)
	case ledger.Deposited:
		return p.PublishDeposited(ctx, e)
	case ledger.Withdrew:
		return p.PublishWithdrew(ctx, e)
	}
	return fmt.Errorf("unexpected event %T", e)
}

// Tally is how the book compares with in-order application of a stream.
type Tally struct {
	Accounts int // accounts in the stream
	Equal    int // accounts whose balance equals in-order application
	Complete int // accounts whose stored version is their last event's
	Applied  int // events applied, by every consumer together
	By       map[string]int
}

// OK reports whether every account is equal and complete and every one of
// total events was applied exactly once.
func (t Tally) OK(total int) bool {
	return t.Equal == t.Accounts && t.Complete == t.Accounts && t.Applied == total
}

// Check compares b with in-order application of accounts, whose every
// account has events events, and versions (the consumers' shared version
// store) with each account's last version.
func Check(ctx context.Context, b *Book, versions runtime.VersionStore[string], accounts [][]ledger.AccountEvent, events int) Tally {
	balances, applied, by := b.Snapshot()
	want := InOrder(accounts)
	t := Tally{Accounts: len(want), Applied: applied, By: by}
	for id, w := range want {
		if balances[id] == w {
			t.Equal++
		}
		if v, _ := versions.Version(ctx, id); v == uint64(events) {
			t.Complete++
		}
	}
	return t
}

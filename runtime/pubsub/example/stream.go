package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	ledger "github.com/ordergen/ordergen/examples/gen"
)

// stream returns each account's events, in order: an AccountOpened, then
// deposits and withdrawals, each with the next version.
func stream(cfg config) [][]ledger.AccountEvent {
	rng := rand.New(rand.NewPCG(cfg.seed, 0x6f72646572))
	out := make([][]ledger.AccountEvent, cfg.accounts)
	opened := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for a := range out {
		id := fmt.Sprintf("acct-%03d", a)
		evs := []ledger.AccountEvent{ledger.AccountOpened{AccountID: id, Version: 1, Owner: "owner-" + id, OpenedAt: opened}}
		for v := uint64(2); v <= uint64(cfg.events); v++ {
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

// inOrder returns the balances that applying each account's events in
// order gives.
func inOrder(accounts [][]ledger.AccountEvent) map[string]int64 {
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

package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/ordergen/ordergen/examples/gen"
)

// entry is one ledger event in a generated stream.
type entry struct {
	account string
	version uint64
	kind    string // "open", "deposit" or "withdraw"
	amount  int64
}

// accountStream returns the in-order events of one account (opened, then
// deposits and withdrawals that never overdraw) and the balance they leave.
func accountStream(rng *rand.Rand, account string, n int) ([]entry, int64) {
	events := []entry{{account: account, version: 1, kind: "open"}}
	var balance int64
	for v := uint64(2); v <= uint64(n); v++ {
		amount := 1 + rng.Int64N(100)
		if balance >= amount && rng.IntN(3) == 0 {
			events = append(events, entry{account, v, "withdraw", amount})
			balance -= amount
			continue
		}
		events = append(events, entry{account, v, "deposit", amount})
		balance += amount
	}
	return events, balance
}

// publish sends one entry through the generated typed publisher.
func publish(ctx context.Context, p ledger.AccountPublisher, e entry) error {
	switch e.kind {
	case "open":
		return p.PublishAccountOpened(ctx, ledger.AccountOpened{AccountID: e.account, Version: e.version, Owner: "owner of " + e.account})
	case "deposit":
		return p.PublishDeposited(ctx, ledger.Deposited{AccountID: e.account, Version: e.version, Amount: e.amount})
	case "withdraw":
		return p.PublishWithdrew(ctx, ledger.Withdrew{AccountID: e.account, Version: e.version, Amount: e.amount})
	}
	return fmt.Errorf("unknown entry kind %q", e.kind)
}

// interleave merges streams into one sequence, keeping each stream's order
// and mixing the streams at random, as independent writers would.
func interleave(rng *rand.Rand, streams [][]entry) []entry {
	var out []entry
	next := make([]int, len(streams))
	live := make([]int, 0, len(streams))
	for i, s := range streams {
		if len(s) > 0 {
			live = append(live, i)
		}
	}
	for len(live) > 0 {
		j := rng.IntN(len(live))
		i := live[j]
		out = append(out, streams[i][next[i]])
		next[i]++
		if next[i] == len(streams[i]) {
			live = append(live[:j], live[j+1:]...)
		}
	}
	return out
}

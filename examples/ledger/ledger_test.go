package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExampleReport(t *testing.T) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, &out, config{accounts: 12, events: 10, latency: 2 * time.Millisecond, seed: 3}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"balances 13 of 13 accounts equal in-order application",
		"acct-3 v5 failed twice (database timeout) and was applied on attempt 3",
		"acct-4 v6 failed permanently: the key parked",
		"status Shipped, 2 skipped by the state guard",
		"every rider ends at its newest position",
		"ordergen.backlog.key {top keys: acct-hot=",
		"ordergen.events{accepted=",
		"SQLite store in a temporary file",
		"survived a restart; a new event joined its park",
		"10 of 10 accounts equal in-order application, 0 events applied twice",
		"balances 13 of 13 accounts: the owner's table, the consumer and in-order application agree; 13 at the outbox's last version, 0 out of order",
		"left     acct-review v3 refused (account under a compliance review: postings refused until the review ends): the key parked with 4 events, and stays parked",
		"(in the temporary store, removed now: -store FILE keeps it for ordergen-parked)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExampleLeavesAKeyParked: run in a store of its own, the example ends
// with acct-review parked in it, and the report says how to see it; a
// second run in the same store starts afresh and ends the same way.
func TestExampleLeavesAKeyParked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	for run := range 2 {
		var out bytes.Buffer
		if err := runExample(t, &out, path); err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out.String())
		}
		if want := "for you to operate: go run ./cmd/ordergen-parked -store " + path + " list\n"; !strings.Contains(out.String(), want) {
			t.Errorf("run %d: the report lacks %q:\n%s", run, want, out.String())
		}
		store, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := store.Parks("Account").Keys(t.Context())
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].Key != leftAccount || keys[0].Events != 4 || !strings.Contains(keys[0].Reason, "compliance review") {
			t.Errorf("run %d: parked in the store: %+v, want %s alone, with 4 events", run, keys, leftAccount)
		}
	}
}

// runExample runs the example, smaller than its defaults, in the store at
// path.
func runExample(t *testing.T, out *bytes.Buffer, path string) error {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	return run(ctx, out, config{accounts: 12, events: 10, latency: 2 * time.Millisecond, seed: 3, store: path})
}

// delivery turns in-order streams into what an at-least-once transport
// might deliver: duplicates, stale redeliveries and events moved up to
// window places later, each account's first event first.
func delivery(rng *rand.Rand, streams [][]entry, window int) []entry {
	var out []entry
	for _, s := range streams {
		d := append([]entry(nil), s...)
		for i := 1; i < len(d); i++ { // move some events later
			if j := i + rng.IntN(window+1); j < len(d) && rng.IntN(3) == 0 {
				d[i], d[j] = d[j], d[i]
			}
		}
		for i := 0; i < len(s)/3; i++ { // redeliver some, duplicates and stale ones
			at := 1 + rng.IntN(len(d))
			d = append(d[:at], append([]entry{s[rng.IntN(len(s))]}, d[at:]...)...)
		}
		out = append(out, d...)
	}
	return interleaveKeepingAccounts(rng, out)
}

// interleaveKeepingAccounts mixes accounts while keeping each account's
// delivery order.
func interleaveKeepingAccounts(rng *rand.Rand, seq []entry) []entry {
	by := map[string][]entry{}
	var order []string
	for _, e := range seq {
		if _, ok := by[e.account]; !ok {
			order = append(order, e.account)
		}
		by[e.account] = append(by[e.account], e)
	}
	streams := make([][]entry, len(order))
	for i, a := range order {
		streams[i] = by[a]
	}
	return interleave(rng, streams)
}

// TestGuardsReachInOrderState drives the generated ledger through the
// runtime with duplicated, stale and out-of-order versions: the version
// guard skips duplicates and stale events and resequences the early ones,
// so the balances equal in-order application.
func TestGuardsReachInOrderState(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		accounts := rapid.IntRange(1, 8).Draw(rt, "accounts")
		events := rapid.IntRange(1, 25).Draw(rt, "events")
		window := rapid.IntRange(0, 5).Draw(rt, "window")
		rng := rand.New(rand.NewPCG(seed, 11))
		b := newBook(0, seed)
		d, err := ledger.NewAccountDispatcher(b, func(c *ledger.AccountConfig) { c.Logger = quietLogger() })
		if err != nil {
			rt.Fatal(err)
		}
		defer d.Close(context.Background())
		want := map[string]int64{}
		var streams [][]entry
		for i := 0; i < accounts; i++ {
			s, balance := accountStream(rng, fmt.Sprintf("acct-%d", i), events)
			streams = append(streams, s)
			want[s[0].account] = balance
		}
		ctx := context.Background()
		for _, e := range delivery(rng, streams, window) {
			if err := publish(ctx, d, e); err != nil {
				rt.Fatal(err)
			}
		}
		if err := d.Flush(ctx); err != nil {
			rt.Fatal(err)
		}
		for account, balance := range want {
			if got := b.balance(account); got != balance {
				rt.Fatalf("%s: balance %d, in-order application gives %d", account, got, balance)
			}
		}
		s := d.Stats()["Account"]
		if s.Held != 0 || s.Parked != 0 || s.Pending != 0 {
			rt.Fatalf("events left behind: %+v", s)
		}
		if s.Handled != uint64(accounts*events) {
			rt.Fatalf("handled %d events, want each of the %d exactly once: %+v", s.Handled, accounts*events, s)
		}
	})
}

// TestStateGuardSkipsLateTransitions delivers order transitions with late
// and duplicated ones; the final status equals in-order application.
func TestStateGuardSkipsLateTransitions(t *testing.T) {
	lifecycles := [][]string{
		{"Placed", "Paid", "Shipped", "Delivered"},
		{"Placed", "Paid", "Cancelled"},
		{"Placed", "Cancelled"},
		{"Placed", "Shipped"},
	}
	rapid.Check(t, func(rt *rapid.T) {
		life := rapid.SampledFrom(lifecycles).Draw(rt, "lifecycle")
		s := &shipments{status: map[string]string{}}
		d, err := ledger.NewOrderDispatcher(s, func(c *ledger.OrderConfig) { c.Logger = quietLogger() })
		if err != nil {
			rt.Fatal(err)
		}
		defer d.Close(context.Background())
		// In order, with late redeliveries of earlier steps after each step.
		var sent []string
		for i, step := range life {
			sent = append(sent, step)
			for _, late := range rapid.SliceOfN(rapid.IntRange(0, i), 0, 3).Draw(rt, "late") {
				sent = append(sent, life[late])
			}
		}
		ctx := context.Background()
		for _, step := range sent {
			if err := publishOrder(ctx, d, "o-1", step); err != nil {
				rt.Fatal(err)
			}
		}
		if err := d.Flush(ctx); err != nil {
			rt.Fatal(err)
		}
		if got, want := s.status["o-1"], life[len(life)-1]; got != want {
			rt.Fatalf("delivered %v: status %s, in-order application gives %s", sent, got, want)
		}
		st := d.Stats()["Order"]
		if st.Handled != uint64(len(life)) || st.Skipped != uint64(len(sent)-len(life)) {
			rt.Fatalf("delivered %v: handled %d, skipped %d", sent, st.Handled, st.Skipped)
		}
	})
}

func publishOrder(ctx context.Context, d *ledger.OrderDispatcher, id, step string) error {
	switch step {
	case "Placed":
		return d.PublishOrderPlaced(ctx, ledger.OrderPlaced{OrderID: id})
	case "Paid":
		return d.PublishOrderPaid(ctx, ledger.OrderPaid{OrderID: id})
	case "Shipped":
		return d.PublishOrderShipped(ctx, ledger.OrderShipped{OrderID: id})
	case "Delivered":
		return d.PublishOrderDelivered(ctx, ledger.OrderDelivered{OrderID: id})
	case "Cancelled":
		return d.PublishOrderCancelled(ctx, ledger.OrderCancelled{OrderID: id})
	}
	return fmt.Errorf("unknown step %s", step)
}

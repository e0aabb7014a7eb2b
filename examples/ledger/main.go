// Command ledger is ordergen's runnable example. It drives the code generated
// from examples/schema.yaml (package ledger in examples/gen) through the
// runtime and prints a short report that shows the guarantees at work:
//
//   - in-order ledger balances, with accounts handled in parallel, several
//     publishers and random handler latencies;
//   - a hot account with half of all events, which does not stall the others;
//   - a transient failure retried in place, the account's later events
//     waiting behind it;
//   - a permanent failure that parks the account, then a replay after the
//     fault is fixed;
//   - late order transitions skipped by the state guard, and rider locations
//     conflated.
//
// Run it from the repository root with: go run ./examples/ledger
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.accounts, "accounts", 40, "number of cold accounts")
	flag.IntVar(&cfg.events, "events", 20, "events per cold account")
	flag.DurationVar(&cfg.latency, "latency", time.Millisecond, "upper bound of a handler's random latency (from half of it)")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated streams and latencies")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ledger example:", err)
		os.Exit(1)
	}
}

// config sizes the example's run.
type config struct {
	accounts int
	events   int
	latency  time.Duration
	seed     uint64
}

// run plays every scenario and writes the report to out. It returns an error
// when a guarantee did not hold.
func run(ctx context.Context, out io.Writer, cfg config) error {
	fmt.Fprintln(out, "ordergen example: the ledger schema on per-key lanes (in-memory stores)")
	if err := runLedger(ctx, out, cfg); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := runOrders(ctx, out); err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	if err := runRiders(ctx, out); err != nil {
		return fmt.Errorf("riders: %w", err)
	}
	return nil
}

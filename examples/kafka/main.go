// Command kafka runs the ledger of examples/schema.yaml across processes on
// Kafka, in one process: an in-process kfake cluster, a 12-partition topic,
// the generated AccountProducer over runtime/kafka's Producer, and two
// consumers of one group (runtime/kafka's Consumer feeding a generated
// AccountDispatcher each). It kills one consumer mid-stream, as a crash
// would, and checks that the final balances equal in-order application of
// the stream: nothing lost across the rebalance, nothing applied twice
// (the version guard skips what is delivered again).
//
// Run it from the repository root with: go run ./examples/kafka
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.accounts, "accounts", 200, "number of accounts")
	flag.IntVar(&cfg.events, "events", 25, "events per account")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated stream")
	flag.DurationVar(&cfg.slow, "slow", 2*time.Millisecond, "handler latency of every seventh account (the others take none)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "kafka example:", err)
		os.Exit(1)
	}
}

// config sizes the example's run.
type config struct {
	accounts int
	events   int
	seed     uint64
	slow     time.Duration
}

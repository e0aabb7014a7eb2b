// Command example runs the ledger of examples/schema.yaml across processes
// on NATS JetStream, in one process: a nats-server started in the process,
// the generated AccountProducer over runtime/nats's Producer, and two
// consumers of the topology's partitions (runtime/nats's Consumer feeding a
// generated AccountDispatcher each). It kills one consumer mid-stream, as
// a crash would, and checks that the final balances equal in-order
// application of the stream: nothing lost, nothing applied twice (the
// version guard skips what is delivered again).
//
// Run it from runtime/nats with: go run ./example
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
	flag.IntVar(&cfg.accounts, "accounts", 50, "number of accounts")
	flag.IntVar(&cfg.events, "events", 10, "events per account")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated stream")
	flag.DurationVar(&cfg.slow, "slow", 2*time.Millisecond, "handler latency of every seventh account (the others take none)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "nats example:", err)
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

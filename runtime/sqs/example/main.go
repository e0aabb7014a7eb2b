// Command example runs the ledger of examples/schema.yaml across processes
// on an SQS FIFO queue, in one process: a FIFO queue on the SQS endpoint
// given (an emulator: .ci/fauxqs start DIR prints one), the generated
// AccountProducer over runtime/sqs's Producer (message group = AccountID,
// deduplication ID = AccountID and Version), and two consumers of the queue
// (runtime/sqs's Consumer feeding a generated AccountDispatcher each). It
// kills one consumer mid-stream, as a crash would, and checks that the
// final balances equal in-order application of the stream: nothing lost,
// nothing applied twice (the version guard skips what is delivered again).
//
// Run it from runtime/sqs with: go run ./example -endpoint http://127.0.0.1:PORT
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
	flag.StringVar(&cfg.endpoint, "endpoint", os.Getenv("ORDERGEN_TEST_SQS"), "the SQS endpoint (default $ORDERGEN_TEST_SQS)")
	flag.IntVar(&cfg.accounts, "accounts", 50, "number of accounts")
	flag.IntVar(&cfg.events, "events", 10, "events per account")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated stream")
	flag.DurationVar(&cfg.slow, "slow", 2*time.Millisecond, "handler latency of every seventh account (the others take none)")
	flag.Parse()
	if cfg.endpoint == "" {
		fmt.Fprintln(os.Stderr, "sqs example: no endpoint: pass -endpoint (start an emulator with .ci/fauxqs start DIR)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "sqs example:", err)
		os.Exit(1)
	}
}

// config sizes the example's run.
type config struct {
	endpoint string
	accounts int
	events   int
	seed     uint64
	slow     time.Duration
}

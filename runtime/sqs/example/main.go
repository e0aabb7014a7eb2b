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
	"errors"
	"flag"
	"io"
	"os"
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
)

func main() {
	endpoint := flag.String("endpoint", os.Getenv("ORDERGEN_TEST_SQS"), "the SQS endpoint (default $ORDERGEN_TEST_SQS)")
	brokerdemo.Main("sqs", brokerdemo.Config{Accounts: 50, Events: 10, Seed: 1, Slow: 2 * time.Millisecond}, func(ctx context.Context, out io.Writer, cfg brokerdemo.Config) error {
		if *endpoint == "" {
			return errors.New("no endpoint: pass -endpoint (start an emulator with .ci/fauxqs start DIR)")
		}
		return run(ctx, out, *endpoint, cfg)
	})
}

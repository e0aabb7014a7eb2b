// Command rabbitmq runs the ledger of examples/schema.yaml across processes
// on RabbitMQ, in one process: a topology of 4 queues with single active
// consumers behind a consistent-hash exchange, the generated AccountProducer
// over runtime/rabbitmq's Producer (publisher confirms), and two consumer
// processes (runtime/rabbitmq's Consumer feeding a generated
// AccountDispatcher each). Process a subscribes first and is every queue's
// active consumer; b stands by. The example kills a mid-stream, as a crash
// would: the broker returns a's unacknowledged messages to their queues, in
// order, and makes b the active consumer. It checks that the final balances
// equal in-order application of the stream: nothing lost, nothing applied
// twice (the version guard skips what is delivered again).
//
// It needs a RabbitMQ server with the rabbitmq_consistent_hash_exchange
// plugin (.ci/rabbitmq start DIR starts a throwaway one). Run it from the
// repository root with:
//
//	go run ./examples/rabbitmq -url amqp://guest:guest@127.0.0.1:5672/
//
// The URL defaults to $ORDERGEN_TEST_RABBITMQ. The topology it declares has
// a name of its own, deleted at the end.
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
	url := flag.String("url", os.Getenv("ORDERGEN_TEST_RABBITMQ"), "the broker's amqp:// URL (default $ORDERGEN_TEST_RABBITMQ)")
	brokerdemo.Main("rabbitmq", brokerdemo.Config{Accounts: 200, Events: 25, Seed: 1, Slow: 2 * time.Millisecond}, func(ctx context.Context, out io.Writer, cfg brokerdemo.Config) error {
		if *url == "" {
			return errors.New("no broker: pass -url amqp://... or set ORDERGEN_TEST_RABBITMQ (.ci/rabbitmq start DIR starts one)")
		}
		return run(ctx, out, *url, cfg)
	})
}

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
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
)

func main() {
	brokerdemo.Main("nats", brokerdemo.Config{Accounts: 50, Events: 10, Seed: 1, Slow: 2 * time.Millisecond}, run)
}

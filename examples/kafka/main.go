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
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
)

func main() {
	brokerdemo.Main("kafka", brokerdemo.Config{Accounts: 200, Events: 25, Seed: 1, Slow: 2 * time.Millisecond}, run)
}

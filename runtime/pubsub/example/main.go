// Command example runs the ledger of examples/schema.yaml across processes
// on Google Pub/Sub with ordering keys, in one process: an in-process pstest
// server with an ordered subscription, the generated AccountProducer over
// runtime/pubsub's Producer, and two consumers of the subscription
// (runtime/pubsub's Consumer feeding a generated AccountDispatcher each).
// It kills one consumer mid-stream, as a crash would, and checks that the
// final balances equal in-order application of the stream: nothing lost,
// nothing applied twice (the version guard skips what is delivered again).
//
// Run it from runtime/pubsub with: go run ./example
package main

import (
	"time"

	"github.com/ordergen/ordergen/examples/brokerdemo"
)

func main() {
	brokerdemo.Main("pubsub", brokerdemo.Config{Accounts: 50, Events: 10, Seed: 1, Slow: 2 * time.Millisecond}, run)
}

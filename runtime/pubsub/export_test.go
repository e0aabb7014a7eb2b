package pubsub

import (
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// SetSweepEvery makes the consumer look at leases every d (tests only).
func SetSweepEvery[E any](c *Config[E], d time.Duration) { c.sweepEvery = d }

// ReceiveReturned is closed once the client's Receive under c returned:
// after a stop that gave up waiting for Pub/Sub, later than Run.
func ReceiveReturned[K comparable, E transport.Keyed[K]](c *Consumer[K, E]) <-chan struct{} {
	return c.received
}

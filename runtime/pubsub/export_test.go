package pubsub

import "time"

// SetSweepEvery makes the consumer look at leases every d (tests only).
func SetSweepEvery[E any](c *Config[E], d time.Duration) { c.sweepEvery = d }

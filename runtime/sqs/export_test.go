package sqs

import "time"

// SetSweepEvery makes the consumer look at leases every d (tests only).
func SetSweepEvery[E any](c *Config[E], d time.Duration) { c.sweepEvery = d }

// SetMaxHold stands in for SQS's 12 hours (tests only).
func SetMaxHold[E any](c *Config[E], d time.Duration) { c.maxHold = d }

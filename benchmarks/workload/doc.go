// Package workload describes the events the benchmark suite sends and
// checks what the peers did with them.
//
// A Spec is one workload: how keys are drawn (uniform over NumKeys keys, or
// skewed, where one key gets half of the events) and how much CPU work the
// handler does per event (none, or a busy loop calibrated by Calibrate).
// Drive is the producer: it submits events to a peer from the calling
// goroutine and drains it. A Check wraps the handler and verifies, in O(1)
// per event and without atomics or locks, that every event was handled
// exactly once and, for the ordered peers, in per-key order.
package workload

// Package workload describes the events the benchmark suite sends and
// checks what the peers did with them.
//
// A Spec is one workload: how keys are drawn (uniform over NumKeys keys, or
// skewed, where one key gets half of the events), how much CPU work the
// handler does per event (none, or a busy loop calibrated by Calibrate) and
// how many goroutines submit. A Run is the producer: it builds the events
// before the timing starts, and Drive submits them to a peer from the
// calling goroutine, or from several goroutines that each own a share of
// the keys (Spec.Submitters), and drains it. A Check wraps the handler and
// verifies, in O(1) per event and without atomics or locks, that every
// event was handled exactly once and, for the ordered peers, in per-key
// order.
package workload

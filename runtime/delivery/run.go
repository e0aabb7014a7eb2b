package delivery

import (
	"context"
	"fmt"

	"github.com/ordergen/ordergen/runtime"
)

// Run publishes the events of plan one at a time, in order, from the
// calling goroutine (but the lost ones), then calls flush, which waits
// until every event has an outcome (or is held or parked). It stops at the
// first error.
func Run[E any](ctx context.Context, plan []Sent[E], publish func(context.Context, E) error, flush func(context.Context) error) error {
	for i, s := range plan {
		if s.Kind == Lost {
			continue
		}
		if err := publish(ctx, s.Event); err != nil {
			return fmt.Errorf("publish delivery %d of %d (%s of event %d): %w", i+1, len(plan), s.Kind, s.Index, err)
		}
	}
	if err := flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// Report is what a harness delivered and the counters of its subscriber
// afterwards.
type Report[E any] struct {
	// Sent are the deliveries, in the order they were published.
	Sent []Sent[E]
	// Stats are the subscriber's counters after the delivery. They add up
	// over every delivery of one harness.
	Stats runtime.Stats
	// Skips are the events the subscriber's guards skipped during the
	// delivery, with their reasons, in the order the guards skipped them
	// (each key's in its order). Unimplemented events, which the guards
	// acknowledge, are not among them.
	Skips []Skip[E]
}

// Count returns how many deliveries of kind k the report holds.
func (r Report[E]) Count(k Kind) int {
	n := 0
	for _, s := range r.Sent {
		if s.Kind == k {
			n++
		}
	}
	return n
}

// Late returns how many first deliveries arrived after later events of
// their key.
func (r Report[E]) Late() int {
	n := 0
	for _, s := range r.Sent {
		if s.Late {
			n++
		}
	}
	return n
}

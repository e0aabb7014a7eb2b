package transport

import (
	"context"
	"fmt"
	"time"
)

// Ownership is one unbroken holding, by this process, of a source of
// messages: a Kafka partition from its assignment to its revocation or
// loss; a cooperative rebalance that keeps a partition keeps its ownership.
// Create it with Source.Own and end it with Source.End.
type Ownership struct {
	ended    bool
	live     int           // messages taken and not settled
	parked   int           // of which parked in memory
	offering int           // Offer calls in progress
	idle     chan struct{} // closed when offering drops to 0, for End
}

// End ends the ownerships: their messages can no longer be taken or
// offered, the events of their messages that have not started are
// withdrawn from the target (queued, waiting for a retry, held, parked in
// memory) and never start, and End waits until the running ones finish or
// ctx ends, when their attempts are cancelled with ctx's cause
// (context.Cause: give ctx one that says why the ownership ended, wrapping
// ErrOwnershipEnded or ErrLeaseLost, and the handlers see it) and End
// waits up to a quarter second more for their handlers to return. Then every message of
// the ownerships not settled yet is settled Unfinished, and later outcomes
// of their events are ignored. End returns how many messages it settled
// so, and ctx's error when it ended first.
//
// A handler that ignores the cancellation of its context goes on running
// after End returns: it can overlap with the messages' next owner.
func (s *Source[K, E, M]) End(ctx context.Context, owners ...*Ownership) (int, error) {
	ending := make(map[*Ownership]bool, len(owners))
	s.lock()
	for _, o := range owners {
		o.ended = true
		ending[o] = true
	}
	// Offers in progress finish before the scan, so that it sees their
	// events (they do not wait: see Offer).
	for _, o := range owners {
		for o.offering > 0 {
			if o.idle == nil {
				o.idle = make(chan struct{})
			}
			idle := o.idle
			s.unlock()
			<-idle
			s.lock()
		}
	}
	tags := make(map[uint64]struct{})
	for i := range s.slots {
		if sl := &s.slots[i]; sl.used && ending[sl.owner] && sl.accepted > 0 {
			tags[uint64(sl.gen)<<32|uint64(i+1)] = struct{}{}
		}
	}
	s.unlock()

	var err error
	if len(tags) > 0 {
		err = s.withdraw(ctx, func(tag uint64) bool {
			_, ok := tags[tag]
			return ok
		})
	}

	s.lock()
	defer s.unlock()
	left := 0
	for i := range s.slots {
		if sl := &s.slots[i]; sl.used && ending[sl.owner] {
			s.finish(uint64(sl.gen)<<32|uint64(i+1), sl, Unfinished)
			left++
		}
	}
	if err != nil {
		return left, fmt.Errorf("end ownership: %w", err)
	}
	return left, nil
}

// cancelGrace is how long End waits, after its context ended and the
// running attempts were cancelled, for their handlers to return.
const cancelGrace = 250 * time.Millisecond

// withdraw withdraws the events match selects from the target and waits
// until the selected events that had started finished, or ctx ended; then
// it cancels their attempts and waits up to cancelGrace for them to return.
// The wait itself never ends on a deadline: an attempt that a worker began
// just as the cancellation went out, and so was not cancelled, is waited
// for rather than left to start after End returned.
func (s *Source[K, E, M]) withdraw(ctx context.Context, match func(uint64) bool) error {
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := s.target.Withdraw(wctx, match)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("withdraw: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	// Cancel the running attempts with ctx's cause (the withdrawal above
	// keeps waiting for them), then give up on those that ignore their
	// context.
	cctx, cancel := context.WithCancelCause(context.Background())
	cancel(context.Cause(ctx))
	_, _ = s.target.Withdraw(cctx, match)
	grace := time.NewTimer(cancelGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		stop()
		<-done
	}
	return ctx.Err()
}

// UnsettledOf returns the number of messages of o taken and not settled
// yet, and how many of them are parked in memory, waiting for a replay or a
// discard.
func (s *Source[K, E, M]) UnsettledOf(o *Ownership) (unsettled, parked int) {
	s.lock()
	defer s.unlock()
	return o.live, o.parked
}

package sqs

import (
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// Stats are a Consumer's counters since it started, and its state now.
type Stats struct {
	// Received is the number of messages received.
	Received uint64
	// Deleted is the number of messages settled as finished (and deleted):
	// every subscriber finished them (handled, skipped, dead-lettered,
	// parked in a park store, ...), or they were bad and went to the
	// dead-letter queue. DeleteErrors counts the deletes SQS refused.
	Deleted, DeleteErrors uint64
	// Returned is the number of messages settled as unfinished, to be made
	// visible again: their group was given back (see GroupsGivenBack) or
	// the consumer stopped. ReturnErrors counts those SQS was not told of
	// (refused, the call failed, or the consumer stopped before it could
	// tell it): they come back when their visibility ends.
	Returned, ReturnErrors uint64
	// DeadLettered is the number of bad messages sent to the dead-letter
	// queue; DeadLetterErrors the failed sends.
	DeadLettered, DeadLetterErrors uint64
	// Extensions counts the visibility extensions SQS confirmed.
	// ExtensionErrors counts those that failed: the call failed or got no
	// answer in time, or SQS refused (ExtensionsRefused of them: SQS took
	// the message back, and its group is given back at once). A failed
	// extension changes nothing: the consumer trusts only the visibility
	// SQS confirmed, and gives the group up before that ends
	// (GroupsGivenBack.VisibilityLapsed).
	Extensions, ExtensionErrors, ExtensionsRefused uint64
	// ReceiveErrors counts the failed receive calls.
	ReceiveErrors uint64
	// GroupsGivenBack counts the message groups whose unsettled messages
	// went back to the queue before they finished, by reason: one of them
	// was given back (a failed dead-letter send), one reached the 12 hours
	// SQS keeps a message invisible (parked in memory, or a handler ran
	// that long), SQS refused to extend a visibility, or the visibility
	// SQS last confirmed neared its end (extensions failed or got no
	// answer: the consumer was cut off from SQS).
	GroupsGivenBack struct{ Unfinished, MaxHold, ExtensionRefused, VisibilityLapsed uint64 }
	// Unsettled is the number of messages received and not settled now;
	// Parked of them are parked in memory (they finish when their parks
	// are resolved, Replay or Discard).
	Unsettled, Parked int
	// Groups is the number of message groups with unsettled messages;
	// WaitingForRoom of them have messages the lanes refused for lack of
	// room, which wait until there is room.
	Groups, WaitingForRoom int
	// OldestUnsettledAge is how long ago the oldest unsettled message was
	// received.
	OldestUnsettledAge time.Duration
	// Blocked is why the consumer receives nothing more, as of the last
	// look (every second): MaxInFlight messages are unsettled
	// (transport.BlockedInFlight: it passes as they finish), and parks in
	// memory hold half of them or more (transport.BlockedParked: it passes
	// when the parks are resolved); zero when it receives.
	Blocked transport.Blocked
}

// Stats returns a snapshot of the consumer's counters; zero before Run.
func (c *Consumer[K, E]) Stats() Stats {
	s := c.in.Stats()
	out := Stats{
		Received: s.Received, Deleted: s.Finished, Returned: s.Unfinished + s.Refused,
		DeadLettered: s.DeadLettered, DeadLetterErrors: s.DeadLetterErrors,
		Unsettled: s.Unsettled + s.Waiting, Parked: s.Parked, Groups: s.Keys, WaitingForRoom: s.Stashed,
		OldestUnsettledAge: s.OldestUnsettledAge, Blocked: s.Blocked,
	}
	out.GroupsGivenBack.Unfinished = s.Ended.Unfinished
	out.GroupsGivenBack.MaxHold = s.Ended.Lease
	out.GroupsGivenBack.ExtensionRefused = s.Ended.LeaseLost
	out.GroupsGivenBack.VisibilityLapsed = s.Ended.LeaseLapsed
	ls := c.leases.Stats()
	out.Extensions, out.ExtensionErrors, out.ExtensionsRefused = ls.Extensions, ls.Errors, ls.Refused
	c.mu.Lock()
	out.DeleteErrors, out.ReturnErrors = c.stats.deleteErrors, c.stats.returnErrors
	out.ReceiveErrors = c.stats.receiveErrors
	c.mu.Unlock()
	return out
}

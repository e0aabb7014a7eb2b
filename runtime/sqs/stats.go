package sqs

import (
	"time"
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
	// Returned is the number of messages made visible again: their group
	// was given back (see GroupsGivenBack) or the consumer stopped.
	Returned uint64
	// DeadLettered is the number of bad messages sent to the dead-letter
	// queue; DeadLetterErrors the failed sends.
	DeadLettered, DeadLetterErrors uint64
	// Extensions counts the visibility extensions; ExtensionErrors those
	// SQS refused (the message's group is then given back).
	Extensions, ExtensionErrors uint64
	// ReceiveErrors counts the failed receive calls.
	ReceiveErrors uint64
	// GroupsGivenBack counts the message groups whose unsettled messages
	// went back to the queue before they finished, by reason: one of them
	// was given back (a failed dead-letter send), one reached the 12 hours
	// SQS keeps a message invisible (parked in memory, or a handler ran
	// that long), or SQS refused to extend a visibility.
	GroupsGivenBack struct{ Unfinished, MaxHold, ExtensionRefused uint64 }
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
	// look (every second): "in-flight" (MaxInFlight messages are unsettled;
	// it passes as they finish) or "parked" (and parks in memory hold half
	// of them or more: it passes when the parks are resolved); "" when it
	// receives.
	Blocked string
}

// Stats returns a snapshot of the consumer's counters; zero before Run.
func (c *Consumer[K, E]) Stats() Stats {
	core := c.core.Load()
	if core == nil {
		return Stats{}
	}
	s := core.Stats()
	out := Stats{
		Received: s.Received, Deleted: s.Finished, Returned: s.Unfinished + s.Refused,
		DeadLettered: s.DeadLettered, DeadLetterErrors: s.DeadLetterErrors,
		Unsettled: s.Unsettled + s.Waiting, Parked: s.Parked, Groups: s.Keys, WaitingForRoom: s.Stashed,
		OldestUnsettledAge: s.OldestUnsettledAge, Blocked: s.Blocked,
	}
	out.GroupsGivenBack.Unfinished = s.Ended.Unfinished
	out.GroupsGivenBack.MaxHold = s.Ended.Lease
	out.GroupsGivenBack.ExtensionRefused = s.Ended.LeaseLost
	c.mu.Lock()
	out.DeleteErrors = c.stats.deleteErrors
	out.Extensions, out.ExtensionErrors = c.stats.extensions, c.stats.extensionErrors
	out.ReceiveErrors = c.stats.receiveErrors
	c.mu.Unlock()
	return out
}

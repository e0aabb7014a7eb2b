package pubsub

import (
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// Stats are a Consumer's counters since it started, and its state now.
type Stats struct {
	// Received is the number of messages received.
	Received uint64
	// Acked is the number of messages acknowledged: every subscriber
	// finished them (handled, skipped, dead-lettered, parked in a park
	// store, ...), or they were bad and went to the dead-letter topic.
	Acked uint64
	// Nacked is the number of messages given back to Pub/Sub, which
	// delivers them again with every later message of their key: their key
	// was given back (see KeysGivenBack) or the consumer stopped.
	Nacked uint64
	// DeadLettered is the number of bad messages written to the
	// dead-letter topic; DeadLetterErrors the failed writes.
	DeadLettered, DeadLetterErrors uint64
	// Unconfirmed is the number of messages the consumer acknowledged or
	// nacked while it stopped whose calls the client had not sent when
	// Run stopped waiting for them (Pub/Sub unreachable: Run waits until
	// Close's context or DrainTimeout ends, and not at all when its own
	// context ended). They come again when their ack deadline passes.
	Unconfirmed uint64
	// Stale is the number of messages given back because they came after a
	// message of their key that was given back, before it came again.
	Stale uint64
	// KeysGivenBack counts the keys whose unsettled messages went back to
	// Pub/Sub before they finished, by reason: a message of the key was
	// nacked (its later ones are delivered again anyway), or a message
	// reached Config.MaxExtension (parked in memory, or a handler ran that
	// long).
	KeysGivenBack struct{ Nacked, MaxExtension uint64 }
	// Unsettled is the number of messages received and not settled now;
	// Parked of them are parked in memory (they finish when their parks
	// are resolved, Replay or Discard).
	Unsettled, Parked int
	// Keys is the number of ordering keys with unsettled messages;
	// WaitingForRoom of them have messages the lanes refused for lack of
	// room, which wait, with the key's later ones, until there is room.
	Keys, WaitingForRoom int
	// OldestUnsettledAge is how long ago the oldest unsettled message was
	// received.
	OldestUnsettledAge time.Duration
	// Blocked is why Pub/Sub sends no more messages for any key, as of the
	// last look (every second): MaxInFlight messages are unsettled
	// (transport.BlockedInFlight: it passes as they finish), and parks in
	// memory hold half of them or more (transport.BlockedParked: it passes
	// when the parks are resolved); zero when it does not.
	Blocked transport.Blocked
}

func statsOf(s transport.KeyStats) Stats {
	out := Stats{
		Received: s.Received, Acked: s.Finished, Nacked: s.Unfinished + s.Refused + s.Fenced,
		DeadLettered: s.DeadLettered, DeadLetterErrors: s.DeadLetterErrors, Stale: s.Fenced,
		Unsettled: s.Unsettled + s.Waiting, Parked: s.Parked, Keys: s.Keys, WaitingForRoom: s.Stashed,
		OldestUnsettledAge: s.OldestUnsettledAge, Blocked: s.Blocked,
	}
	out.KeysGivenBack.Nacked = s.Ended.Unfinished
	out.KeysGivenBack.MaxExtension = s.Ended.Lease
	return out
}

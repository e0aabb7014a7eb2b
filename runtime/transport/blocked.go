package transport

import (
	"log/slog"
	"sync"
)

// Blocked says why a consumer, or one of its units of order, takes no more
// messages: its room (MaxInFlight, a queue's prefetch) is full.
type Blocked uint8

const (
	// NotBlocked: messages are taken.
	NotBlocked Blocked = iota
	// BlockedInFlight: the room is full of messages taken and not
	// settled; taking resumes as they finish.
	BlockedInFlight
	// BlockedParked: the room is full and messages parked in memory hold
	// half of it or more: they settle only when their parks are resolved
	// (Replay or Discard), so taking waits for an operator. It lasts until
	// they hold less than half, while the consumer crawls on the room left.
	BlockedParked
)

var blockedNames = [...]string{NotBlocked: "", BlockedInFlight: "in_flight", BlockedParked: "parked"}

// String returns the reason's name, as in logs and metrics ("in_flight",
// "parked"; "" when not blocked).
func (b Blocked) String() string {
	if int(b) < len(blockedNames) {
		return blockedNames[b]
	}
	return "Blocked(?)"
}

// BlockWatch follows whether a consumer, or one of its units, is blocked,
// and logs each change an operator must see: parked messages filling the
// room at Warn (and holding half of it, a warning before), its end at
// Info, the rest at Debug. Once parked messages blocked it, it stays
// BlockedParked until they hold less than half of the room, so that a
// consumer crawling on the room left is not reported blocked and free again
// at every message. Safe for concurrent use.
type BlockWatch struct {
	// Logger receives the changes. Nil: slog.Default().
	Logger *slog.Logger
	// Prefix starts every message ("ordergen/kafka: ").
	Prefix string
	// What names what is blocked ("the consumer", "the queue") and Room
	// its room ("MaxInFlight", "its prefetch"), in the messages.
	What, Room string
	// Attrs are added to every message (the queue's name, say).
	Attrs []any

	// mu guards was and half.
	mu   sync.Mutex
	was  Blocked
	half bool // parked messages hold half of the room, as last logged
}

// Look records the state now: unsettled of the room's max messages are
// taken and not settled, and parked counts those parked in memory (asked
// only when they could hold half of the room: parked messages are
// unsettled). It returns why taking stops, and logs the change since the
// last look. The state is recorded (Now) before anything is logged, and
// record, when set, is told it then, under the watch's lock, so that
// looks made at once record in the order they decided: whoever reads a
// log line and then the state sees the state the line speaks of.
func (w *BlockWatch) Look(unsettled, max int, parked func() int, record func(Blocked)) Blocked {
	full := unsettled >= max
	np := 0
	if max > 0 && 2*unsettled >= max {
		np = parked()
	}
	half := max > 0 && 2*np >= max
	why := NotBlocked
	w.mu.Lock()
	was, wasHalf := w.was, w.half
	switch {
	case half && (full || was == BlockedParked):
		why = BlockedParked
	case full:
		why = BlockedInFlight
	}
	w.was, w.half = why, half
	if record != nil {
		record(why)
	}
	w.mu.Unlock()
	if why == was && half == wasHalf {
		return why
	}
	log := w.Logger
	if log == nil {
		log = slog.Default()
	}
	attrs := append([]any{"parked", np, "unsettled", unsettled, "room", max}, w.Attrs...)
	switch {
	case why == was:
	case why == BlockedParked:
		log.Warn(w.Prefix+w.What+" takes no more messages, for any key: messages parked in memory hold "+w.Room+"; replay or discard the parked keys (the dispatcher's ParkedKeys), or give the dispatcher a park store", attrs...)
	case was == BlockedParked:
		log.Info(w.Prefix+w.What+" takes messages again: parked messages no longer hold "+w.Room, append(attrs, "now", why.String())...)
	case why == BlockedInFlight:
		log.Debug(w.Prefix+w.What+" waits for room: "+w.Room+" is full", attrs...)
	case why != was:
		log.Debug(w.Prefix+w.What+" has room again", attrs...)
	}
	if half && !wasHalf && why != BlockedParked {
		log.Warn(w.Prefix+"messages parked in memory hold half of "+w.Room+" or more; when they hold all of it "+w.What+" takes nothing, for any key: replay or discard the parked keys, or give the dispatcher a park store", attrs...)
	}
	return why
}

// Now returns the state of the last look.
func (w *BlockWatch) Now() Blocked {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.was
}

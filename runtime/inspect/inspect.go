package inspect

import (
	"context"
	"errors"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// ErrNotFound is wrapped by the errors of an Inspector asked about a
// subscriber it does not have.
var ErrNotFound = errors.New("inspect: not found")

// Inspector is an operator's view of one entity: its subscribers' counters,
// backlog, stuck and parked keys, and the replay and discard of a parked key.
// Keys are text (durable.EncodeKey), events their codec's encoding. It is
// safe for concurrent use. Engines implements it over running engines; a
// durable store's view (ordergen-parked serve) over a store alone, where
// Replay and Discard leave requests for the running service.
type Inspector interface {
	// Entity names the entity ("Account").
	Entity() string
	// Subscribers returns the entity's subscribers in subscription order,
	// with what the inspector knows of each now.
	Subscribers(ctx context.Context, q Query) ([]Subscriber, error)
	// ParkedKeys returns up to limit of subscriber's parked keys, oldest park
	// first, starting at offset in that order, and how many there are in
	// all. A limit below 1 means no limit.
	ParkedKeys(ctx context.Context, subscriber string, offset, limit int) (keys []ParkedKey, total int, err error)
	// ParkedEvents returns, in order, up to limit of key's parked events in
	// subscriber whose Seq is above after: the park store's paged Read. The
	// next page starts after the last Seq returned.
	ParkedEvents(ctx context.Context, subscriber, key string, after uint64, limit int) ([]ParkedEvent, error)
	// Key returns what subscriber knows of key: its park and what its guards
	// store.
	Key(ctx context.Context, subscriber, key string) (Key, error)
	// Replay re-runs key's parked events in subscriber, in order (see
	// runtime.Engine.Replay), or asks the running service to.
	Replay(ctx context.Context, subscriber, key string) (Result, error)
	// Discard removes key's parked events in subscriber (see
	// runtime.Engine.Discard), or asks the running service to.
	Discard(ctx context.Context, subscriber, key string) (Result, error)
}

// Requester is implemented by an Inspector whose Replay and Discard leave
// requests for a running service to carry out (a durable store's view):
// Requests lists the latest, newest first, with what became of them.
type Requester interface {
	Requests(ctx context.Context, limit int) ([]Request, error)
}

// Query says how much Subscribers reports of each subscriber's backlog.
type Query struct {
	// Top is how many of the keys with the largest backlog to report.
	Top int
	// StuckAfter is the age of the oldest pending event past which a key is
	// stuck (runtime.Engine.Stuck); zero reports none.
	StuckAfter time.Duration
	// Oldest asks for the age of each subscriber's oldest pending event
	// (runtime.Engine.OldestAge), which visits every key with pending
	// events.
	Oldest bool
}

// Subscriber is one subscriber of an entity as an Inspector sees it now.
type Subscriber struct {
	// Name is the subscriber's name ("Account", "Account/audit").
	Name string
	// Live is true when the subscriber runs in this process, and Stats,
	// Limits, Backlog and Stuck are its own; a store's view has only parks.
	Live bool
	// Stats are its counters and gauges (when Live).
	Stats runtime.Stats
	// Limits are the limits it runs with (when Live).
	Limits Limits
	// Backlog is up to Query.Top of its keys with the largest backlog,
	// largest first.
	Backlog []KeyBacklog
	// Stuck are its keys whose oldest pending event is older than
	// Query.StuckAfter, oldest first.
	Stuck []KeyBacklog
	// OldestAge is the age of its oldest pending event, when Query.Oldest
	// asked for it (and Live).
	OldestAge time.Duration
	// ParkedKeys and ParkedEvents count its parks (a store's view counts
	// them from the store).
	ParkedKeys, ParkedEvents int
}

// Limits are the limits and policies a subscriber runs with.
type Limits struct {
	// MaxActive is the number of keys handled at once.
	MaxActive int
	// PerKey and Total bound the pending events; WhenFull is the policy
	// when they are reached (a runtime.FullPolicy's name).
	PerKey, Total int
	WhenFull      string
	// OnExhausted is what happens to an event that failed for good (a
	// runtime.ExhaustedPolicy's name).
	OnExhausted string
	// ParksInMemory is true when parked events live in the process's
	// memory (and count against the backlog), not in a durable store.
	ParksInMemory bool
}

// KeyBacklog is one key's backlog.
type KeyBacklog struct {
	// Key is the key, as text.
	Key string
	// Pending is its number of pending events.
	Pending int
	// OldestAge is the age of its oldest pending event.
	OldestAge time.Duration
}

// ParkedKey is one parked key.
type ParkedKey struct {
	// Key is the key, as text.
	Key string
	// Reason says why it was parked.
	Reason string
	// Events is the number of events in its park.
	Events int
	// Since is when it was parked.
	Since time.Time
	// Attempts is how many times the event that parked it was tried, and
	// Error that event's last failure ("" when the park's first events
	// carry none, as when a resequencer bound parked the key).
	Attempts int
	Error    string
}

// ParkedEvent is one parked event.
type ParkedEvent struct {
	// Seq identifies it within its key's park; the next page starts after
	// the last one read.
	Seq uint64
	// Name is the event's type name (the codec's).
	Name string
	// Data is its encoding: JSON for the codecs ordergen generates.
	Data []byte
	// Error is the failure that parked the key, on the event that failed.
	Error string
	// Attempts is how many times it was tried.
	Attempts int
	// At is when it was parked.
	At time.Time
}

// Key is what a subscriber knows of one key.
type Key struct {
	// Key is the key, as text.
	Key string
	// Parked tells whether it is parked; Reason, Events and Since describe
	// the park.
	Parked bool
	Reason string
	Events int
	Since  time.Time
	// HasVersion tells whether the subscriber keeps versions; Version is
	// the last one applied (0: none yet).
	HasVersion bool
	Version    uint64
	// State is its current state as the state guard stores it ("": none
	// yet, or no state guard).
	State string
	// Live is true when the subscriber runs in this process, and Pending
	// and OldestAge are its own: the key's events without an outcome and
	// the age of the oldest (a store's view has neither).
	Live      bool
	Pending   int
	OldestAge time.Duration
	// Running is the attempt of the key's handler in progress, when Live
	// and one runs; nil otherwise.
	Running *Running
}

// Running is an attempt of a key's handler in progress (see
// runtime.KeyStatus).
type Running struct {
	// Known is false when the engine gives its attempts no context of
	// their own (no Timeout, no OnOutcome): then only that the key runs
	// is known, and the rest is empty.
	Known bool
	// Name and Data are its event's name and encoding (of a batch, its
	// first event's; Batch says how many it covers); Version is the
	// event's version when it has one (HasVersion).
	Name       string
	Data       []byte
	HasVersion bool
	Version    uint64
	Batch      int
	// Attempt is its number, from 1; Started when it began.
	Attempt int
	Started time.Time
	// Ended says why its context ended while its handler has not returned
	// ("": it did not): a deadline, or an operator's cause.
	Ended string
}

// KeyOperator is implemented by an Inspector that acts on a key that runs:
// Engines, in the process (runtime.Engine.CancelAttempt and ParkNow), and a
// durable store's view (ordergen-parked serve), which leaves requests for
// the running service, as its Replay and Discard do.
type KeyOperator interface {
	// CancelAttempt ends the context of the attempt of key's handler in
	// progress in subscriber with cause; the retry policy, then the park,
	// follow.
	CancelAttempt(ctx context.Context, subscriber, key string, cause error) (Result, error)
	// ParkNow parks key now with its pending events in subscriber under
	// reason, withdrawing a handler of key in an attempt.
	ParkNow(ctx context.Context, subscriber, key, reason string) (Result, error)
}

// Result says what Replay, Discard, CancelAttempt or ParkNow did.
type Result struct {
	// Done is true when the action was carried out; false when it was left
	// as a request for the running service (Request), or is still running.
	Done bool
	// Events is how many events a discard removed, or ParkNow parked.
	Events int
	// Request identifies the request left for the running service.
	Request int64
	// Message says what happened, for people.
	Message string
}

// Request is an operator request left for a running service, and what
// became of it.
type Request struct {
	// ID identifies it.
	ID int64
	// Action is "replay" or "discard".
	Action string
	// Subscriber and Key are what it is about.
	Subscriber, Key string
	// Requested, Claimed and Done are when it was made, taken up by a
	// service and finished (zero: not yet).
	Requested, Claimed, Done time.Time
	// Result says how it went once Done.
	Result string
}

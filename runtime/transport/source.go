package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ordergen/ordergen/runtime"
)

// ErrOwnershipEnded is returned by Source.Take and Source.Offer for an
// ownership that ended: its messages belong to another owner now. A
// handler whose attempt was cancelled because the ownership of its
// message ended finds it in context.Cause of its context (see End).
var ErrOwnershipEnded = errors.New("ordergen: ownership ended")

// ErrLeaseLost wraps ErrOwnershipEnded for an ownership that ended because
// the broker's lease on a message lapsed or was taken back (SQS's
// visibility, Pub/Sub's ack deadline): the broker may already have given
// the message to another consumer. A handler cancelled for it finds it in
// context.Cause of its context.
var ErrLeaseLost = fmt.Errorf("%w: the broker's lease on a message lapsed or was taken back", ErrOwnershipEnded)

// Settlement is what became of a message a Source took, as its transport
// must treat it.
type Settlement uint8

const (
	// Finished: every subscriber that accepted the message's event reached
	// an outcome that lets the broker forget it: handled, skipped,
	// dead-lettered, dropped by a policy, discarded from the park,
	// conflated, or parked in a park store. Kafka commits past it; a queue
	// acknowledges it.
	Finished Settlement = iota + 1
	// Unfinished: the message does not finish here and the broker must
	// deliver it again (Kafka leaves it uncommitted; a queue returns it): a
	// subscriber withdrew its event, its ownership ended first, or the
	// transport gave it up.
	Unfinished
)

var settlementNames = [...]string{Finished: "finished", Unfinished: "unfinished"}

// String returns the settlement's name.
func (s Settlement) String() string {
	if int(s) < len(settlementNames) && settlementNames[s] != "" {
		return settlementNames[s]
	}
	return fmt.Sprintf("Settlement(%d)", s)
}

// Source is the consuming half of the transport contract: it feeds the
// messages a transport takes from its broker to a Target and settles each
// one once every subscriber that accepted it reached its final outcome. M is
// the transport's handle of a message (a Kafka partition and offset, a
// queue's receipt), given back to its settle function.
//
// Messages are taken under an Ownership: one unbroken holding of where
// they come from (a Kafka partition from assignment to revocation or loss,
// a lease). When the ownership ends (End), the events of its messages that
// have not started are withdrawn from the target and never start, running
// attempts are cancelled when End's context ends, events parked in memory
// leave their park, and every message of the ownership not finished by
// then is settled Unfinished: its next owner delivers it again. Outcomes
// that arrive later are ignored.
//
// A parked event finishes its message when its subscribers park in a
// store (the park keeps it). When they park in memory, the message stays
// unsettled: the park dies with the process. Replaying or discarding the
// park reports the event's final outcome with its tag, which then settles
// it, so a transport that stopped taking messages for lack of room resumes.
//
// The settle function is called exactly once per message taken, with the
// Source's lock held, by whichever goroutine holds it (any method of the
// Source may apply outcomes told meanwhile: outcomes.go): it must be fast,
// must not block and must not call the Source, and no lock it takes may be
// held while calling the Source.
type Source[K comparable, E any, M any] struct {
	target        Target[E]
	settle        func(M, Settlement)
	parksInMemory bool
	subscribers   atomic.Int64 // subscribers checked; more means a new one to check
	links         []Linker     // the subscribers' tracers (trace.go)

	// mu guards the fields below, every field of the slots and of the
	// ownerships, and is held while settle runs. It is taken with lock and
	// let go with unlock, which apply the outcomes told meanwhile.
	mu    sync.Mutex
	told  outcomeStack // outcomes told while mu was held (outcomes.go)
	slots []sourceSlot[M]
	free  []int32
	live  int
}

// sourceSlot is one message taken and not settled. Its tag (generation and
// index) travels with the event through the lanes and comes back with each
// subscriber's outcome.
type sourceSlot[M any] struct {
	msg       M
	owner     *Ownership
	gen       uint32
	used      bool
	remaining int32 // outcomes still expected (plus handBias while handing)
	accepted  int   // subscribers whose engines accepted the event
	handing   bool  // handBias counted: not handed to every subscriber yet
	withdrawn bool  // a subscriber withdrew the event: Unfinished
	parked    bool  // parked in memory, waiting for a replay or a discard
}

// handBias is added to a slot's remaining outcomes while its event is being
// handed to the subscribers, so that outcomes reported before the hand-over
// ends never settle it early.
const handBias = 1 << 30

// NewSource returns a source that feeds target and calls settle once for
// each message it took. It refuses, with an error wrapping
// ErrInvalidConfig, a target whose subscribers it cannot settle messages
// for (see CheckSubscriptions); Offer checks a subscriber added later. The
// subscribers' Config.OnOutcome must be the source's OnOutcome.
func NewSource[K comparable, E any, M any](target Target[E], settle func(M, Settlement)) (*Source[K, E, M], error) {
	if target == nil || settle == nil {
		return nil, fmt.Errorf("%w: a source needs a target and a settle function", runtime.ErrInvalidConfig)
	}
	subs := target.Subscriptions()
	inMemory, err := CheckSubscriptions(subs)
	if err != nil {
		return nil, err
	}
	s := &Source[K, E, M]{target: target, settle: settle, parksInMemory: inMemory, links: linkersOf(subs)}
	s.subscribers.Store(int64(len(subs)))
	return s, nil
}

// ParksInMemory reports whether the target's subscribers park in memory,
// so that a parked message stays unsettled until its park is resolved.
func (s *Source[K, E, M]) ParksInMemory() bool { return s.parksInMemory }

// Own starts an ownership.
func (s *Source[K, E, M]) Own() *Ownership { return &Ownership{} }

// Take records msg, taken from the broker under o, and returns its tag. The
// message is settled exactly once from then on: by its events' outcomes
// after Offer, by Resolve, or by End. It fails with ErrOwnershipEnded once
// o ended.
func (s *Source[K, E, M]) Take(o *Ownership, msg M) (uint64, error) {
	s.lock()
	defer s.unlock()
	if o.ended {
		return 0, ErrOwnershipEnded
	}
	var i int32
	if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.slots = append(s.slots, sourceSlot[M]{})
		i = int32(len(s.slots) - 1)
	}
	sl := &s.slots[i]
	gen := sl.gen + 1
	*sl = sourceSlot[M]{msg: msg, owner: o, gen: gen, used: true, remaining: handBias, handing: true}
	o.live++
	s.live++
	return uint64(gen)<<32 | uint64(i+1), nil
}

// Offer hands the event of the message tagged tag to the subscribers that
// have not accepted it yet. It returns nil once every subscriber accepted
// it, and otherwise the refusal of the first that did not take it (an error
// wrapping ErrBacklogFull, say): the transport offers it again later, or
// gives it up with Resolve. Pass a ctx that is already done (DoneContext),
// so that a full backlog refuses at once rather than wait for room: End
// waits for the Offer calls in progress on its ownerships. It fails with
// ErrOwnershipEnded when the message's ownership ended, before or during
// the call (End then withdraws the event).
func (s *Source[K, E, M]) Offer(ctx context.Context, tag uint64, event E) error {
	s.lock()
	sl := s.get(tag)
	switch {
	case sl == nil || sl.owner.ended:
		s.unlock()
		return ErrOwnershipEnded
	case !sl.handing:
		s.unlock()
		return fmt.Errorf("%w: message %#x was already handed over", runtime.ErrInvalidConfig, tag)
	}
	o := sl.owner
	o.offering++
	from := sl.accepted
	s.unlock()

	n, err := s.target.SubmitTagged(ctx, event, tag, from)
	if n > 0 && errors.Is(err, runtime.ErrInvalidEvent) {
		// Subscribers accepted an event that a later one calls invalid: the
		// transport must not set the message aside as bad (their outcomes
		// settle it), so this is the target's fault, not the message's.
		err = fmt.Errorf("%w: %d subscriber(s) took an event that the next refused: %v", runtime.ErrInvalidConfig, n, err)
	}

	s.lock()
	// End waits for this call before it looks for the ownership's events,
	// so the slot is still this message's (but the arena may have moved).
	sl = s.get(tag)
	sl.remaining += int32(n - sl.accepted)
	sl.accepted = n
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %w", runtime.ErrInvalidConfig, runtime.ErrNoSubscribers)
	}
	if err == nil {
		sl.handing = false
		sl.remaining -= handBias
		if sl.remaining == 0 {
			s.finish(tag, sl, Finished)
		}
	}
	o.offering--
	if o.offering == 0 && o.idle != nil {
		close(o.idle)
		o.idle = nil
	}
	ended := o.ended
	s.unlock()
	if ended {
		return ErrOwnershipEnded // End withdraws the event if it was taken
	}
	if err == nil && int64(n) > s.subscribers.Load() {
		err = s.recheck()
	}
	return err
}

// recheck checks the subscribers again after one was added.
func (s *Source[K, E, M]) recheck() error {
	subs := s.target.Subscriptions()
	inMemory, err := CheckSubscriptions(subs)
	if err == nil && inMemory != s.parksInMemory {
		err = fmt.Errorf("%w: a subscriber added later parks differently from those the source started with", runtime.ErrInvalidConfig)
	}
	if err != nil {
		return fmt.Errorf("a subscriber added while the source runs: %w", err)
	}
	s.subscribers.Store(int64(len(subs)))
	return nil
}

// Resolve settles the message tagged tag that the transport handled
// itself (a bad message it wrote to a dead-letter destination, say) and
// that no subscriber accepted. A message that is settled already (its
// ownership ended) is left alone.
func (s *Source[K, E, M]) Resolve(tag uint64, st Settlement) error {
	if st != Finished && st != Unfinished {
		return fmt.Errorf("%w: settlement %v", runtime.ErrInvalidConfig, st)
	}
	s.lock()
	defer s.unlock()
	sl := s.get(tag)
	if sl == nil {
		return nil
	}
	if sl.accepted > 0 {
		return fmt.Errorf("%w: message %#x was accepted by %d subscriber(s): their outcomes settle it", runtime.ErrInvalidConfig, tag, sl.accepted)
	}
	s.finish(tag, sl, st)
	return nil
}

// OnOutcome is told the outcome of each event the source offered: give it
// to every subscriber of the target (Config.OnOutcome; the OnOutcome field
// of a generated config). Outcomes with tag 0 (events published in
// process), and outcomes of messages already settled, are ignored.
//
// An outcome told while the source's lock is taken is left to its holder
// (outcomes.go): OnOutcome does not wait for the lock.
func (s *Source[K, E, M]) OnOutcome(_ K, tag uint64, o runtime.Outcome) {
	if tag == 0 {
		return
	}
	if s.tryLock() { // the outcomes told before this one first
		s.apply(tag, o)
		s.unlock()
		return
	}
	s.told.push(&toldOutcome{tag: tag, o: o})
	if s.mu.TryLock() { // the holder let go meanwhile
		s.unlock() // applies it
	}
}

// apply applies outcome o of the event of the message tagged tag; s.mu is
// held.
func (s *Source[K, E, M]) apply(tag uint64, o runtime.Outcome) {
	sl := s.get(tag)
	if sl == nil {
		return
	}
	switch o {
	case runtime.Parked:
		if s.parksInMemory {
			// Not final: the park reports again when it is resolved.
			if !sl.parked {
				sl.parked = true
				sl.owner.parked++
			}
			return
		}
	case runtime.Withdrawn:
		sl.withdrawn = true
	}
	sl.remaining--
	if sl.remaining == 0 {
		st := Finished
		if sl.withdrawn {
			st = Unfinished
		}
		s.finish(tag, sl, st)
	}
}

// Unsettled returns the number of messages taken and not settled yet.
func (s *Source[K, E, M]) Unsettled() int {
	s.lock()
	defer s.unlock()
	return s.live
}

// get returns the live slot of tag, or nil for a tag not (or no longer) in
// use; s.mu is held.
func (s *Source[K, E, M]) get(tag uint64) *sourceSlot[M] {
	i := int64(tag&0xffffffff) - 1
	if i < 0 || i >= int64(len(s.slots)) {
		return nil
	}
	sl := &s.slots[i]
	if !sl.used || sl.gen != uint32(tag>>32) {
		return nil
	}
	return sl
}

// finish settles sl and frees it; s.mu is held.
func (s *Source[K, E, M]) finish(tag uint64, sl *sourceSlot[M], st Settlement) {
	o := sl.owner
	o.live--
	if sl.parked {
		o.parked--
	}
	s.live--
	msg := sl.msg
	gen := sl.gen
	*sl = sourceSlot[M]{gen: gen}
	s.free = append(s.free, int32(tag&0xffffffff)-1)
	s.unlink(tag)
	s.settle(msg, st)
}

// DoneContext returns a context that is already done: a submission with
// it refuses at once instead of waiting for room, and a withdrawal with it
// takes back what has not started and cancels the rest at once.
func DoneContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

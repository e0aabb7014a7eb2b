package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/internal/notify"
)

// StreamIntake is the intake of a consumer whose broker delivers each unit
// of order in order, to one consumer at a time: a Kafka partition, a
// RabbitMQ queue with a single active consumer. Each holding of a unit is a
// Stream (one Ownership); its messages are taken and offered to the lanes
// in the order they came, and:
//
//   - a message the lanes refuse for lack of room waits, with every later
//     message of its stream, in the stream's stash, and is offered again
//     as messages settle, or after a delay when none settles (the
//     stream's Wake hook tells its receiver to call Retry; Pause and
//     Resume tell the transport to stop and restart fetching it): a full
//     stream holds up only itself;
//   - a bad message (Message.Bad, or refused by the lanes as invalid) goes
//     to DeadLetter, in its place, and the stream goes on;
//   - each message is settled once (StreamConfig.Settle) when every
//     subscriber reached its final outcome, or Unfinished when its
//     stream's ownership ends first (End).
//
// Messages after a stream's ownership ended are not taken: the broker
// delivers them to the unit's next owner. Room over every stream
// (MaxInFlight) is the transport's to bound, with Unsettled and WaitRoom;
// a broker that bounds it itself (RabbitMQ's prefetch) needs neither.
//
// Locks: the Source's lock comes first, then the intake's, then the
// transport's own. Settle and the Wake hooks run under the first two and
// may take the transport's locks; the other hooks run under none. The
// transport must not call the intake while it holds a lock of its own that
// a hook takes.
type StreamIntake[K comparable, E any, M any] struct {
	cfg    StreamConfig[E, M]
	nowait context.Context
	src    atomic.Pointer[Source[K, E, streamMsg[K, E, M]]]
	room   notify.Notifier // settlements and parks in memory, for WaitRoom
	// parks counts the parks in memory told so far: a look taken before
	// WaitRoom registers must not miss one (see Parks).
	parks atomic.Uint64

	submitted, finished, unfinished atomic.Uint64
	stashing                        atomic.Int32 // streams waiting for room: a settlement wakes them

	// mu guards the fields below and the fields of the streams that say
	// so.
	mu           sync.Mutex
	streams      map[*Stream[K, E, M]]struct{}
	deadLettered uint64
	deadErrors   uint64
	deadBy       map[Reason]uint64
}

// StreamConfig configures a StreamIntake.
type StreamConfig[E any, M any] struct {
	// System names the broker in logs and errors ("kafka", "rabbitmq").
	System string
	// Settle acknowledges or commits past (Finished) a message, or leaves
	// it to the broker to deliver again (Unfinished). It is called once
	// for every message taken, under the intake's locks: it must be fast
	// and must not block. Required.
	Settle func(M, Settlement)
	// DeadLetter writes a bad message to the dead-letter destination.
	// Required.
	DeadLetter DeadLetterFunc[E, M]
	// Admit, when set, is asked about each message before it is taken:
	// AdmitTake it, AdmitSkip it (the transport knows it is finished: a
	// redelivery of one it took, a record the previous owner listed as
	// finished) or AdmitHold it and the rest of the stream, which wait as
	// for room (Kafka's commit metadata bound). A held stream is asked
	// again at its next Retry.
	Admit func(M) Admission
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
}

// Admission is StreamConfig.Admit's answer about a message.
type Admission uint8

const (
	// AdmitTake: take the message.
	AdmitTake Admission = iota
	// AdmitSkip: pass over it: it is finished already.
	AdmitSkip
	// AdmitHold: do not take it yet; it and the stream's later messages
	// wait.
	AdmitHold
)

// StreamHooks are how a StreamIntake tells a stream's transport what to do.
// Every hook is optional.
type StreamHooks struct {
	// Pause is called when the stream's messages start waiting (held:
	// because Admit held one; otherwise for room in the lanes), and again
	// when the reason changes: the transport may stop fetching the unit.
	Pause func(held bool)
	// Resume is called when the stream's waiting messages all went on.
	Resume func()
	// Wake is called, with the intake's locks held, when the stream's
	// receiver should call Retry: as the stream starts waiting, when a
	// message settled while it waits, when one of its messages parked in
	// memory (which changes what blocks it), and, after a Retry refused
	// again, once more after a delay (10 ms, doubling up to a second) for
	// room that no settlement reports. It must be fast, must not block and
	// must not call the intake.
	Wake func()
	// Settled is called, as Settle is, after each of the stream's
	// messages settled: its room at the broker changes. Same rules as
	// Wake.
	Settled func()
}

// streamMsg is the source's handle of a message: its stream and the
// transport's handle.
type streamMsg[K comparable, E any, M any] struct {
	s *Stream[K, E, M]
	h M
}

// Stream is one holding of a unit of order by a StreamIntake: one
// Ownership, from Open to End.
type Stream[K comparable, E any, M any] struct {
	in    *StreamIntake[K, E, M]
	name  string
	own   *Ownership
	hooks StreamHooks

	// Guarded by in.mu.
	stash   []Message[E, M] // taken or not, waiting for room, in order
	waiting bool            // messages wait (in stash, or being retried)
	ended   bool
	writes  int           // dead-letter writes in flight
	written chan struct{} // closed when writes drops to 0, for End
	// retry wakes the receiver of a stream whose Retry was refused again,
	// for room that no settlement of the intake reports (events of other
	// publishers finishing); retryAfter is its delay, doubled each time
	// from firstRetryAfter up to maxRetryAfter while the stream waits.
	retry      *time.Timer
	retryAfter time.Duration
}

// The delays of a refused stream's retries that no settlement wakes.
const (
	firstRetryAfter = 10 * time.Millisecond
	maxRetryAfter   = time.Second
)

// NewStreamIntake returns an intake for cfg; Start gives it its target.
func NewStreamIntake[K comparable, E any, M any](cfg StreamConfig[E, M]) (*StreamIntake[K, E, M], error) {
	if cfg.Settle == nil || cfg.DeadLetter == nil {
		return nil, fmt.Errorf("%w: a stream intake needs Settle and DeadLetter", runtime.ErrInvalidConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &StreamIntake[K, E, M]{cfg: cfg, nowait: DoneContext(), streams: map[*Stream[K, E, M]]struct{}{}, deadBy: map[Reason]uint64{}}, nil
}

// Start makes the intake feed target. It refuses, with an error wrapping
// runtime.ErrInvalidConfig, a target whose subscribers it cannot settle
// messages for (see CheckSubscriptions). Call it once, before Open.
func (in *StreamIntake[K, E, M]) Start(target Target[E]) error {
	src, err := NewSource[K](target, in.settled)
	if err != nil {
		return err
	}
	in.src.Store(src)
	return nil
}

// Open starts a holding of a unit of order, named name in logs. Call it
// after Start.
func (in *StreamIntake[K, E, M]) Open(name string, hooks StreamHooks) *Stream[K, E, M] {
	s := &Stream[K, E, M]{in: in, name: name, own: in.src.Load().Own(), hooks: hooks}
	in.mu.Lock()
	in.streams[s] = struct{}{}
	in.mu.Unlock()
	return s
}

// OnOutcome is told the outcome of each event the intake offered: give it
// to every subscriber of the target (through the consumer's OnOutcome).
// Outcomes before Start are ignored.
func (in *StreamIntake[K, E, M]) OnOutcome(key K, tag uint64, o runtime.Outcome) {
	src := in.src.Load()
	if src == nil {
		return
	}
	src.OnOutcome(key, tag, o)
	if o == runtime.Parked && src.ParksInMemory() {
		// The park keeps its room and settles nothing, but what blocks the
		// intake may now be parks: the waiters look again. Counted before
		// the broadcast, so that a waiter that registers after it sees
		// the count moved (WaitRoom).
		in.parks.Add(1)
		in.room.BroadcastIfWaiting()
		in.mu.Lock()
		for s := range in.streams {
			if s.hooks.Wake != nil {
				s.hooks.Wake()
			}
		}
		in.mu.Unlock()
	}
}

// settled is the source's verdict on a message; the source's lock is held.
func (in *StreamIntake[K, E, M]) settled(m streamMsg[K, E, M], st Settlement) {
	if st == Finished {
		in.finished.Add(1)
	} else {
		in.unfinished.Add(1)
	}
	in.cfg.Settle(m.h, st)
	if m.s.hooks.Settled != nil {
		m.s.hooks.Settled()
	}
	if in.stashing.Load() > 0 {
		// Room in the lanes is shared: any settlement may let any waiting
		// stream go on.
		in.mu.Lock()
		for s := range in.streams {
			if s.waiting && s.hooks.Wake != nil {
				s.hooks.Wake()
			}
		}
		in.mu.Unlock()
	}
	in.room.BroadcastIfWaiting()
}

// Receive takes ms, which the stream's unit delivered in this order, and
// offers their events to the lanes in order (after the messages waiting
// from before); what the lanes refuse for lack of room waits, with the
// rest, for Retry. Call Receive and Retry of one stream from one goroutine
// at a time. The stream does not keep ms (what waits is copied): the
// caller may reuse it once Receive returns. Messages after its ownership ended
// are dropped: the broker delivers them to the unit's next owner. It
// returns an error only when the target failed for good (the transport
// stops).
func (s *Stream[K, E, M]) Receive(ms []Message[E, M]) error {
	in := s.in
	in.mu.Lock()
	switch {
	case s.ended:
		in.mu.Unlock()
		return nil
	case s.waiting:
		s.stash = append(s.stash, ms...)
		in.mu.Unlock()
		return nil
	}
	in.mu.Unlock()
	return s.feed(ms)
}

// Retry offers the stream's waiting messages again, in order, until the
// lanes refuse one (or Admit holds one). Its receiver calls it when Wake
// says so.
func (s *Stream[K, E, M]) Retry() error {
	in := s.in
	in.mu.Lock()
	ms := s.stash
	s.stash = nil
	waiting := s.waiting && !s.ended
	in.mu.Unlock()
	if !waiting {
		return nil
	}
	return s.feed(ms)
}

// Waiting reports whether messages of the stream wait for room (or for
// Admit).
func (s *Stream[K, E, M]) Waiting() bool {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return s.waiting
}

// Unsettled returns the number of the stream's messages taken and not
// settled, and how many of them are parked in memory.
func (s *Stream[K, E, M]) Unsettled() (unsettled, parked int) {
	return s.in.src.Load().UnsettledOf(s.own)
}

// feed takes and offers ms in order: a receiver's (Receive), or the
// stream's stash (Retry, while it waits).
func (s *Stream[K, E, M]) feed(ms []Message[E, M]) error {
	in := s.in
	src := in.src.Load()
	submitted := uint64(0)
	defer func() { in.submitted.Add(submitted) }()
	for i := range ms {
		m := &ms[i]
		if m.tag == 0 {
			if in.cfg.Admit != nil {
				switch in.cfg.Admit(m.Handle) {
				case AdmitSkip:
					continue
				case AdmitHold:
					s.hold(ms[i:], true)
					return nil
				}
			}
			tag, err := src.Take(s.own, streamMsg[K, E, M]{s, m.Handle})
			if err != nil {
				return nil // the ownership ended: the rest goes to the next owner
			}
			m.tag = tag
			src.Link(tag, m.Trace)
		}
		if m.Bad != nil {
			s.deadLetter(m)
			continue
		}
		err := src.Offer(in.nowait, m.tag, m.Event)
		switch {
		case err == nil:
			submitted++
			m.Raw = nil // a stash may keep the message: not the broker's buffers
		case errors.Is(err, ErrOwnershipEnded):
			return nil
		case errors.Is(err, runtime.ErrBacklogFull), errors.Is(err, context.Canceled):
			s.hold(ms[i:], false)
			return nil
		case errors.Is(err, runtime.ErrInvalidEvent):
			m.Bad = &Bad{ReasonInvalidEvent, err}
			s.deadLetter(m)
		default:
			return fmt.Errorf("%s: offer a message of %s: %w", in.cfg.System, s.name, err)
		}
	}
	in.mu.Lock()
	resumed := s.waiting && !s.ended && len(s.stash) == 0
	if resumed {
		s.stopWaiting()
	}
	in.mu.Unlock()
	if resumed && s.hooks.Resume != nil {
		s.hooks.Resume()
	}
	return nil
}

// hold keeps rest waiting. A stream that waits already is being retried:
// rest is its stash's own, kept as it is, and a retry refused again is
// woken by the next settlement or by armRetry's timer. Otherwise rest is
// a receiver's, whose slice is the receiver's again once Receive returns:
// it is copied, and the receiver is woken once, for a settlement that came
// between the refusal and the wait and did not see the stream waiting.
// (Waking a retry refused again at once had the receiver retry in a loop
// that never gave it a turn to receive: a partition held for its commit
// metadata made the Kafka feeder spin and poll nothing.)
func (s *Stream[K, E, M]) hold(rest []Message[E, M], held bool) {
	in := s.in
	in.mu.Lock()
	if s.ended {
		in.mu.Unlock()
		return
	}
	retried := s.waiting
	if retried {
		s.stash = slices.Clip(rest)
		s.armRetry()
	} else {
		s.stash = slices.Clone(rest)
		s.waiting = true
		in.stashing.Add(1)
	}
	in.mu.Unlock()
	if s.hooks.Pause != nil {
		s.hooks.Pause(held)
	}
	if !retried && s.hooks.Wake != nil {
		in.mu.Lock()
		s.hooks.Wake()
		in.mu.Unlock()
	}
}

// stopWaiting clears s.waiting; in.mu is held.
func (s *Stream[K, E, M]) stopWaiting() {
	if s.waiting {
		s.waiting = false
		s.in.stashing.Add(-1)
	}
	if s.retry != nil {
		s.retry.Stop()
		s.retry = nil
	}
	s.retryAfter = 0
}

// armRetry has the receiver of s, whose Retry was refused again, woken
// after a delay unless a wake is due already; in.mu is held. Settlements
// wake it sooner; the delay doubles while nothing lets it go on.
func (s *Stream[K, E, M]) armRetry() {
	if s.retry != nil || s.hooks.Wake == nil {
		return
	}
	s.retryAfter = min(max(2*s.retryAfter, firstRetryAfter), maxRetryAfter)
	in := s.in
	var t *time.Timer
	t = time.AfterFunc(s.retryAfter, func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if s.retry != t { // stopped (the stream no longer waits), or another timer's
			return
		}
		s.retry = nil
		s.hooks.Wake()
	})
	s.retry = t
}

// deadLetter hands m to DeadLetter and settles it on the answer.
func (s *Stream[K, E, M]) deadLetter(m *Message[E, M]) {
	in := s.in
	in.mu.Lock()
	s.writes++
	in.mu.Unlock()
	tag, bad, key, id := m.tag, m.Bad, m.Key, m.ID
	in.cfg.DeadLetter(*m, func(err error) {
		st := Finished
		in.mu.Lock()
		if err != nil {
			st = Unfinished
			in.deadErrors++
		} else {
			in.deadLettered++
			in.deadBy[bad.Reason]++
		}
		in.mu.Unlock()
		if err != nil {
			in.cfg.Logger.Error("ordergen/"+in.cfg.System+": dead-letter write failed; the message stays unfinished and comes again",
				"stream", s.name, "key", key, "id", id, "reason", string(bad.Reason), "error", err)
		} else {
			in.cfg.Logger.Warn("ordergen/"+in.cfg.System+": message dead-lettered",
				"stream", s.name, "key", key, "id", id, "reason", string(bad.Reason), "error", bad.Err)
		}
		// Settled before End may look: it waits for the writes.
		_ = in.src.Load().Resolve(tag, st)
		in.mu.Lock()
		s.writes--
		if s.writes == 0 && s.written != nil {
			close(s.written)
			s.written = nil
		}
		in.mu.Unlock()
	})
}

// End ends the holdings of streams: their waiting messages are dropped
// (the broker delivers them again), their dead-letter writes in flight get
// until ctx ends to finish, then their ownerships end as Source.End says
// (what has not started is withdrawn, the running handlers get until ctx
// ends, and every message not finished is settled Unfinished). It returns
// how many messages it settled so, and ctx's error when it ended first.
func (in *StreamIntake[K, E, M]) End(ctx context.Context, streams ...*Stream[K, E, M]) (int, error) {
	owners := make([]*Ownership, 0, len(streams))
	in.mu.Lock()
	for _, s := range streams {
		if s.ended {
			continue
		}
		s.ended = true
		s.stash = nil
		s.stopWaiting()
		delete(in.streams, s)
		owners = append(owners, s.own)
	}
	in.mu.Unlock()
	if len(owners) == 0 {
		return 0, nil
	}
	for _, s := range streams {
		in.mu.Lock()
		if s.writes == 0 {
			in.mu.Unlock()
			continue
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		ch, n := s.written, s.writes
		in.mu.Unlock()
		in.cfg.Logger.Debug("ordergen/"+in.cfg.System+": waiting for dead-letter writes before the ownership ends", "stream", s.name, "writes", n)
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	return in.src.Load().End(ctx, owners...)
}

// Unsettled returns the number of messages taken and not settled, over
// every stream; 0 before Start.
func (in *StreamIntake[K, E, M]) Unsettled() int {
	if src := in.src.Load(); src != nil {
		return src.Unsettled()
	}
	return 0
}

// Parked returns the number of messages parked in memory, over every open
// stream.
func (in *StreamIntake[K, E, M]) Parked() int {
	src := in.src.Load()
	if src == nil {
		return 0
	}
	in.mu.Lock()
	owners := make([]*Ownership, 0, len(in.streams))
	for s := range in.streams {
		owners = append(owners, s.own)
	}
	in.mu.Unlock()
	n := 0
	for _, o := range owners {
		_, p := src.UnsettledOf(o)
		n += p
	}
	return n
}

// Parks returns how many messages have parked in memory so far. A caller
// reads it before it looks at the intake (Unsettled, Parked) and passes it
// to WaitRoom, which then returns at once if a message parked since: a
// park between the look and the wait would otherwise wake nobody, and the
// look would stay stale (the warning that parks fill the room never
// logged).
func (in *StreamIntake[K, E, M]) Parks() uint64 { return in.parks.Load() }

// WaitRoom waits until fewer than max messages are unsettled, or a message
// parked in memory after Parks returned parks (it keeps its room, but may
// change why the intake is full), or until ctx ends or stop is closed: the
// caller looks again. It returns false when ctx ended or stop was closed.
func (in *StreamIntake[K, E, M]) WaitRoom(ctx context.Context, stop <-chan struct{}, max int, parks uint64) bool {
	ch := in.room.Register()
	defer in.room.Unregister()
	if in.Unsettled() < max || in.parks.Load() != parks {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-stop:
	}
	return false
}

// ParksInMemory reports whether the subscribers park in memory, so that a
// parked message stays unsettled until its park is resolved.
func (in *StreamIntake[K, E, M]) ParksInMemory() bool {
	src := in.src.Load()
	return src != nil && src.ParksInMemory()
}

// StreamStats are a StreamIntake's counters since it started.
type StreamStats struct {
	// Submitted is the number of messages handed to every subscriber.
	Submitted uint64
	// Finished and Unfinished count the messages settled so.
	Finished, Unfinished uint64
	// DeadLettered is the number of bad messages written to the
	// dead-letter destination; DeadLetterErrors the failed writes.
	DeadLettered, DeadLetterErrors uint64
	// DeadLetteredBy counts DeadLettered by reason.
	DeadLetteredBy map[Reason]uint64
}

// Stats returns a snapshot of the intake's counters.
func (in *StreamIntake[K, E, M]) Stats() StreamStats {
	s := StreamStats{Submitted: in.submitted.Load(), Finished: in.finished.Load(), Unfinished: in.unfinished.Load()}
	in.mu.Lock()
	defer in.mu.Unlock()
	s.DeadLettered, s.DeadLetterErrors = in.deadLettered, in.deadErrors
	s.DeadLetteredBy = make(map[Reason]uint64, len(in.deadBy))
	for r, n := range in.deadBy {
		s.DeadLetteredBy[r] = n
	}
	return s
}

package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/internal/notify"
	"github.com/ordergen/ordergen/runtime/meter"
)

// KeyIntake is the intake of a consumer whose broker orders by key: it
// hands out a key's messages in order and holds back the key's later
// messages while earlier ones are unsettled (SQS FIFO locks the message
// group; Pub/Sub redelivers every later message of an ordering key after a
// nack or an expired lease). The broker's unit of order is the key itself,
// so the intake keeps one Ownership per key it holds messages of: it
// starts with the key's first message taken and ends when the last one is
// settled, or earlier:
//
//   - when one of the key's messages is settled Unfinished (the broker
//     delivers it again, and the key's later messages after it): the key's
//     other messages must not run here, so the ownership ends and they are
//     given back too;
//   - when a message's lease is about to end for good (Message.Lease:
//     Pub/Sub's MaxExtension, SQS's 12 hours of visibility): the broker
//     will deliver the key elsewhere;
//   - when a message's lease was lost (LeaseLost: the broker refused an
//     extension) or is about to lapse (LeaseLapsed: the lease the broker
//     last confirmed ends, because extensions failed or went unanswered;
//     see Leases): the broker may deliver the key elsewhere any moment;
//   - when the consumer stops (Shutdown).
//
// An ending ownership withdraws the key's events that have not started,
// waits (up to KeyConfig.EndTimeout, and the lease; not at all when the
// lease was lost or lapses) for the running one, cancels it with a cause
// that says why (context.Cause of the handler's context: an error wrapping
// ErrOwnershipEnded, or ErrLeaseLost for a lease), and settles the rest
// Unfinished. Messages of the key that arrive meanwhile wait, and are
// taken under the key's next ownership. With KeyConfig.Fence (Pub/Sub,
// where a stream may carry later messages of a key sent before the nack)
// messages of the key that arrive after the ownership ended and before the
// first message it gave back comes again are given back too: they are
// stale, and the broker delivers them again after it.
//
// Messages the lanes refuse for lack of room wait, with the later messages
// of their key, in the key's stash, and are offered again as messages
// settle, and at each sweep (KeyConfig.SweepEvery) for room that no
// settlement reports (events of other publishers finishing): a full key
// holds up only itself. Room for messages overall
// (KeyConfig.MaxInFlight) is the transport's to respect: it reserves room
// with Reserve before it takes a message from the broker, and each Receive
// uses one slot. A reservation, not a look at Room, because a transport's
// receivers run at once (Pub/Sub's callbacks of different keys, SQS's
// receive calls) and two of them could otherwise take the last slot both.
// Messages waiting for their key's ownership to end keep their room while
// they are received again.
//
// Locks: the Source's lock comes first, then the intake's; Settle runs
// under the Source's, and DeadLetter under none.
type KeyIntake[K comparable, E any, M any] struct {
	cfg    KeyConfig[E, M]
	src    atomic.Pointer[Source[K, E, *entry[E, M]]] // set by Start
	begun  atomic.Bool                                // Start was called
	nowait context.Context
	abort  context.Context // cancelled when Shutdown's context ends
	cancel context.CancelCauseFunc
	watch  BlockWatch

	// mu guards what follows.
	mu        sync.Mutex
	keys      map[string]*holding[E, M]
	fences    map[string]fence
	live      int // messages taken and not settled: every holding's nlive, less only once Settle told the broker
	waiting   int // messages waiting for their key's ownership to end
	reserved  int // room given by Reserve and not yet used by Receive
	stashed   int // keys with a stash
	closing   bool
	seq       uint64
	stats     KeyStats
	deadByWhy map[Reason]uint64
	failErr   error

	wake    chan struct{} // settlements: the stash retrier looks again
	room    notify.Notifier
	failed  chan struct{} // closed with failErr
	stop    chan struct{}
	loops   sync.WaitGroup // sweeper, retrier
	enders  sync.WaitGroup
	metrics *keyMetrics
}

// KeyConfig configures a KeyIntake.
type KeyConfig[E any, M any] struct {
	// System names the broker in logs and metric names ("pubsub", "sqs").
	System string
	// MaxInFlight bounds the messages taken and not settled, parked ones
	// included, and those waiting for their key's ownership to end.
	MaxInFlight int
	// EndTimeout bounds how long an ending ownership waits for its running
	// handler before it cancels it.
	EndTimeout time.Duration
	// Fence gives back the stale messages of a key whose ownership ended
	// (see KeyIntake). Zero FenceWindow: 10s.
	Fence       bool
	FenceWindow time.Duration
	// SweepEvery is how often leases and the blocked state are looked at,
	// and the stashes offered again whatever settled.
	// Zero: 1s.
	SweepEvery time.Duration
	// Settle acknowledges (Finished) or gives back (Unfinished) a message.
	// It is called once per message received, must be fast and must not
	// block.
	Settle func(M, Settlement)
	// DeadLetter writes a bad message to the dead-letter destination.
	DeadLetter DeadLetterFunc[E, M]
	// Logger receives what an operator must see.
	Logger *slog.Logger
	// Meter, when set, receives the metrics (see keystats.go) under Scope,
	// with Attributes on every measurement.
	Meter      meter.Provider
	Scope      string
	Attributes []meter.Attribute
}

// fence gives back the messages of a key until the message id comes again
// or until passes.
type fence struct {
	id    string
	until time.Time
}

// NewKeyIntake returns an intake for cfg; Start gives it its target.
func NewKeyIntake[K comparable, E any, M any](cfg KeyConfig[E, M]) (*KeyIntake[K, E, M], error) {
	if cfg.Settle == nil || cfg.DeadLetter == nil || cfg.MaxInFlight <= 0 || cfg.EndTimeout <= 0 {
		return nil, fmt.Errorf("%w: a key intake needs Settle, DeadLetter, MaxInFlight and EndTimeout", runtime.ErrInvalidConfig)
	}
	if cfg.FenceWindow <= 0 {
		cfg.FenceWindow = 10 * time.Second
	}
	if cfg.SweepEvery <= 0 {
		cfg.SweepEvery = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	in := &KeyIntake[K, E, M]{
		cfg:       cfg,
		nowait:    DoneContext(),
		keys:      make(map[string]*holding[E, M]),
		fences:    make(map[string]fence),
		deadByWhy: make(map[Reason]uint64),
		wake:      make(chan struct{}, 1),
		failed:    make(chan struct{}),
		stop:      make(chan struct{}),
		watch:     BlockWatch{Logger: cfg.Logger, Prefix: "ordergen/" + cfg.System + ": ", What: "the consumer", Room: "MaxInFlight"},
	}
	in.abort, in.cancel = context.WithCancelCause(context.Background())
	return in, nil
}

// Start makes the intake feed target, and starts its goroutines (Shutdown
// ends them). It refuses, with an error wrapping runtime.ErrInvalidConfig,
// a target whose subscribers a transport cannot settle for (NewSource),
// and a second call. OnOutcome must reach every subscriber.
func (c *KeyIntake[K, E, M]) Start(target Target[E]) error {
	if !c.begun.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: a key intake starts once", runtime.ErrInvalidConfig)
	}
	src, err := NewSource[K](target, c.settled)
	if err != nil {
		return err
	}
	if err := c.startMetrics(); err != nil {
		return err
	}
	c.src.Store(src)
	c.loops.Add(2)
	go c.sweepLoop()
	go c.retryLoop()
	return nil
}

// OnOutcome is told the outcome of each event the intake offered; give it
// to every subscriber of the target (through the consumer's OnOutcome).
// Outcomes before Start are ignored.
func (c *KeyIntake[K, E, M]) OnOutcome(key K, tag uint64, o runtime.Outcome) {
	if src := c.src.Load(); src != nil {
		src.OnOutcome(key, tag, o)
	}
}

// Failed is closed when the target failed for good (Err says how): the
// transport stops.
func (c *KeyIntake[K, E, M]) Failed() <-chan struct{} { return c.failed }

// Err returns why the intake failed, or nil.
func (c *KeyIntake[K, E, M]) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failErr
}

// Receive takes m, in a slot of room that Reserve gave, and offers its
// event to the lanes, or sets it aside: it waits for its key's ending
// ownership, waits in its key's stash for room, goes to the dead-letter
// destination (a bad message), or is given back at once (a stale message
// behind a fence, or the intake is shutting down). It never blocks on room.
// A message received without a reservation is counted all the same, so
// that taking can go over MaxInFlight. It returns an error only when the
// target failed for good.
func (c *KeyIntake[K, E, M]) Receive(m Message[E, M]) error {
	c.mu.Lock()
	c.stats.Received++
	// The slot stays counted, as reserved, until the message is counted
	// as live or waiting: room never shows it free in between.
	slot := c.reserved > 0
	c.mu.Unlock()
	return c.receive(m, slot)
}

// useSlot ends a reservation that receive used; c.mu is held.
func (c *KeyIntake[K, E, M]) useSlot(slot *bool) {
	if *slot {
		c.reserved--
		*slot = false
	}
}

// giveBack settles a message the intake does not take Unfinished, then
// frees its slot (when it holds one): the broker is told first, as in
// settled.
func (c *KeyIntake[K, E, M]) giveBack(handle M, slot bool) {
	c.cfg.Settle(handle, Unfinished)
	if slot {
		c.Unreserve(1)
	}
}

// receive takes m; slot says whether m holds a reserved slot of room,
// which it gives up in the critical section that counts m otherwise.
func (c *KeyIntake[K, E, M]) receive(m Message[E, M], slot bool) error {
	for {
		c.mu.Lock()
		if c.closing {
			c.stats.Refused++
			c.mu.Unlock()
			c.giveBack(m.Handle, slot)
			return nil
		}
		if f, ok := c.fences[m.Key]; ok {
			if m.ID != f.id && time.Now().Before(f.until) {
				c.stats.Fenced++
				c.mu.Unlock()
				c.cfg.Logger.Debug("ordergen/"+c.cfg.System+": stale message of a key whose ownership ended given back", "key", m.Key, "id", m.ID, "until", f.id)
				c.giveBack(m.Handle, slot)
				return nil
			}
			delete(c.fences, m.Key)
		}
		h := c.keys[m.Key]
		if h != nil && h.ending {
			h.waiting = append(h.waiting, m)
			c.waiting++
			c.useSlot(&slot)
			c.mu.Unlock()
			return nil
		}
		if h == nil {
			h = &holding[E, M]{key: m.Key, own: c.src.Load().Own()}
			c.keys[m.Key] = h
		}
		c.seq++
		e := &entry[E, M]{h: h, handle: m.Handle, id: m.ID, lease: m.Lease, taken: time.Now(), seq: c.seq}
		h.live = append(h.live, e)
		h.nlive++
		c.live++
		c.useSlot(&slot)
		c.mu.Unlock()

		src := c.src.Load()
		tag, err := src.Take(h.own, e)
		if err != nil { // the ownership ended meanwhile: look again
			c.mu.Lock()
			e.st = Unfinished // never taken: not settled by the source
			h.nlive--
			h.dropSettled()
			// Its room stays counted, as reserved again, while it looks.
			c.live--
			c.reserved++
			slot = true
			c.mu.Unlock()
			continue
		}
		e.tag = tag
		src.Link(tag, m.Trace)
		if m.Bad != nil {
			c.deadLetter(e, m)
			return nil
		}
		c.mu.Lock()
		if len(h.stash) > 0 || h.retrying {
			h.stash = append(h.stash, pending[E, M]{e, m})
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		refused, err := c.offer(e, m)
		if refused {
			c.mu.Lock()
			if !h.ending {
				h.stash = append(h.stash, pending[E, M]{e, m})
				if len(h.stash) == 1 {
					c.stashed++
					c.cfg.Logger.Debug("ordergen/"+c.cfg.System+": the lanes are full for a key; its messages wait until there is room", "key", m.Key)
				}
			}
			c.mu.Unlock()
			c.signal()
		}
		return err
	}
}

// offer offers e's event. It reports refused when the lanes have no room
// (the message waits in its key's stash); a message the lanes refuse as
// invalid goes to the dead-letter destination; any other refusal is the
// target's failure, returned.
func (c *KeyIntake[K, E, M]) offer(e *entry[E, M], m Message[E, M]) (refused bool, err error) {
	err = c.src.Load().Offer(c.nowait, e.tag, m.Event)
	switch {
	case err == nil, errors.Is(err, ErrOwnershipEnded):
		return false, nil
	case errors.Is(err, runtime.ErrBacklogFull), errors.Is(err, context.Canceled):
		return true, nil
	case errors.Is(err, runtime.ErrInvalidEvent):
		m.Bad = &Bad{Reason: ReasonInvalidEvent, Err: err}
		c.deadLetter(e, m)
		return false, nil
	default:
		err = fmt.Errorf("%s: offer the message %s of key %s: %w", c.cfg.System, m.ID, m.Key, err)
		c.fail(err)
		return false, err
	}
}

// deadLetter writes e's bad message to the dead-letter destination and
// settles it on the answer: Finished once written, Unfinished otherwise
// (the broker delivers it again).
func (c *KeyIntake[K, E, M]) deadLetter(e *entry[E, M], m Message[E, M]) {
	c.cfg.DeadLetter(m, func(err error) {
		st := Finished
		c.mu.Lock()
		if err != nil {
			st = Unfinished
			c.stats.DeadLetterErrors++
		} else {
			c.stats.DeadLettered++
			c.deadByWhy[m.Bad.Reason]++
		}
		c.mu.Unlock()
		if err != nil {
			c.cfg.Logger.Error("ordergen/"+c.cfg.System+": dead-letter write failed; the message goes back to the broker", "key", m.Key, "id", m.ID, "reason", m.Bad.Reason, "error", err)
		} else {
			c.cfg.Logger.Warn("ordergen/"+c.cfg.System+": message dead-lettered", "key", m.Key, "id", m.ID, "reason", m.Bad.Reason, "error", m.Bad.Err)
		}
		_ = c.src.Load().Resolve(e.tag, st) // never offered: no subscriber holds it
	})
}

// fail records the target's failure; the transport stops.
func (c *KeyIntake[K, E, M]) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failErr == nil {
		c.failErr = err
		close(c.failed)
	}
}

// signal wakes the stash retrier.
func (c *KeyIntake[K, E, M]) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// settled is the source's verdict on a message; the source's lock is held.
func (c *KeyIntake[K, E, M]) settled(e *entry[E, M], st Settlement) {
	c.mu.Lock()
	h := e.h
	e.st = st
	h.nlive--
	if st == Finished {
		c.stats.Finished++
	} else {
		c.stats.Unfinished++
		if h.restart == nil || e.seq < h.restart.seq {
			h.restart = e
		}
		if !h.ending && !c.closing {
			// The broker delivers it again, and the key's later messages
			// after it: none of them may run here any more.
			c.startEnd(h, endUnfinished, nil)
		}
	}
	h.dropSettled()
	if h.nlive == 0 && !h.ending && c.keys[h.key] == h {
		delete(c.keys, h.key)
	}
	c.mu.Unlock()
	c.cfg.Settle(e.handle, st)
	// Its room is free once the broker was told, not before: a message
	// taken meanwhile would be one over MaxInFlight at the broker.
	c.mu.Lock()
	c.live--
	c.mu.Unlock()
	c.signal()
	c.room.BroadcastIfWaiting()
}

// Room returns how many more messages may be received now (Config.MaxInFlight
// less those unsettled, waiting, or reserved); it may be 0 or less.
func (c *KeyIntake[K, E, M]) Room() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.roomLocked()
}

// roomLocked is Room; c.mu is held.
func (c *KeyIntake[K, E, M]) roomLocked() int {
	return c.cfg.MaxInFlight - c.live - c.waiting - c.reserved
}

// Reserve waits until there is room, reserves up to most slots of it and
// returns how many it reserved; 0 once ctx ends or stop is closed. Each
// slot is for one Receive; give back the ones not used with Unreserve.
// Receivers at once therefore never take more than MaxInFlight between
// them: room seen is room held (a check of Room, then a Receive, would let
// two receivers take the last slot).
func (c *KeyIntake[K, E, M]) Reserve(ctx context.Context, stop <-chan struct{}, most int) int {
	if most <= 0 {
		return 0
	}
	for {
		ch := c.room.Register()
		c.mu.Lock()
		n := min(c.roomLocked(), most)
		if n > 0 {
			c.reserved += n
		}
		c.mu.Unlock()
		if n > 0 {
			c.room.Unregister()
			return n
		}
		select {
		case <-ch:
		case <-ctx.Done():
		case <-stop:
		}
		c.room.Unregister()
		if ctx.Err() != nil {
			return 0
		}
		select {
		case <-stop:
			return 0
		default:
		}
	}
}

// Unreserve gives back n slots that Reserve gave and no Receive used.
func (c *KeyIntake[K, E, M]) Unreserve(n int) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	c.reserved = max(c.reserved-n, 0)
	c.mu.Unlock()
	c.room.BroadcastIfWaiting()
}

// LeaseLost ends the ownership of key at once if message id is one of its
// unsettled messages: the broker took the message's lease back (it refused
// an extension), so the key may already run elsewhere. The key's events
// that have not started are withdrawn, and its running handler is
// cancelled now, without the drain of Config.EndTimeout, with cause
// (wrap ErrLeaseLost and say what happened: the handler finds
// it in context.Cause).
func (c *KeyIntake[K, E, M]) LeaseLost(key, id string, cause error) {
	c.leaseEnds(key, id, endLeaseLost, cause)
}

// LeaseLapsed is LeaseLost for a lease that the broker did not confirm
// in time: the last extension it confirmed is about to end (the
// transport calls it with a margin, so that the handler is cancelled
// before the broker can deliver the message elsewhere).
func (c *KeyIntake[K, E, M]) LeaseLapsed(key, id string, cause error) {
	c.leaseEnds(key, id, endLeaseLapsed, cause)
}

func (c *KeyIntake[K, E, M]) leaseEnds(key, id, why string, cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.keys[key]
	if h == nil || h.ending || c.closing {
		return
	}
	for _, e := range h.live {
		if e.st == 0 && e.id == id {
			c.startEnd(h, why, cause)
			return
		}
	}
}

// EachUnsettled calls f with the handle of every message taken and not
// settled; f must not block nor call the core.
func (c *KeyIntake[K, E, M]) EachUnsettled(f func(key string, handle M)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, h := range c.keys {
		for _, e := range h.live {
			if e.st == 0 {
				f(h.key, e.handle)
			}
		}
	}
}

package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
)

// UnitConsumer is the consumer of a broker whose units of order are each
// delivered, in order, to the one consumer subscribed to them at a time
// (RabbitMQ's queues with a single active consumer; NATS JetStream's
// partitions with a pinned client), with a StreamIntake inside. A
// transport author writes the UnitBroker: how to connect, subscribe to a
// unit, decode its deliveries and settle them; UnitConsumer does the rest:
//
//   - Run connects, and subscribes to every unit (in random order, so that
//     consumers that start together spread the units among them), each on
//     a goroutine that feeds its deliveries to a Stream of the intake;
//   - a unit's subscription that is lost ends its stream (what has not
//     started is withdrawn: the broker delivers it again) and is made
//     again, with a growing delay; a lost connection ends every stream and
//     Run connects again, with a growing delay; a refusal the broker says
//     is its own answer to the configuration (UnitBroker.Refused) ends Run;
//   - Close drains: the streams end (the running handlers get until
//     Close's context or the drain timeout), each feed settles what
//     finished (UnitFeed.Close(true)), then the connection closes, all
//     within two drain timeouts, after which the connection is killed;
//   - the end of Run's context stops it at once, as a crash: the streams
//     end without waiting, nothing more is settled, the connection is
//     killed;
//   - Stats, Units and the metrics say what each unit does, and why one is
//     blocked (its room at the broker full of unsettled or parked
//     messages).
type UnitConsumer[K comparable, E any, M any, D any] struct {
	cfg   UnitConfig[E, M]
	b     UnitBroker[E, M, D]
	in    *StreamIntake[K, E, M]
	life  *Lifecycle
	units []*unitState

	received, reconnects, losses atomic.Uint64
	stopMetrics                  func()

	// mu guards feeds.
	mu    sync.Mutex
	feeds map[*unitFeed[K, E, M, D]]struct{}
}

// UnitBroker is what a transport author writes for a UnitConsumer.
type UnitBroker[E any, M any, D any] interface {
	// Connect connects to the broker (and declares what it needs). ctx
	// ends when Close is called or Run's context ends: a handshake with a
	// broker that does not answer must stop then.
	Connect(ctx context.Context) (UnitConn[E, M, D], error)
	// Refused reports whether err is the broker's refusal of the
	// configuration (credentials, a topology declared otherwise), so that
	// trying again cannot help; sure is false for a refusal a network
	// fault can look like, which ends Run only the third time in a row.
	Refused(err error) (yes, sure bool)
}

// UnitConn is one connection to the broker.
type UnitConn[E any, M any, D any] interface {
	// Subscribe subscribes to the unit numbered unit (an index of
	// UnitConfig.Units).
	Subscribe(unit int) (UnitFeed[E, M, D], error)
	// Lost is closed when the connection is lost; Err then says why.
	Lost() <-chan struct{}
	Err() error
	// Close closes the connection, waiting for the broker's answer; Kill
	// closes it at once (the broker gives back what it had delivered).
	Close()
	Kill()
}

// UnitFeed is one subscription to a unit: its deliveries, in order.
type UnitFeed[E any, M any, D any] interface {
	// Deliveries delivers the unit's messages, and is closed when the
	// subscription is lost (Err then says why).
	Deliveries() <-chan D
	// Decode turns a delivery into a message (Decoder's verdict), whose
	// handle the intake's Settle and DeadLetter get back.
	Decode(D) Message[E, M]
	Err() error
	// Close ends the subscription once its stream ended: it sends the
	// settlements still pending when flush is set (not when the consumer
	// stops as a crash), then lets the unit go.
	Close(flush bool)
}

// UnitConfig configures a UnitConsumer.
type UnitConfig[E any, M any] struct {
	// System names the broker in logs and metric names ("rabbitmq").
	System string
	// Name names the consumer in logs. Zero: "ordergen".
	Name string
	// Unit is what the broker calls a unit, in logs and metrics
	// ("queue").
	Unit string
	// Units names the units to subscribe to. Required.
	Units []string
	// Room is how many unsettled messages the broker lets one subscription
	// hold (RabbitMQ's prefetch, NATS's MaxAckPending): a unit whose room
	// is full is blocked. Required.
	Room int
	// Drain bounds the wait, when the consumer closes, for the running
	// handlers, and then again for the last settlements. Zero: 10s.
	Drain time.Duration
	// ReconnectDelay is the first wait before connecting or subscribing
	// again after a loss; it doubles up to MaxReconnectDelay. Zero: 100ms
	// and 10s (at least ReconnectDelay).
	ReconnectDelay, MaxReconnectDelay time.Duration
	// Settle and DeadLetter are the intake's (StreamConfig). Required.
	Settle     func(M, Settlement)
	DeadLetter DeadLetterFunc[E, M]
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
	// Meter, when set, receives the metrics (see unitstats.go) under
	// Scope, with Attributes on every measurement. Zero Scope:
	// github.com/ordergen/ordergen/runtime/<System>; nil Attributes: the
	// system and Name as the consumer group.
	Meter      meter.Provider
	Scope      string
	Attributes []meter.Attribute
	// Leased says that the broker lends each delivery for a time (NATS's
	// AckWait) and gives it to another consumer when that ends: the
	// handlers of a unit lost with its connection or subscription see a
	// cause wrapping ErrLeaseLost.
	Leased bool
}

// unitFeed is one subscription of a unit: one stream of the intake.
type unitFeed[K comparable, E any, M any, D any] struct {
	u      *UnitConsumer[K, E, M, D]
	unit   *unitState
	feed   UnitFeed[E, M, D]
	stream *Stream[K, E, M]
	wake   chan struct{} // retry the waiting messages, look at the room again
	watch  BlockWatch    // owned by the receive loop
}

// NewUnitConsumer returns a consumer of cfg over b. It does not connect
// before Run.
func NewUnitConsumer[K comparable, E any, M any, D any](b UnitBroker[E, M, D], cfg UnitConfig[E, M]) (*UnitConsumer[K, E, M, D], error) {
	cfg.Drain = cmp.Or(cfg.Drain, 10*time.Second)
	cfg.ReconnectDelay = cmp.Or(cfg.ReconnectDelay, 100*time.Millisecond)
	cfg.MaxReconnectDelay = cmp.Or(cfg.MaxReconnectDelay, max(10*time.Second, cfg.ReconnectDelay))
	cfg.Name = cmp.Or(cfg.Name, "ordergen")
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.Scope = cmp.Or(cfg.Scope, "github.com/ordergen/ordergen/runtime/"+cfg.System)
	if cfg.Attributes == nil {
		cfg.Attributes = []meter.Attribute{{Key: meter.AttrSystem, Value: cfg.System}, {Key: meter.AttrConsumerGroup, Value: cfg.Name}}
	}
	if _, err := KeyText(*new(K)); err != nil { // every message is offered by its key
		return nil, err
	}
	if b == nil || len(cfg.Units) == 0 || cfg.Room <= 0 || cfg.Drain < 0 || cfg.ReconnectDelay < 0 || cfg.MaxReconnectDelay < cfg.ReconnectDelay {
		return nil, fmt.Errorf("%w: a unit consumer needs a broker, Units and Room; Drain and ReconnectDelay must not be negative, nor MaxReconnectDelay below ReconnectDelay", runtime.ErrInvalidConfig)
	}
	in, err := NewStreamIntake[K](StreamConfig[E, M]{System: cfg.System, Settle: cfg.Settle, DeadLetter: cfg.DeadLetter, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	u := &UnitConsumer[K, E, M, D]{cfg: cfg, b: b, in: in, life: NewLifecycle(nil), feeds: map[*unitFeed[K, E, M, D]]struct{}{}}
	for _, name := range cfg.Units {
		u.units = append(u.units, &unitState{name: name})
	}
	if u.stopMetrics, err = u.startMetrics(); err != nil {
		return nil, err
	}
	return u, nil
}

// OnOutcome is the intake's: give it to every subscriber of the target.
func (u *UnitConsumer[K, E, M, D]) OnOutcome(key K, tag uint64, o runtime.Outcome) {
	u.in.OnOutcome(key, tag, o)
}

// Run connects, subscribes to the units and feeds target until Close is
// called or ctx ends (see UnitConsumer). It returns an error wrapping
// runtime.ErrInvalidConfig for subscribers it cannot settle messages for
// (CheckSubscriptions) and for the broker's refusal of the configuration;
// ctx's error when ctx ended; nil after Close; ErrRunning when it ran
// already.
func (u *UnitConsumer[K, E, M, D]) Run(ctx context.Context, target Target[E]) error {
	return u.life.Run(func() error {
		defer u.stopMetrics()
		return u.run(ctx, target)
	})
}

// Close stops the consumer cleanly (see UnitConsumer), and returns Run's
// result, or ctx's error if Run does not return before ctx ends.
func (u *UnitConsumer[K, E, M, D]) Close(ctx context.Context) error { return u.life.Close(ctx) }

// handshakeRefusals is how many refusals in a row, without the broker
// saying so itself, end Run.
const handshakeRefusals = 3

func (u *UnitConsumer[K, E, M, D]) run(ctx context.Context, target Target[E]) error {
	sys := u.cfg.System
	if err := u.in.Start(target); err != nil {
		return fmt.Errorf("%s: %w", sys, err)
	}
	delay := u.cfg.ReconnectDelay
	refusals := 0
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-u.life.Closing():
			return nil
		default:
		}
		start := time.Now()
		cctx, cancel := UntilClosed(ctx, u.life.Closing())
		conn, err := u.b.Connect(cctx)
		cancel()
		if err == nil {
			var lost bool
			if lost, err = u.session(ctx, conn); !lost {
				return err
			}
		}
		if yes, sure := u.b.Refused(err); yes {
			refusals++
			if sure || refusals >= handshakeRefusals {
				return fmt.Errorf("%s: %w: %w", sys, runtime.ErrInvalidConfig, err)
			}
		} else {
			refusals = 0
		}
		if time.Since(start) > u.cfg.MaxReconnectDelay {
			delay = u.cfg.ReconnectDelay // it ran a while: start over
		}
		u.reconnects.Add(1)
		u.cfg.Logger.Error("ordergen/"+sys+": connection lost; reconnecting", "consumer", u.cfg.Name, "in", delay, "error", err)
		if !u.life.Sleep(ctx, delay) {
			return ctx.Err()
		}
		delay = min(2*delay, u.cfg.MaxReconnectDelay)
	}
}

// session is one connection's life.
type session[E any, M any, D any] struct {
	conn      UnitConn[E, M, D]
	stop      chan struct{} // closed when the session ends: supervisors stop
	wg        sync.WaitGroup
	fatalOnce sync.Once
	fatal     chan error // the target failed, or the broker refused
}

func (s *session[E, M, D]) fail(err error) { s.fatalOnce.Do(func() { s.fatal <- err }) }

// session runs the consumer on conn until Close, ctx's end, the loss of
// the connection (lost) or a fatal error.
func (u *UnitConsumer[K, E, M, D]) session(ctx context.Context, conn UnitConn[E, M, D]) (lost bool, err error) {
	s := &session[E, M, D]{conn: conn, stop: make(chan struct{}), fatal: make(chan error, 1)}
	for _, i := range rand.Perm(len(u.units)) {
		s.wg.Go(func() { u.supervise(s, i) })
	}
	select {
	case <-u.life.Closing():
		u.drain(s)
		return false, nil
	case err := <-s.fatal:
		u.drain(s)
		return false, err
	case <-ctx.Done():
		close(s.stop)
		s.wg.Wait()
		// As a crash: nothing more is settled, and the connection closes
		// at once, without waiting for a broker that may not answer.
		feeds := u.current()
		_, _ = u.in.End(Stopped(u.cfg.System, errors.New("Run's context ended")), streamsOf(feeds)...)
		conn.Kill()
		for _, f := range feeds {
			f.finish(false)
		}
		return false, ctx.Err()
	case <-conn.Lost():
		close(s.stop)
		s.wg.Wait()
		// The supervisors end the feeds they see lost; those that saw the
		// stop first end here.
		feeds := u.current()
		_, _ = u.in.End(u.lost("the connection was lost: the broker delivers its messages again"), streamsOf(feeds)...)
		for _, f := range feeds {
			f.finish(false)
		}
		return true, fmt.Errorf("%s: connection lost: %w", u.cfg.System, conn.Err())
	}
}

// drain ends a session cleanly: the feeds stop taking messages, their
// streams end (what has not started is withdrawn, the running handlers get
// up to Drain), what finished is settled, then the feeds and the
// connection close. The whole gets until Close's context or two Drains
// end: then the connection is killed, which ends the closes of a broker
// that stopped answering; the settlements not sent by then are lost, and
// the broker delivers those messages again.
func (u *UnitConsumer[K, E, M, D]) drain(s *session[E, M, D]) {
	closeCtx := u.life.CloseContext()
	if closeCtx == nil {
		closeCtx = context.Background()
	}
	kctx, cancelKill := context.WithTimeout(closeCtx, 2*u.cfg.Drain)
	defer cancelKill()
	kill := context.AfterFunc(kctx, func() {
		u.cfg.Logger.Warn("ordergen/"+u.cfg.System+": the broker did not answer the close in time; the connection closes at once, and settlements not sent are lost (those messages come again)", "consumer", u.cfg.Name)
		s.conn.Kill()
	})
	defer kill()
	close(s.stop)
	s.wg.Wait()
	feeds := u.current()
	ctx, cancel := ShutdownContext(u.cfg.System, false, closeCtx, u.cfg.Drain)
	left, err := u.in.End(ctx, streamsOf(feeds)...)
	cancel()
	if err != nil {
		u.cfg.Logger.Warn("ordergen/"+u.cfg.System+": handlers still ran when the drain ended; their messages go back to the broker", "consumer", u.cfg.Name, "returned", left, "error", err)
	}
	for _, f := range feeds {
		f.finish(true)
	}
	s.conn.Close()
}

// ended returns a context that is done already, whose cause (what the
// handlers cancelled by an ending ownership see) says why.
func (u *UnitConsumer[K, E, M, D]) ended(why string) context.Context {
	return Ended(fmt.Errorf("%w: %s: %s", ErrOwnershipEnded, u.cfg.System, why))
}

// lost is ended for a unit that was lost: the cause wraps ErrLeaseLost
// when the broker's deliveries are leased.
func (u *UnitConsumer[K, E, M, D]) lost(why string) context.Context {
	if u.cfg.Leased {
		return Ended(fmt.Errorf("%w: %s: %s", ErrLeaseLost, u.cfg.System, why))
	}
	return u.ended(why)
}

// supervise keeps unit i subscribed until the session stops or the
// connection is lost.
func (u *UnitConsumer[K, E, M, D]) supervise(s *session[E, M, D], i int) {
	delay := u.cfg.ReconnectDelay
	for {
		feed, err := s.conn.Subscribe(i)
		if yes, sure := u.b.Refused(err); yes && sure {
			s.fail(fmt.Errorf("%s: %w: %w", u.cfg.System, runtime.ErrInvalidConfig, err))
			return
		}
		if err == nil {
			f := u.open(i, feed)
			lost, fatal := f.receive(s.stop)
			if fatal != nil {
				s.fail(fatal)
				return
			}
			if !lost {
				return // stopping: the session ends the feed
			}
			// What has not started here must not start: the broker
			// delivers it again.
			_, _ = u.in.End(u.lost("the "+u.cfg.Unit+"'s subscription was lost: the broker delivers its messages again"), f.stream)
			f.finish(false)
			err = feed.Err()
		}
		if IsClosed(s.conn.Lost()) || IsClosed(s.stop) {
			return
		}
		u.losses.Add(1)
		u.cfg.Logger.Error("ordergen/"+u.cfg.System+": "+u.cfg.Unit+" subscription lost; subscribing again", u.cfg.Unit, u.units[i].name, "in", delay, "error", err)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.stop:
			t.Stop()
			return
		}
		delay = min(2*delay, u.cfg.MaxReconnectDelay)
	}
}

// open makes unit i's feed a stream of the intake.
func (u *UnitConsumer[K, E, M, D]) open(i int, feed UnitFeed[E, M, D]) *unitFeed[K, E, M, D] {
	st := u.units[i]
	f := &unitFeed[K, E, M, D]{u: u, unit: st, feed: feed, wake: make(chan struct{}, 1),
		watch: BlockWatch{Logger: u.cfg.Logger, Prefix: "ordergen/" + u.cfg.System + ": ", What: "the " + u.cfg.Unit, Room: "its room at the broker", Attrs: []any{u.cfg.Unit, st.name}}}
	f.stream = u.in.Open(st.name, StreamHooks{Wake: f.poke, Settled: f.poke})
	u.mu.Lock()
	u.feeds[f] = struct{}{}
	u.mu.Unlock()
	st.mu.Lock()
	st.subscribed = true
	st.mu.Unlock()
	u.cfg.Logger.Info("ordergen/"+u.cfg.System+": subscribed (messages come once this consumer is the "+u.cfg.Unit+"'s active one)", u.cfg.Unit, st.name, "room", u.cfg.Room)
	return f
}

// receive feeds the unit's deliveries to the stream until stop is closed
// (lost false), the subscription is lost (lost true), or the target fails
// (fatal).
func (f *unitFeed[K, E, M, D]) receive(stop <-chan struct{}) (lost bool, fatal error) {
	for {
		var err error
		select {
		case <-stop:
			return false, nil
		case d, ok := <-f.feed.Deliveries():
			if !ok {
				return true, nil
			}
			f.u.received.Add(1)
			f.unit.mu.Lock()
			f.unit.received++
			f.unit.mu.Unlock()
			err = f.stream.Receive([]Message[E, M]{f.feed.Decode(d)})
		case <-f.wake:
			err = f.stream.Retry()
		}
		if err != nil {
			return false, err
		}
		f.look()
	}
}

// poke wakes the receive loop; it may run under the intake's locks.
func (f *unitFeed[K, E, M, D]) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// look finds whether the unit's room is full, and whether parked messages
// fill it (the watch logs each change an operator must see).
func (f *unitFeed[K, E, M, D]) look() {
	unsettled, parked := f.stream.Unsettled()
	f.watch.Look(unsettled, f.u.cfg.Room, func() int { return parked }, func(why Blocked) {
		f.unit.mu.Lock() // before the watch logs: who reads its log then the stats sees why
		f.unit.unsettled, f.unit.parked, f.unit.blocked = unsettled, parked, why
		f.unit.mu.Unlock()
	})
}

// finish ends the feed once its stream ended.
func (f *unitFeed[K, E, M, D]) finish(flush bool) {
	f.feed.Close(flush)
	u := f.u
	u.mu.Lock()
	delete(u.feeds, f)
	u.mu.Unlock()
	f.unit.mu.Lock()
	f.unit.subscribed, f.unit.unsettled, f.unit.parked, f.unit.blocked = false, 0, 0, NotBlocked
	f.unit.mu.Unlock()
	if f.watch.Now() == BlockedParked {
		u.cfg.Logger.Info("ordergen/"+u.cfg.System+": "+u.cfg.Unit+" unsubscribed while parked messages held its room; they go back to the broker", u.cfg.Unit, f.unit.name)
	}
}

// current returns the feeds open.
func (u *UnitConsumer[K, E, M, D]) current() []*unitFeed[K, E, M, D] {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*unitFeed[K, E, M, D], 0, len(u.feeds))
	for f := range u.feeds {
		out = append(out, f)
	}
	return out
}

// streamsOf returns the streams of feeds.
func streamsOf[K comparable, E any, M any, D any](feeds []*unitFeed[K, E, M, D]) []*Stream[K, E, M] {
	out := make([]*Stream[K, E, M], len(feeds))
	for i, f := range feeds {
		out[i] = f.stream
	}
	return out
}

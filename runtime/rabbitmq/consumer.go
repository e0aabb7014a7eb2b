package rabbitmq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// ErrRunning is returned by Run when the consumer already ran.
var ErrRunning = errors.New("rabbitmq: consumer already ran")

// Consumer consumes the events of one entity from a Topology's queues and
// feeds them to per-key lanes (a Target): one channel per queue, each
// queue consumed by one consumer at a time (single active consumer), its
// messages acknowledged as they finish (see the package documentation).
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E Keyed[K]] struct {
	cfg     Config[E]
	nowait  context.Context // done: submissions never block
	src     atomic.Pointer[transport.Source[K, E, *inbound[K, E]]]
	tag     string // prefix of the consumer tags
	metrics *metrics
	stats   counters
	// stashing counts the subscriptions whose messages wait for room in
	// the lanes: any settlement may make room for any of them (the
	// backlog's total is shared), so each one wakes them all.
	stashing atomic.Int32

	mu    sync.Mutex // guards subs; taken after a sub's lock and the source's, never before
	subs  map[*sub[K, E]]struct{}
	queue map[int]*queueState // per queue index, over its subscriptions

	started   atomic.Bool
	closeOnce sync.Once
	closeCh   chan struct{}
	closeCtx  atomic.Pointer[context.Context]
	done      chan struct{}
	runErr    error
}

// inbound is the consumer's handle of a message it took: its subscription
// (the ownership it was taken under) and its delivery tag.
type inbound[K comparable, E Keyed[K]] struct {
	s      *sub[K, E]
	tag    uint64
	reject bool // settle it by rejecting it to the dead-letter exchange
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var zero K
	if _, err := durable.EncodeKey(zero); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := &Consumer[K, E]{
		cfg:     cfg,
		nowait:  transport.DoneContext(),
		tag:     cfg.Name + "-" + hex.EncodeToString(b[:]),
		subs:    map[*sub[K, E]]struct{}{},
		queue:   map[int]*queueState{},
		closeCh: make(chan struct{}),
		done:    make(chan struct{}),
	}
	for _, q := range cfg.Queues {
		c.queue[q] = &queueState{name: cfg.Topology.Queue(q)}
	}
	if err := c.startMetrics(); err != nil {
		return nil, err
	}
	return c, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a message is finished when
// every subscriber that accepted it reported a final outcome. Outcomes with
// tag 0 (events published in process), and outcomes of messages of a
// subscription that ended, are ignored.
func (c *Consumer[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) {
	src := c.src.Load()
	if src == nil {
		return
	}
	src.OnOutcome(key, tag, o)
	if o == runtime.Parked && src.ParksInMemory() {
		// A message parked in memory keeps its room in the prefetch: the
		// queues look again at whether parks block them.
		c.mu.Lock()
		for s := range c.subs {
			s.poke()
		}
		c.mu.Unlock()
	}
}

// settled is the source's verdict on a message: finished, it is
// acknowledged (or rejected, for a bad one); unfinished, it stays
// unacknowledged and returns to the queue when its channel closes. The
// source's lock is held.
func (c *Consumer[K, E]) settled(m *inbound[K, E], st transport.Settlement) {
	if st == transport.Finished {
		m.s.settle(m.tag, m.reject)
	} else {
		c.stats.unfinished.Add(1)
	}
	m.s.poke()
	if c.stashing.Load() > 0 {
		c.mu.Lock()
		for s := range c.subs {
			if s.stashed.Load() {
				s.poke()
			}
		}
		c.mu.Unlock()
	}
}

// Run connects, subscribes to the topology's queues and feeds target until
// Close is called or ctx ends. Every subscriber of target must report
// outcomes to OnOutcome. Run first checks the subscribers
// (transport.CheckSubscriptions) and returns an error wrapping ErrInvalidConfig
// and runtime.ErrInvalidConfig, before it connects, for subscribers under
// the drop-oldest or drop-newest backlog policy (a dropped event would
// let it acknowledge a message no handler ran), without OnOutcome, or
// parking differently from one another.
//
// When the connection or a queue's channel is lost, the messages it
// delivered that had not started are withdrawn from the lanes (the broker
// delivers them again, to this consumer or another), and Run reconnects
// with a growing delay. When the broker refuses what the configuration
// asks for (credentials, the virtual host, a topology declared otherwise,
// the consistent-hash exchange without its plugin), trying again cannot
// help: Run ends as after Close and returns the broker's error, wrapping
// ErrInvalidConfig. (A refusal of the credentials or the virtual host that the
// client reports without the broker's own word, which is also what a
// socket closed during the handshake looks like, ends Run only the third
// time in a row.)
//
// After Close, Run stops taking messages, withdraws those that had not
// started, waits (up to Config.DrainTimeout, and Close's context) for the
// running ones, acknowledges what finished, closes its channels (the
// broker returns the rest to their queues, in order) and returns nil. When
// ctx ends instead, Run stops at once, as a crash would: it withdraws the
// messages that had not started, cancels the running ones, sends no more
// acknowledgements, closes the connection and returns ctx's error. When
// target fails (it is closed), Run ends like Close and returns the error.
// Run may be called once.
func (c *Consumer[K, E]) Run(ctx context.Context, target Target[E]) error {
	if !c.started.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer close(c.done)
	if c.metrics != nil {
		defer c.metrics.stop()
	}
	c.runErr = c.run(ctx, target)
	return c.runErr
}

func (c *Consumer[K, E]) run(ctx context.Context, target Target[E]) error {
	src, err := transport.NewSource[K, E](target, c.settled)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.src.Store(src)
	delay := c.cfg.ReconnectDelay
	refusals := 0 // handshakes refused in a row
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closeCh:
			return nil
		default:
		}
		start := time.Now()
		conn, err := c.dial(ctx)
		if err == nil {
			var lost bool
			if lost, err = c.session(ctx, conn); !lost {
				return err
			}
		}
		if yes, sure := refused(err); yes {
			refusals++
			if sure || refusals >= handshakeRefusals {
				// Dialling or declaring again would be refused again.
				return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
			}
		} else {
			refusals = 0
		}
		if time.Since(start) > c.cfg.MaxReconnectDelay {
			delay = c.cfg.ReconnectDelay // it ran a while: start over
		}
		c.stats.reconnects.Add(1)
		c.cfg.Logger.Error("ordergen/rabbitmq: connection lost; reconnecting", "consumer", c.cfg.Name, "in", delay, "error", err)
		if !c.sleep(ctx, delay) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
		delay = min(2*delay, c.cfg.MaxReconnectDelay)
	}
}

// refused reports whether the broker refused what the configuration asks
// for, so that trying again cannot help: credentials or a virtual host it
// refuses, a topology that differs from the one declared
// (PRECONDITION_FAILED), an exchange type it does not know (the
// consistent-hash plugin not enabled). sure is false for the refusals the
// client makes up when the socket closes during the handshake
// (amqp.ErrCredentials, amqp.ErrVhost, amqp.ErrSASL): a network fault
// looks the same, so only their repetition is conclusive.
func refused(err error) (yes, sure bool) {
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return false, false
	}
	switch ae.Code {
	case amqp.AccessRefused, amqp.PreconditionFailed, amqp.CommandInvalid, amqp.NotAllowed:
		return true, ae.Server
	}
	return false, false
}

// handshakeRefusals is how many handshakes in a row the client must see
// refused, without the broker saying so itself, before Run gives up.
const handshakeRefusals = 3

// dial connects to the broker. Close and ctx's end cut the handshake
// short (the client waits up to its dial timeout for a broker that does
// not answer).
func (c *Consumer[K, E]) dial(ctx context.Context) (*amqp.Connection, error) {
	cfg := c.cfg.AMQP
	props := amqp.NewConnectionProperties()
	for k, v := range cfg.Properties {
		props[k] = v
	}
	props.SetClientConnectionName(c.tag)
	cfg.Properties = props
	base := cfg.Dial
	if base == nil {
		base = amqp.DefaultDial(30 * time.Second) // the client's own default
	}
	var mu sync.Mutex
	var raw net.Conn
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		nc, err := base(network, addr)
		mu.Lock()
		raw = nc
		mu.Unlock()
		return nc, err
	}
	stop := c.watch(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if raw != nil {
			_ = raw.Close()
		}
	})
	conn, err := amqp.DialConfig(c.cfg.URL, cfg)
	stop()
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: dial: %w", err)
	}
	return conn, nil
}

// watch calls kill if Close is called or ctx ends before the function it
// returns is: for the calls to the broker that have no context of their
// own (the handshake, declaring the topology), which a broker that stopped
// answering would hold until the heartbeats give up.
func (c *Consumer[K, E]) watch(ctx context.Context, kill func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-done:
		case <-ctx.Done():
			kill()
		case <-c.closeCh:
			kill()
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// sleep waits d, or until Close or ctx's end (then it returns false).
func (c *Consumer[K, E]) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-c.closeCh:
		return false
	}
}

// Close stops the consumer cleanly: Run stops taking messages, withdraws
// those that had not started, waits for the running ones (up to
// Config.DrainTimeout, and ctx), acknowledges what finished and closes
// its connection. Close returns Run's result, or ctx's error if Run does
// not return before ctx ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.closeCtx.Store(&ctx)
		close(c.closeCh)
	})
	if !c.started.Load() {
		return nil
	}
	select {
	case <-c.done:
		return c.runErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// closeContext returns Close's context, or a background one when Run ends
// for another reason.
func (c *Consumer[K, E]) closeContext() context.Context {
	if p := c.closeCtx.Load(); p != nil {
		return *p
	}
	return context.Background()
}

// source returns the source Run created.
func (c *Consumer[K, E]) source() *transport.Source[K, E, *inbound[K, E]] { return c.src.Load() }

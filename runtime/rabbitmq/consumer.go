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
	"github.com/ordergen/ordergen/runtime/transport"
)

// Consumer consumes the events of one entity from a Topology's queues and
// feeds them to per-key lanes (a transport.Target): one channel per queue,
// each queue consumed by one consumer at a time (single active consumer),
// its messages acknowledged as they finish (see the package
// documentation). It is a transport.UnitConsumer whose units are the
// queues.
//
// Create it with NewConsumer, give its OnOutcome to every subscriber of the
// target, then Run it; Close stops it cleanly.
type Consumer[K comparable, E transport.Keyed[K]] struct {
	cfg             Config[E]
	dec             transport.Decoder[K, E]
	u               *transport.UnitConsumer[K, E, delivery[K, E], amqp.Delivery]
	tag             string // prefix of the consumer tags, and the connections' name
	acked, rejected atomic.Uint64
}

// delivery is the consumer's handle of a message it took: its
// subscription and its delivery tag.
type delivery[K comparable, E transport.Keyed[K]] struct {
	s   *sub[K, E]
	tag uint64
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E transport.Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	c := &Consumer[K, E]{cfg: cfg, dec: transport.Decoder[K, E]{Codec: cfg.Codec}, tag: cfg.Name + "-" + hex.EncodeToString(b[:])}
	names := make([]string, len(cfg.Queues))
	for i, q := range cfg.Queues {
		names[i] = cfg.Topology.Queue(q)
	}
	c.u, err = transport.NewUnitConsumer[K](broker[K, E]{c}, transport.UnitConfig[E, delivery[K, E]]{
		System: "rabbitmq", Name: cfg.Name, Unit: "queue", Units: names, Room: cfg.Prefetch, Drain: cfg.DrainTimeout,
		ReconnectDelay: cfg.ReconnectDelay, MaxReconnectDelay: cfg.MaxReconnectDelay,
		Settle: c.settled, DeadLetter: c.reject, Logger: cfg.Logger,
		Meter: cfg.MeterProvider,
	})
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	return c, nil
}

// OnOutcome is told the outcome of each event the consumer submitted. Give
// it to every subscriber of the target (the OnOutcome field of a generated
// AccountConfig, or runtime.Config.OnOutcome): a message is finished when
// every subscriber that accepted it reported a final outcome. Outcomes with
// tag 0 (events published in process), and outcomes of messages of a
// subscription that ended, are ignored.
func (c *Consumer[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) { c.u.OnOutcome(key, tag, o) }

// Run connects, subscribes to the topology's queues and feeds target until
// Close is called or ctx ends. Every subscriber of target must report
// outcomes to OnOutcome. Run first checks the subscribers
// (transport.CheckSubscriptions) and returns an error wrapping
// runtime.ErrInvalidConfig, before it connects, for subscribers under the
// drop-oldest or drop-newest backlog policy (a dropped event would let it
// acknowledge a message no handler ran), without OnOutcome, or parking
// differently from one another.
//
// When the connection or a queue's channel is lost, the messages it
// delivered that had not started are withdrawn from the lanes (the broker
// delivers them again, to this consumer or another), and Run reconnects
// with a growing delay. When the broker refuses what the configuration
// asks for (credentials, the virtual host, a topology declared otherwise,
// the consistent-hash exchange without its plugin), trying again cannot
// help: Run ends as after Close and returns the broker's error, wrapping
// runtime.ErrInvalidConfig. (A refusal of the credentials or the virtual
// host that the client reports without the broker's own word, which is
// also what a socket closed during the handshake looks like, ends Run only
// the third time in a row.)
//
// After Close, Run stops taking messages, withdraws those that had not
// started, waits (up to Config.DrainTimeout, and Close's context) for the
// running ones, acknowledges what finished, closes its channels (the
// broker returns the rest to their queues, in order) and returns nil. When
// ctx ends instead, Run stops at once, as a crash would: it withdraws the
// messages that had not started, cancels the running ones, sends no more
// acknowledgements, closes the connection and returns ctx's error. When
// target fails (it is closed), Run ends like Close and returns the error.
// Run may be called once; a second call returns transport.ErrRunning.
func (c *Consumer[K, E]) Run(ctx context.Context, target transport.Target[E]) error {
	return c.u.Run(ctx, target)
}

// Close stops the consumer cleanly: Run stops taking messages, withdraws
// those that had not started, waits for the running ones (up to
// Config.DrainTimeout, and ctx), acknowledges what finished and closes
// its connection. Close returns Run's result, or ctx's error if Run does
// not return before ctx ends. Close before Run makes Run return at once.
func (c *Consumer[K, E]) Close(ctx context.Context) error { return c.u.Close(ctx) }

// Stats are a Consumer's counters since it started, and its state now: the
// transport.UnitStats of its queues, and its acknowledgements.
type Stats struct {
	transport.UnitStats
	// Acked is the number of acknowledgements sent (a multiple one counts
	// once).
	Acked uint64
	// Rejected is the number of bad messages rejected to the dead-letter
	// exchange (basic.nack without requeue).
	Rejected uint64
}

// Stats returns a snapshot of the consumer's counters.
func (c *Consumer[K, E]) Stats() Stats {
	return Stats{UnitStats: c.u.Stats(), Acked: c.acked.Load(), Rejected: c.rejected.Load()}
}

// Queues returns the state of the queues the consumer subscribes to, in
// the order of Config.Queues: Unsettled is what a queue's prefetch counts
// (less the acknowledgements being sent), and Blocked says when it is full.
func (c *Consumer[K, E]) Queues() []transport.UnitStatus { return c.u.Units() }

// settled is the intake's verdict on a message: finished, it is
// acknowledged; unfinished, it stays unacknowledged and returns to the
// queue when its channel closes.
func (c *Consumer[K, E]) settled(d delivery[K, E], st transport.Settlement) {
	if st == transport.Finished {
		d.s.settle(d.tag, false)
	}
}

// reject rejects a bad message (basic.nack without requeue): the broker
// moves it to the queue's dead-letter exchange, with its own x-death
// header. The rejection goes out in tag order with the acknowledgements.
func (c *Consumer[K, E]) reject(m transport.Message[E, delivery[K, E]], done func(error)) {
	m.Handle.s.settle(m.Handle.tag, true)
	done(nil) // settled Finished: no acknowledgement follows the reject
}

// broker is the consumer's transport.UnitBroker.
type broker[K comparable, E transport.Keyed[K]] struct{ c *Consumer[K, E] }

// Refused reports whether the broker refused what the configuration asks
// for, so that trying again cannot help: credentials or a virtual host it
// refuses, a topology that differs from the one declared
// (PRECONDITION_FAILED), an exchange type it does not know (the
// consistent-hash plugin not enabled). sure is false for the refusals the
// client makes up when the socket closes during the handshake
// (amqp.ErrCredentials, amqp.ErrVhost, amqp.ErrSASL): a network fault
// looks the same, so only their repetition is conclusive.
func (broker[K, E]) Refused(err error) (yes, sure bool) {
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

// Connect dials the broker and declares the topology; the end of ctx cuts
// both short (the client would wait up to its dial timeout, or for the
// heartbeats to give up, for a broker that does not answer).
func (b broker[K, E]) Connect(ctx context.Context) (transport.UnitConn[E, delivery[K, E], amqp.Delivery], error) {
	c := b.c
	var mu sync.Mutex
	var raw net.Conn
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if raw != nil {
			_ = raw.Close()
		}
	})
	defer stop()
	conn, err := amqp.DialConfig(c.cfg.URL, dialConfig(c.cfg.AMQP, c.tag, func(nc net.Conn) {
		mu.Lock()
		raw = nc
		mu.Unlock()
	}))
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: dial: %w", err)
	}
	cn := &connection[K, E]{c: c, conn: conn}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		if e := <-closed; e != nil {
			cn.Lose(e)
		}
		cn.Lose(errors.New("rabbitmq: the connection closed"))
	}()
	if err := c.declare(conn); err != nil {
		_ = conn.CloseDeadline(time.Now())
		return nil, err
	}
	return cn, nil
}

// declare declares the topology on a channel of its own.
func (c *Consumer[K, E]) declare(conn *amqp.Connection) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: open a channel: %w", err)
	}
	defer func() { _ = ch.Close() }()
	return c.cfg.Topology.Declare(ch)
}

// connection is one connection's transport.UnitConn.
type connection[K comparable, E transport.Keyed[K]] struct {
	c              *Consumer[K, E]
	conn           *amqp.Connection
	transport.Loss // when conn closed
}

func (cn *connection[K, E]) Subscribe(i int) (transport.UnitFeed[E, delivery[K, E], amqp.Delivery], error) {
	return cn.c.subscribe(cn.conn, cn.c.cfg.Queues[i])
}

func (cn *connection[K, E]) Close() { _ = cn.conn.Close() }
func (cn *connection[K, E]) Kill()  { _ = cn.conn.CloseDeadline(time.Now()) }

// dialConfig returns cfg with the connection's name, telling dialled of
// each socket it opens.
func dialConfig(cfg amqp.Config, name string, dialled func(net.Conn)) amqp.Config {
	props := amqp.NewConnectionProperties()
	for k, v := range cfg.Properties {
		props[k] = v
	}
	props.SetClientConnectionName(name)
	cfg.Properties = props
	base := cfg.Dial
	if base == nil {
		base = amqp.DefaultDial(30 * time.Second) // the client's own default
	}
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		nc, err := base(network, addr)
		if dialled != nil {
			dialled(nc)
		}
		return nc, err
	}
	return cfg
}

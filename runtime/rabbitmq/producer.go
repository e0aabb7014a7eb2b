package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// ErrUnroutable is wrapped by the error of a send that the broker could
// not route to any queue (the topology is missing or was changed).
var ErrUnroutable = errors.New("rabbitmq: message unroutable")

// ErrNacked is wrapped by the error of a send that the broker refused
// (basic.nack: an internal error of the queue).
var ErrNacked = errors.New("rabbitmq: publish refused by the broker")

// headerSeq carries a message's publish sequence on its producer's
// channel, so that a returned (unroutable) message fails its own send.
const headerSeq = "ordergen-publish-seq"

// Producer publishes the events of one entity to a Topology: one message
// per event, routed by its ordering key (see Routing), with the event type
// in the Type property, the key in the transport.HeaderKey header and the
// codec's encoding as body. It is a transport.AsyncSink, so a generated
// AccountProducer publishes through it, waiting for each event (Publish
// methods) or not (PublishAsync).
//
// Every publish is mandatory and confirmed (publisher confirms): a send
// succeeds once the broker has taken the message into its queue (for a
// durable queue, written it), and fails with ErrUnroutable when no queue
// took it, with ErrNacked when the broker refused it, or with the
// channel's error when the channel or connection closed before the
// confirm. Publishes of one producer go through one channel, so a key's
// messages reach its queue in the order of the calls. Once a send of a
// key fails, the key's later sends fail at once with an error wrapping
// transport.ErrKeyPaused until Resume(key); sends handed over before the
// failure reach their own outcome.
//
// After its channel closed the producer opens another on the next send; a
// producer that dialled its connection (ProducerConfig.URL) dials again
// when the connection closed, one given a connection fails every send once
// it closed (make a new producer on a new connection).
//
// Its methods (Send, SendAsync, Resume, Paused, Flush, Close) are its
// transport.OrderedSink's. SendAsync's done runs on the producer's confirm
// goroutine: it must be fast and must not block (nor send synchronously
// through the same producer). Close stops accepting sends (they fail with
// runtime.ErrClosed), waits for those in flight, closes the producer's
// channel, and the connection if the producer dialled it.
type Producer[K comparable, E any] struct {
	*transport.OrderedSink[K, E]
}

// ProducerConfig configures a Producer of the events E of one entity.
type ProducerConfig[E any] struct {
	// URL is the broker's amqp:// or amqps:// URL, as the consumer's: the
	// producer dials a connection of its own (with AMQP), which Close
	// closes. Leave it empty with Conn.
	URL string
	// AMQP configures the connection the producer dials (TLS, SASL,
	// Heartbeat, Dial, Properties). Its Recovery must be nil.
	AMQP amqp.Config
	// Conn is a connection the caller dialled and closes, used instead of
	// one dialled from URL. It must not recover automatically.
	Conn *amqp.Connection
	// Topology is where the producer publishes; it declares it first.
	// Required.
	Topology Topology
	// Codec encodes the events. Required; ordergen generates one per
	// entity.
	Codec durable.Codec[E]
}

// NewProducer returns a producer for cfg, after declaring its topology. It
// refuses, with an error wrapping runtime.ErrInvalidConfig, both URL and
// Conn or neither, a connection (or AMQP config) with automatic recovery
// (a recovered channel would renumber the confirms), an invalid topology,
// a nil codec, and a key type that is neither a string nor an integer.
func NewProducer[K comparable, E any](cfg ProducerConfig[E]) (*Producer[K, E], error) {
	pub, topo, err := newPublisher[K](cfg)
	if err != nil {
		return nil, err
	}
	sink, err := transport.NewOrderedSink[K, E](&writer[K, E]{pub: pub, topo: topo, codec: cfg.Codec})
	if err != nil {
		pub.close()
		return nil, err
	}
	return &Producer[K, E]{sink}, nil
}

// newPublisher checks cfg, connects (or takes Conn) and declares the
// topology.
func newPublisher[K comparable, E any](cfg ProducerConfig[E]) (*publisher, Topology, error) {
	switch {
	case (cfg.URL == "") == (cfg.Conn == nil):
		return nil, cfg.Topology, fmt.Errorf("rabbitmq: %w: give the producer a URL or a Conn (one of them)", runtime.ErrInvalidConfig)
	case cfg.AMQP.Recovery != nil || cfg.Conn != nil && cfg.Conn.IsRecoveryEnabled():
		return nil, cfg.Topology, fmt.Errorf("rabbitmq: %w: the connection recovers automatically: a recovered channel would renumber the publisher confirms", runtime.ErrInvalidConfig)
	case cfg.Codec == nil:
		return nil, cfg.Topology, fmt.Errorf("rabbitmq: %w: no codec", runtime.ErrInvalidConfig)
	}
	topo, err := cfg.Topology.withDefaults()
	if err != nil {
		return nil, topo, err
	}
	if _, err := transport.KeyText(*new(K)); err != nil {
		return nil, topo, fmt.Errorf("rabbitmq: %w", err)
	}
	pub := &publisher{conn: cfg.Conn}
	if cfg.URL != "" {
		amqpCfg := dialConfig(cfg.AMQP, "ordergen-producer", nil)
		pub.dial = func() (*amqp.Connection, error) { return amqp.DialConfig(cfg.URL, amqpCfg) }
	}
	if err := pub.declare(topo); err != nil {
		pub.close()
		return nil, topo, err
	}
	return pub, topo, nil
}

// writer is the RabbitMQ write an OrderedSink drives. Several sends of a
// key are in flight at once; were one published on a new channel after its
// predecessor failed on the closed one, it would arrive first. So the
// writer records the failed keys (transport.FailedKeys) and the publisher
// opens no new channel while the closed one still has sends to answer.
type writer[K comparable, E any] struct {
	pub    *publisher
	topo   Topology
	codec  durable.Codec[E]
	failed transport.FailedKeys[K]
	// checked, set by the package's tests, runs after Write's first check
	// of the key, before it publishes.
	checked func()
}

// Write publishes event and calls done with the broker's confirm.
func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	if err := w.failed.Err(key); err != nil {
		done(fmt.Errorf("rabbitmq: %w", err))
		return
	}
	if w.checked != nil {
		w.checked()
	}
	msg, exchange, routingKey, err := encode(w.topo, w.codec, key, event)
	if err != nil {
		done(err)
		return
	}
	addTrace(msg.Headers, transport.TraceOf(ctx))
	// The check above may pass while an earlier send of key is failing on
	// the channel this one would have used; publish checks again once it
	// holds a channel, when every failure of the channels before it is
	// known (see publish).
	w.pub.publish(ctx, exchange, routingKey, msg, func() error {
		if err := w.failed.Err(key); err != nil {
			return fmt.Errorf("rabbitmq: %w", err)
		}
		return nil
	}, func(err error) {
		if err != nil {
			w.failed.Fail(key, err)
		}
		done(err)
	})
}

var _ transport.ResumingWriter[string, any] = (*writer[string, any])(nil)

// Resume lets key's writes through again (OrderedSink.Resume calls it).
func (w *writer[K, E]) Resume(key K) { w.failed.Resume(key) }

// Close closes the producer's channel, and its connection if it dialled
// it.
func (w *writer[K, E]) Close(context.Context) error {
	w.pub.close()
	return nil
}

// encode builds the publishing of event and where it goes.
func encode[K comparable, E any](topo Topology, codec durable.Codec[E], key K, event E) (amqp.Publishing, string, string, error) {
	k, err := transport.KeyText(key)
	if err != nil {
		return amqp.Publishing{}, "", "", err
	}
	name, data, err := codec.Encode(event)
	if err != nil {
		return amqp.Publishing{}, "", "", fmt.Errorf("rabbitmq: encode an event of key %s: %w", k, err)
	}
	exchange, routingKey := topo.route(k)
	if len(routingKey) > 255 {
		return amqp.Publishing{}, "", "", fmt.Errorf("rabbitmq: key %.40q... is %d bytes, over AMQP's 255 for a routing key: use PublisherHash routing", k, len(k))
	}
	msg := amqp.Publishing{
		Headers:      amqp.Table{transport.HeaderKey: k},
		Type:         name,
		Body:         data,
		DeliveryMode: amqp.Persistent,
	}
	if topo.Transient {
		msg.DeliveryMode = amqp.Transient
	}
	return msg, exchange, routingKey, nil
}

// publisher publishes mandatory, confirmed messages on one channel of a
// connection, opening another when it closed, and dialling the connection
// again when it dials its own.
type publisher struct {
	dial func() (*amqp.Connection, error) // nil: conn is the caller's

	// mu guards conn and cur, and serialises publishes with their
	// sequence numbers.
	mu   sync.Mutex
	conn *amqp.Connection
	cur  *confirmChannel
}

// confirmChannel is a channel in confirm mode and the sends waiting for
// its confirms.
type confirmChannel struct {
	ch *amqp.Channel

	mu       sync.Mutex // guards what follows
	next     uint64     // the sequence number of the next publish (from 1)
	waiting  map[uint64]func(error)
	returned map[uint64]amqp.Return
	dead     error // set once the channel closed

	answered chan struct{} // closed once the channel closed and its sends were answered
}

// declare declares topo on a channel of its own.
func (p *publisher) declare(topo Topology) error {
	p.mu.Lock()
	conn, err := p.connection()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: open a channel: %w", err)
	}
	defer func() { _ = ch.Close() }()
	return topo.Declare(ch)
}

// channel returns the current channel, opening one if there is none or it
// closed; p.mu is held.
func (p *publisher) channel() (*confirmChannel, error) {
	if p.cur != nil {
		p.cur.mu.Lock()
		dead := p.cur.dead
		p.cur.mu.Unlock()
		if dead == nil && !p.cur.ch.IsClosed() {
			return p.cur, nil
		}
		select {
		case <-p.cur.answered:
		default:
			// Sends on the closed channel wait for their answers (failures):
			// a send on a new channel now could overtake one of its key's.
			return nil, errors.New("rabbitmq: the channel closed and its sends are not answered yet")
		}
		p.cur = nil
	}
	conn, err := p.connection()
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: open a channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("rabbitmq: confirm mode: %w", err)
	}
	cc := &confirmChannel{ch: ch, next: 1, waiting: map[uint64]func(error){}, returned: map[uint64]amqp.Return{}, answered: make(chan struct{})}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, 256))
	returns := ch.NotifyReturn(make(chan amqp.Return)) // unbuffered: a return is taken before the next confirm is passed on
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	go cc.listen(confirms, returns, closed)
	p.cur = cc
	return cc, nil
}

// listen answers the sends as their confirms arrive, until the channel
// closes; then it fails the sends still waiting.
func (cc *confirmChannel) listen(confirms <-chan amqp.Confirmation, returns <-chan amqp.Return, closed <-chan *amqp.Error) {
	for confirms != nil {
		select {
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			if seq, err := strconv.ParseUint(fmt.Sprint(r.Headers[headerSeq]), 10, 64); err == nil {
				cc.mu.Lock()
				cc.returned[seq] = r
				cc.mu.Unlock()
			}
		case c, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			cc.mu.Lock()
			done := cc.waiting[c.DeliveryTag]
			delete(cc.waiting, c.DeliveryTag)
			r, wasReturned := cc.returned[c.DeliveryTag]
			delete(cc.returned, c.DeliveryTag)
			cc.mu.Unlock()
			switch {
			case done == nil:
			case wasReturned:
				done(fmt.Errorf("%w: exchange %q, routing key %q: %d %s", ErrUnroutable, r.Exchange, r.RoutingKey, r.ReplyCode, r.ReplyText))
			case !c.Ack:
				done(ErrNacked)
			default:
				done(nil)
			}
		}
	}
	err := errors.New("rabbitmq: the channel closed before the broker confirmed the message")
	if e, ok := <-closed; ok && e != nil {
		err = fmt.Errorf("rabbitmq: the channel closed before the broker confirmed the message: %w", e)
	}
	cc.mu.Lock()
	cc.dead = err
	waiting := cc.waiting
	cc.waiting = map[uint64]func(error){}
	cc.mu.Unlock()
	for _, done := range waiting {
		done(err)
	}
	close(cc.answered)
}

// publish publishes msg, mandatory, and calls done with the broker's
// confirm. admit, when not nil, says whether the send may still go once
// publish holds a channel: by then every send that failed before it on
// this channel or a closed one has been answered (a synchronous failure
// under p.mu, a closed channel's before it lets a new one open), so a
// writer's record of failed keys is complete for it.
func (p *publisher) publish(ctx context.Context, exchange, routingKey string, msg amqp.Publishing, admit func() error, done func(error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cc, err := p.channel()
	if err != nil {
		done(err)
		return
	}
	if admit != nil {
		if err := admit(); err != nil {
			done(err)
			return
		}
	}
	cc.mu.Lock()
	if cc.dead != nil {
		err := cc.dead
		cc.mu.Unlock()
		done(err)
		return
	}
	seq := cc.next
	msg.Headers[headerSeq] = strconv.FormatUint(seq, 10)
	cc.waiting[seq] = done
	cc.mu.Unlock()
	if err := cc.ch.PublishWithContext(ctx, exchange, routingKey, true, false, msg); err != nil {
		cc.mu.Lock()
		_, still := cc.waiting[seq] // not failed by a closing channel meanwhile
		delete(cc.waiting, seq)
		cc.mu.Unlock()
		if still {
			done(fmt.Errorf("rabbitmq: publish to exchange %q, routing key %q: %w", exchange, routingKey, err))
		}
		return
	}
	cc.mu.Lock()
	cc.next++
	cc.mu.Unlock()
}

// connection returns the connection, dialling it when the publisher dials
// its own and it is not open; p.mu is held.
func (p *publisher) connection() (*amqp.Connection, error) {
	if p.dial != nil && (p.conn == nil || p.conn.IsClosed()) {
		conn, err := p.dial()
		if err != nil {
			return nil, fmt.Errorf("rabbitmq: dial: %w", err)
		}
		p.conn = conn
	}
	return p.conn, nil
}

// close closes the current channel, and the connection if the publisher
// dialled it.
func (p *publisher) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		_ = p.cur.ch.Close()
		p.cur = nil
	}
	if p.dial != nil && p.conn != nil {
		_ = p.conn.Close()
	}
}

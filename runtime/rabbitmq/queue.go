package rabbitmq

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime/transport"
)

// sub is one subscription: one queue consumed on one channel, from the
// subscription to the channel's close (a transport.UnitFeed). Delivery
// tags mean something only on its channel.
type sub[K comparable, E transport.Keyed[K]] struct {
	c          *Consumer[K, E]
	name       string
	ch         *amqp.Channel
	deliveries <-chan amqp.Delivery
	closed     chan *amqp.Error

	ackWake chan struct{} // settlements to send
	ackStop chan bool     // the acker's last pass (true: send what is pending)
	ackDone chan struct{}

	// mu guards led; it is taken under the intake's locks.
	mu  sync.Mutex
	led *ledger
}

// subscribe opens a channel on conn and consumes queue q from it.
func (c *Consumer[K, E]) subscribe(conn *amqp.Connection, q int) (*sub[K, E], error) {
	name := c.cfg.Topology.Queue(q)
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: open a channel for %s: %w", name, err)
	}
	// Declared again: a queue deleted meanwhile comes back (empty), and
	// its dead-letter exchange with it, without which a rejected message
	// would be dropped.
	if err := c.cfg.Topology.declare(ch, []int{q}); err != nil {
		_ = ch.Close()
		return nil, err
	}
	if err := ch.Qos(c.cfg.Prefetch, 0, false); err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("rabbitmq: prefetch of %s: %w", name, err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	deliveries, err := ch.Consume(name, c.tag+"-"+strconv.Itoa(q), false, false, false, false, nil)
	if err != nil {
		_ = ch.Close()
		return nil, fmt.Errorf("rabbitmq: consume %s: %w", name, err)
	}
	sb := &sub[K, E]{c: c, name: name, ch: ch, deliveries: deliveries, closed: closed,
		ackWake: make(chan struct{}, 1), ackStop: make(chan bool, 1), ackDone: make(chan struct{}), led: newLedger()}
	go sb.acker()
	return sb, nil
}

// Deliveries is the channel's deliveries, closed when the channel closes.
func (sb *sub[K, E]) Deliveries() <-chan amqp.Delivery { return sb.deliveries }

// Decode records a delivery and decodes it: the key is in the
// transport.HeaderKey header, the event type in the Type property.
func (sb *sub[K, E]) Decode(d amqp.Delivery) transport.Message[E, delivery[K, E]] {
	sb.mu.Lock()
	sb.led.deliver(d.DeliveryTag)
	sb.mu.Unlock()
	key, _ := d.Headers[transport.HeaderKey].(string)
	m := transport.Message[E, delivery[K, E]]{Handle: delivery[K, E]{sb, d.DeliveryTag}, Trace: traceOf(d.Headers)}
	if m.Event, m.Bad = sb.c.dec.Decode(d.Type, key, d.Body); m.Bad != nil {
		m.Key, m.ID = key, sb.name+"#"+strconv.FormatUint(d.DeliveryTag, 10)
	}
	return m
}

// settle marks a message to acknowledge or reject and wakes the acker.
// It may run under the intake's locks.
func (sb *sub[K, E]) settle(tag uint64, reject bool) {
	sb.mu.Lock()
	ok := sb.led.settle(tag, reject)
	sb.mu.Unlock()
	if ok {
		select {
		case sb.ackWake <- struct{}{}:
		default:
		}
	}
}

// acker sends the settlements, in tag order, until its last pass.
func (sb *sub[K, E]) acker() {
	defer close(sb.ackDone)
	for {
		select {
		case <-sb.ackWake:
			sb.send()
		case flush := <-sb.ackStop:
			if flush {
				sb.send()
			}
			return
		}
	}
}

// send sends the pending settlements.
func (sb *sub[K, E]) send() {
	sb.mu.Lock()
	frames := sb.led.take()
	sb.mu.Unlock()
	for _, f := range frames {
		var err error
		if f.reject {
			err = sb.ch.Nack(f.tag, false, false)
		} else {
			err = sb.ch.Ack(f.tag, f.multiple)
		}
		if err != nil {
			// The channel is closing: the broker returns these messages,
			// and the next consumer's guard skips the finished ones.
			sb.c.cfg.Logger.Debug("ordergen/rabbitmq: acknowledgement not sent", "queue", sb.name, "delivery_tag", f.tag, "error", err)
			return
		}
		if f.reject {
			sb.c.rejected.Add(1)
		} else {
			sb.c.acked.Add(1)
		}
	}
}

// Close ends the subscription once its stream ended: the acker's last
// pass (sending what is pending when flush), then the channel's close,
// which returns its unacknowledged messages to the queue.
func (sb *sub[K, E]) Close(flush bool) {
	sb.ackStop <- flush
	<-sb.ackDone
	_ = sb.ch.Close()
}

// Err returns why the channel closed, if the broker said.
func (sb *sub[K, E]) Err() error {
	select {
	case e, ok := <-sb.closed:
		if ok && e != nil {
			return e
		}
	case <-time.After(time.Second):
	}
	return errors.New("rabbitmq: the channel closed")
}

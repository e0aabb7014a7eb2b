package rabbitmq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// sub is one subscription: one queue consumed on one channel, from the
// subscription to the channel's close. It is one ownership of the queue:
// delivery tags mean something only on its channel.
type sub[K comparable, E Keyed[K]] struct {
	c          *Consumer[K, E]
	index      int
	name       string
	ch         *amqp.Channel
	own        *transport.Ownership
	deliveries <-chan amqp.Delivery
	closed     chan *amqp.Error
	state      *queueState

	wake    chan struct{} // settles and parks: retry the stash, look at the prefetch again
	ackWake chan struct{} // settlements to send
	ackStop chan bool     // the acker's last pass (true: send what is pending)
	ackDone chan struct{}

	mu  sync.Mutex // guards led; taken under the source's lock, before c.mu
	led *ledger

	// Owned by the receive loop.
	stash   []*item[K, E] // messages taken and refused for lack of room, in order
	blocked blockReason

	stashed atomic.Bool // len(stash) > 0, for the consumer's wake-ups
}

// item is a message decoded and taken, waiting for its offer.
type item[K comparable, E Keyed[K]] struct {
	in    *inbound[K, E]
	event E
	tag   uint64 // its tag in the source
}

// blockReason says why a queue's deliveries stopped: its prefetch is full.
type blockReason uint8

const (
	notBlocked blockReason = iota
	blockedInFlight
	blockedParked
)

var blockNames = [...]string{notBlocked: "", blockedInFlight: "in_flight", blockedParked: "parked"}

func (r blockReason) String() string { return blockNames[r] }

// queueState is what the consumer knows of one queue over its
// subscriptions, for stats and metrics.
type queueState struct {
	name string

	mu         sync.Mutex // guards what follows
	subscribed bool
	unsettled  int
	blocked    blockReason
	consumed   uint64
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
	sb := &sub[K, E]{
		c: c, index: q, name: name, ch: ch, own: c.source().Own(), deliveries: deliveries, closed: closed,
		state: c.queue[q], wake: make(chan struct{}, 1), ackWake: make(chan struct{}, 1),
		ackStop: make(chan bool, 1), ackDone: make(chan struct{}), led: newLedger(),
	}
	c.mu.Lock()
	c.subs[sb] = struct{}{}
	c.mu.Unlock()
	sb.state.mu.Lock()
	sb.state.subscribed = true
	sb.state.mu.Unlock()
	go sb.acker()
	c.cfg.Logger.Info("ordergen/rabbitmq: subscribed (single active consumer: messages come once this consumer is the queue's active one)", "queue", name, "prefetch", c.cfg.Prefetch)
	return sb, nil
}

// receive takes the queue's deliveries until stop is closed (lost false),
// the channel closes (lost true), or the target fails (fatal).
func (sb *sub[K, E]) receive(stop <-chan struct{}) (lost bool, fatal error) {
	for {
		select {
		case <-stop:
			return false, nil
		case d, ok := <-sb.deliveries:
			if !ok {
				return true, nil
			}
			if err := sb.handle(d); err != nil {
				return false, err
			}
		case <-sb.wake:
			if err := sb.retry(); err != nil {
				return false, err
			}
		}
		sb.noteStash()
		sb.look()
	}
}

// noteStash tells the consumer whether messages of this subscription wait
// for room, so that a settlement anywhere wakes it.
func (sb *sub[K, E]) noteStash() {
	waiting := len(sb.stash) > 0
	if sb.stashed.Load() == waiting {
		return
	}
	sb.stashed.Store(waiting)
	if waiting {
		sb.c.stashing.Add(1)
	} else {
		sb.c.stashing.Add(-1)
	}
	// A settlement between the refusal and the flag may have missed it:
	// look again.
	sb.poke()
}

// handle records a delivery, rejects it when it is bad, and otherwise
// takes and offers it (after the stash, if one waits).
func (sb *sub[K, E]) handle(d amqp.Delivery) error {
	c := sb.c
	sb.mu.Lock()
	sb.led.deliver(d.DeliveryTag)
	sb.mu.Unlock()
	sb.state.mu.Lock()
	sb.state.consumed++
	sb.state.mu.Unlock()
	c.stats.delivered.Add(1)
	ev, reason, err := decode[K](c.cfg.Codec, d)
	if reason != "" {
		sb.reject(d.DeliveryTag, d.Headers[HeaderKey], reason, err)
		return nil
	}
	in := &inbound[K, E]{s: sb, tag: d.DeliveryTag}
	tag, err := c.source().Take(sb.own, in)
	if err != nil {
		return nil // the ownership ended: the channel is closing
	}
	it := &item[K, E]{in: in, event: ev, tag: tag}
	if len(sb.stash) > 0 {
		sb.stash = append(sb.stash, it)
		return nil
	}
	sb.stash = append(sb.stash, it)
	return sb.retry()
}

// retry offers the stashed messages in order until one is refused for lack
// of room.
func (sb *sub[K, E]) retry() error {
	c := sb.c
	for len(sb.stash) > 0 {
		it := sb.stash[0]
		err := c.source().Offer(c.nowait, it.tag, it.event)
		switch {
		case err == nil:
			c.stats.submitted.Add(1)
		case errors.Is(err, transport.ErrOwnershipEnded):
			sb.stash = nil
			return nil
		case errors.Is(err, runtime.ErrBacklogFull) || errors.Is(err, context.Canceled):
			return nil // an outcome wakes the loop
		case errors.Is(err, runtime.ErrInvalidEvent):
			it.in.reject = true
			sb.logReject(it.in.tag, it.event.EventKey(), ReasonInvalidEvent, err)
			if err := c.source().Resolve(it.tag, transport.Finished); err != nil {
				return fmt.Errorf("rabbitmq: settle a rejected message of %s: %w", sb.name, err)
			}
		default:
			return fmt.Errorf("rabbitmq: submit a message of %s: %w", sb.name, err)
		}
		sb.stash[0] = nil
		sb.stash = sb.stash[1:]
	}
	sb.stash = nil
	return nil
}

// reject sends a bad message to the dead-letter exchange.
func (sb *sub[K, E]) reject(tag uint64, key any, reason Reason, err error) {
	sb.logReject(tag, key, reason, err)
	sb.settle(tag, true)
}

func (sb *sub[K, E]) logReject(tag uint64, key any, reason Reason, err error) {
	c := sb.c
	c.stats.deadLetter(reason)
	c.cfg.Logger.Warn("ordergen/rabbitmq: message rejected to the dead-letter exchange", "queue", sb.name,
		"delivery_tag", tag, "key", key, "reason", string(reason), "error", err, "to", c.cfg.Topology.DeadLetterExchange())
}

// settle marks a message to acknowledge or reject and wakes the acker.
// It may run under the source's lock.
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

// poke wakes the receive loop. It may run under the source's lock.
func (sb *sub[K, E]) poke() {
	select {
	case sb.wake <- struct{}{}:
	default:
	}
}

// look finds whether the prefetch is full, and whether parked messages
// fill it, logging each change an operator must see. Once parked messages
// held the prefetch, the queue stays blockedParked until they hold less
// than half of it, so that a queue crawling on the room left is not
// reported blocked and free again at every message.
func (sb *sub[K, E]) look() {
	c := sb.c
	sb.mu.Lock()
	unsettled := sb.led.unsettled()
	sb.mu.Unlock()
	full := unsettled >= c.cfg.Prefetch
	was := sb.blocked
	why := notBlocked
	parked := 0
	if full || was == blockedParked {
		_, parked = c.source().UnsettledOf(sb.own)
		switch {
		case 2*parked >= c.cfg.Prefetch:
			why = blockedParked
		case full:
			why = blockedInFlight
		}
	}
	sb.blocked = why
	sb.state.mu.Lock()
	sb.state.unsettled = unsettled
	sb.state.blocked = why
	sb.state.mu.Unlock()
	switch {
	case why == was:
	case why == blockedParked:
		c.cfg.Logger.Warn("ordergen/rabbitmq: queue blocked: messages parked in memory hold its prefetch, so the broker delivers nothing more of it, for any key, until their parks are resolved (replay or discard the parked keys, see the dispatcher's ParkedKeys), or use a park store",
			"queue", sb.name, "parked", parked, "prefetch", c.cfg.Prefetch)
	case was == blockedParked:
		c.cfg.Logger.Info("ordergen/rabbitmq: queue unblocked: parked messages no longer hold its prefetch", "queue", sb.name, "parked", parked, "now", why.String())
	default:
		c.cfg.Logger.Debug("ordergen/rabbitmq: queue prefetch", "queue", sb.name, "now", why.String(), "was", was.String())
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
			sb.c.stats.rejected.Add(1)
		} else {
			sb.c.stats.acks.Add(1)
		}
	}
	if len(frames) > 0 {
		sb.poke() // the prefetch has room again: look at it
	}
}

// finish ends the subscription once its ownership ended: the acker's last
// pass (sending what is pending when flush), then the channel's close,
// which returns its unacknowledged messages to the queue.
func (sb *sub[K, E]) finish(flush bool) {
	sb.stash = nil
	sb.noteStash()
	sb.ackStop <- flush
	<-sb.ackDone
	_ = sb.ch.Close()
	c := sb.c
	c.mu.Lock()
	delete(c.subs, sb)
	c.mu.Unlock()
	sb.state.mu.Lock()
	sb.state.subscribed = false
	sb.state.unsettled = 0
	sb.state.blocked = notBlocked
	sb.state.mu.Unlock()
	if sb.blocked == blockedParked {
		c.cfg.Logger.Info("ordergen/rabbitmq: queue unsubscribed while parked messages held its prefetch; they return to the queue", "queue", sb.name)
	}
}

// closeErr returns why the channel closed, if the broker said.
func (sb *sub[K, E]) closeErr() error {
	select {
	case e, ok := <-sb.closed:
		if ok && e != nil {
			return e
		}
	case <-time.After(time.Second):
	}
	return errors.New("rabbitmq: the channel closed")
}

// decode turns a delivery into an event, or gives the reason it is bad.
func decode[K comparable, E Keyed[K]](codec durable.Codec[E], d amqp.Delivery) (E, Reason, error) {
	var zero E
	if d.Type == "" {
		return zero, ReasonMissingType, errors.New("no Type property")
	}
	keyText, ok := d.Headers[HeaderKey].(string)
	if !ok || keyText == "" {
		return zero, ReasonMissingKey, fmt.Errorf("no %s header", HeaderKey)
	}
	ev, err := codec.Decode(d.Type, d.Body)
	switch {
	case errors.Is(err, durable.ErrUnknownEventType):
		return zero, ReasonUnknownType, err
	case err != nil:
		return zero, ReasonUndecodable, err
	}
	key, err := durable.DecodeKey[K](keyText)
	if err != nil {
		return zero, ReasonUndecodable, err
	}
	if key != ev.EventKey() {
		text, _ := durable.EncodeKey(ev.EventKey())
		if !bytes.Equal([]byte(text), []byte(keyText)) {
			return zero, ReasonKeyMismatch, fmt.Errorf("message key %q, event key %q", keyText, text)
		}
	}
	return ev, "", nil
}

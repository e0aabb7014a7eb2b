package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime/transport"
)

// errLost ends a session whose connection was lost.
var errLost = errors.New("rabbitmq: connection lost")

// session is one connection's life: its queues' subscriptions, each kept
// up by a supervisor that subscribes again after its channel was lost.
type session[K comparable, E Keyed[K]] struct {
	c    *Consumer[K, E]
	conn *amqp.Connection
	stop chan struct{} // closed when the session ends: supervisors stop
	wg   sync.WaitGroup

	fatalOnce sync.Once
	fatal     chan error // the target failed
}

// session runs the consumer on conn until Close, ctx's end, the loss of
// the connection (lost) or the target's failure.
func (c *Consumer[K, E]) session(ctx context.Context, conn *amqp.Connection) (lost bool, err error) {
	s := &session[K, E]{c: c, conn: conn, stop: make(chan struct{}), fatal: make(chan error, 1)}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	stop := c.watch(ctx, func() { _ = conn.CloseDeadline(time.Now()) })
	err = c.declare(conn)
	stop()
	if err != nil {
		_ = conn.Close()
		return true, err
	}
	// Random order: consumers that start together spread the queues'
	// single active consumers among them.
	order := append([]int(nil), c.cfg.Queues...)
	rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, q := range order {
		s.wg.Go(func() { s.supervise(q) })
	}

	select {
	case <-c.closeCh:
		c.drain(s)
		return false, nil
	case err := <-s.fatal:
		c.drain(s)
		return false, err
	case <-ctx.Done():
		close(s.stop)
		s.wg.Wait()
		subs := c.current()
		_, _ = c.source().End(ended("the consumer stopped: Run's context ended"), owners(subs)...)
		// As a crash: the socket closes at once, without waiting for a
		// broker that may not answer; the broker returns the
		// unacknowledged messages to their queues.
		_ = conn.CloseDeadline(time.Now())
		for _, sb := range subs {
			sb.finish(false)
		}
		return false, ctx.Err()
	case e := <-closed:
		close(s.stop)
		s.wg.Wait()
		// The supervisors end the subscriptions they see lost; those that
		// saw the stop first end here.
		subs := c.current()
		_, _ = c.source().End(ended("the connection was lost: the broker returns its messages to the queues"), owners(subs)...)
		for _, sb := range subs {
			sb.finish(false)
		}
		if e != nil {
			return true, fmt.Errorf("%w: %w", errLost, e)
		}
		return true, errLost
	}
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

// drain ends the session cleanly: the subscriptions stop taking messages,
// their ownerships end (what has not started is withdrawn, the running
// handlers get up to DrainTimeout), what finished is acknowledged, then
// the channels and the connection close and the broker returns the rest.
//
// The drain, then acknowledging and closing, get until Close's context or
// two DrainTimeouts end: then the connection's socket closes at once,
// which ends the closes of a broker that stopped answering (they would
// wait for the heartbeats to give up); the acknowledgements not sent by
// then are lost, and the broker delivers those messages again.
func (c *Consumer[K, E]) drain(s *session[K, E]) {
	// A supervisor subscribing again waits for the broker too: what
	// follows gets until Close's context or two DrainTimeouts end (the
	// drain, then acknowledging and closing), then the socket closes.
	kctx, cancelKill := context.WithTimeout(c.closeContext(), 2*c.cfg.DrainTimeout)
	defer cancelKill()
	kill := context.AfterFunc(kctx, func() {
		c.cfg.Logger.Warn("ordergen/rabbitmq: the broker did not answer the close in time; the connection closes at once, and acknowledgements not sent are lost (those messages come again)", "consumer", c.cfg.Name)
		_ = s.conn.CloseDeadline(time.Now())
	})
	defer kill()
	close(s.stop)
	s.wg.Wait()
	subs := c.current()
	ctx, cancel := context.WithTimeoutCause(c.closeContext(), c.cfg.DrainTimeout,
		fmt.Errorf("%w: rabbitmq: the consumer closed and DrainTimeout (%v) passed", transport.ErrOwnershipEnded, c.cfg.DrainTimeout))
	left, err := c.source().End(ctx, owners(subs)...)
	cancel()
	if err != nil {
		c.cfg.Logger.Warn("ordergen/rabbitmq: handlers still ran when the drain ended; their messages return to the queues", "consumer", c.cfg.Name, "returned", left, "error", err)
	}
	for _, sb := range subs {
		sb.finish(true)
	}
	_ = s.conn.Close()
}

// ended returns a context that is done already, whose cause (what the
// handlers cancelled by an ending ownership see) says why it ended.
func ended(why string) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("%w: rabbitmq: %s", transport.ErrOwnershipEnded, why))
	return ctx
}

// supervise keeps queue q subscribed until the session stops or the
// connection closes.
func (s *session[K, E]) supervise(q int) {
	c := s.c
	delay := c.cfg.ReconnectDelay
	for {
		sb, err := c.subscribe(s.conn, q)
		if yes, sure := refused(err); yes && sure {
			s.fatalOnce.Do(func() { s.fatal <- fmt.Errorf("%w: %w", ErrInvalidConfig, err) })
			return
		}
		if err == nil {
			lost, fatal := sb.receive(s.stop)
			if fatal != nil {
				s.fatalOnce.Do(func() { s.fatal <- fatal })
				return
			}
			if !lost {
				return // stopping: the session ends the subscription
			}
			// The channel closed: the broker returns its unacknowledged
			// messages; what has not started here must not start.
			_, _ = c.source().End(ended("the queue's channel was lost: the broker returns its messages to the queue"), sb.own)
			sb.finish(false)
			err = sb.closeErr()
		}
		if s.conn.IsClosed() {
			return
		}
		select {
		case <-s.stop:
			return
		default:
		}
		c.stats.queueLosses.Add(1)
		c.cfg.Logger.Error("ordergen/rabbitmq: queue subscription lost; subscribing again", "queue", c.cfg.Topology.Queue(q), "in", delay, "error", err)
		if !sleepOr(s.stop, delay) {
			return
		}
		delay = min(2*delay, c.cfg.MaxReconnectDelay)
	}
}

// owners returns the ownerships of subs.
func owners[K comparable, E Keyed[K]](subs []*sub[K, E]) []*transport.Ownership {
	out := make([]*transport.Ownership, len(subs))
	for i, sb := range subs {
		out[i] = sb.own
	}
	return out
}

// current returns the subscriptions registered.
func (c *Consumer[K, E]) current() []*sub[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*sub[K, E], 0, len(c.subs))
	for sb := range c.subs {
		out = append(out, sb)
	}
	return out
}

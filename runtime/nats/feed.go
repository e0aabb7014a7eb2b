package nats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime/transport"
)

// held is a message a feed took and has not acknowledged: the intake's
// handle of it.
type held[K comparable, E transport.Keyed[K]] struct {
	f   *feed[K, E]
	seq uint64        // its stream sequence
	msg jetstream.Msg // acks go to its reply subject
}

// feed is one partition's pull (a transport.UnitFeed). One goroutine (run)
// passes the server's deliveries on and sends the acknowledgements.
//
// It keeps each key's order across a change of hands: JetStream gives the
// last holder's unacknowledged messages to the next one only when their
// AckWait ends, while new messages come at once and would overtake their
// keys' earlier ones. So a new feed holds its deliveries back until every
// message pending at the server is one it holds (the consumer's
// NumAckPending), then lets them through in stream order, and the rest as
// they come. A delivery under another pin or of a message it holds (its
// lease lapsed) gives the partition up; the next feed gates again.
type feed[K comparable, E transport.Keyed[K]] struct {
	name           string
	cn             *conn[K, E]
	cons           jetstream.Consumer
	cc             jetstream.ConsumeContext
	in             chan jetstream.Msg // from the client's callback
	out            chan *held[K, E]   // to the intake, in order
	stop           chan struct{}      // closed by Close
	ran            chan struct{}      // run returned
	wake           chan struct{}      // acks to send
	transport.Loss                    // the partition was given up

	mu   sync.Mutex // guards what follows; taken under the intake's locks
	held map[uint64]*held[K, E]
	acks []*held[K, E]
	pin  string // the pin of the first delivery
}

// gatePoll is how often a closed gate asks the server what is pending.
const gatePoll = 100 * time.Millisecond

// subscribe pulls partition p's consumer in the priority group.
func (cn *conn[K, E]) subscribe(p int) (*feed[K, E], error) {
	cfg := cn.c.cfg
	name := cfg.Topology.ConsumerName(p)
	ctx, cancel := context.WithTimeout(cn.ctx, cfg.DrainTimeout)
	defer cancel()
	cons, err := cn.stream.Consumer(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("nats: consumer %s: %w", name, err)
	}
	batch := min(cfg.MaxAckPending, 256)
	f := &feed[K, E]{name: name, cn: cn, cons: cons, in: make(chan jetstream.Msg, cfg.MaxAckPending+batch), out: make(chan *held[K, E]),
		stop: make(chan struct{}), ran: make(chan struct{}), wake: make(chan struct{}, 1), held: map[uint64]*held[K, E]{}}
	f.cc, err = cons.Consume(func(m jetstream.Msg) {
		select {
		case f.in <- m:
		case <-f.stop:
		}
	}, jetstream.PullPriorityGroup(group), jetstream.PullMaxMessages(batch), jetstream.PullExpiry(max(time.Second, cfg.PinnedTTL/4)),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrBadRequest) || errors.Is(err, jetstream.ErrPinIDMismatch) {
				f.Lose(fmt.Errorf("nats: %s: %w", name, err))
			}
		}))
	if err != nil {
		return nil, fmt.Errorf("nats: consume %s: %w", name, err)
	}
	go f.run()
	return f, nil
}

// Deliveries are the partition's messages, in order, past the gate.
func (f *feed[K, E]) Deliveries() <-chan *held[K, E] { return f.out }

// run passes the deliveries on, once the gate is open (see feed), and
// sends the acknowledgements, until Close or a loss.
func (f *feed[K, E]) run() {
	defer close(f.ran)
	defer close(f.out)
	var buf []*held[K, E]
	open := false
	tick := time.NewTicker(gatePoll)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-f.Lost():
			return
		case <-f.wake:
			f.sendAcks()
		case m := <-f.in:
			h, err := f.take(m)
			if err != nil {
				f.Lose(err)
				return
			}
			if !open {
				buf = append(buf, h)
			} else if !f.send(h) {
				return
			}
		case <-tick.C:
		}
		if !open && len(buf) > 0 && f.othersSettled() {
			open = true
			tick.Stop()
			slices.SortFunc(buf, func(a, b *held[K, E]) int { return cmp.Compare(a.seq, b.seq) })
			for _, h := range buf {
				if !f.send(h) {
					return
				}
			}
			buf = nil
		}
	}
}

// take records a fresh delivery. A delivery of a message the feed holds
// (its lease lapsed) or under another pin than the first (the server
// pinned another client) is an error: the partition is lost.
func (f *feed[K, E]) take(m jetstream.Msg) (*held[K, E], error) {
	meta, err := m.Metadata()
	if err != nil {
		return nil, fmt.Errorf("nats: %s: a delivery without metadata: %w", f.name, err)
	}
	pin := m.Headers().Get("Nats-Pin-Id")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pin = cmp.Or(f.pin, pin)
	if pin != "" && pin != f.pin {
		return nil, fmt.Errorf("nats: %s: the server pinned another client to the partition", f.name)
	}
	if f.held[meta.Sequence.Stream] != nil {
		return nil, fmt.Errorf("nats: %s: message %d delivered again while held: its lease lapsed", f.name, meta.Sequence.Stream)
	}
	h := &held[K, E]{f: f, seq: meta.Sequence.Stream, msg: m}
	f.held[h.seq] = h
	f.cn.leases.Hold(h, time.Now())
	return h, nil
}

// othersSettled reports whether every message pending at the server is
// one the feed holds; deliveries on their way make it answer no.
func (f *feed[K, E]) othersSettled() bool {
	ctx, cancel := context.WithTimeout(f.cn.ctx, f.cn.c.cfg.DrainTimeout)
	defer cancel()
	info, err := f.cons.Info(ctx)
	if err != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return info.NumAckPending <= len(f.held)
}

// send passes h on, sending acknowledgements meanwhile.
func (f *feed[K, E]) send(h *held[K, E]) bool {
	for {
		select {
		case f.out <- h:
			return true
		case <-f.wake:
			f.sendAcks()
		case <-f.stop:
			return false
		case <-f.Lost():
			return false
		}
	}
}

// ack queues h's acknowledgement; it runs under the intake's locks.
func (f *feed[K, E]) ack(h *held[K, E]) {
	f.mu.Lock()
	delete(f.held, h.seq)
	f.acks = append(f.acks, h)
	f.mu.Unlock()
	f.cn.leases.Release(h)
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *feed[K, E]) sendAcks() {
	f.mu.Lock()
	acks := f.acks
	f.acks = nil
	f.mu.Unlock()
	for _, h := range acks {
		if err := h.msg.Ack(); err != nil {
			f.cn.c.cfg.Logger.Debug("ordergen/nats: acknowledgement not sent", "consumer", f.name, "seq", h.seq, "error", err)
		}
	}
}

// Close ends the pull once its stream ended. With flush (a clean close) it
// sends the acknowledgements pending, gives the messages it holds back in
// stream order (a nak each: the server delivers them again first, in that
// order) and unpins the partition, so that a standby takes it at once;
// without, it sends nothing more: the server delivers them again when
// their AckWait ends.
func (f *feed[K, E]) Close(flush bool) {
	close(f.stop)
	f.cc.Stop()
	<-f.ran
	if flush {
		f.sendAcks()
		for len(f.in) > 0 {
			_, _ = f.take(<-f.in)
		}
	}
	f.mu.Lock()
	rest := make([]*held[K, E], 0, len(f.held))
	for _, h := range f.held {
		rest = append(rest, h)
	}
	f.mu.Unlock()
	slices.SortFunc(rest, func(a, b *held[K, E]) int { return cmp.Compare(a.seq, b.seq) })
	for _, h := range rest {
		f.cn.leases.Release(h)
		if flush {
			_ = h.msg.Nak()
		}
	}
	if flush {
		ctx, cancel := context.WithTimeout(f.cn.ctx, f.cn.c.cfg.DrainTimeout)
		defer cancel()
		_ = f.cn.nc.FlushWithContext(ctx)
		if f.pin != "" {
			_ = f.cn.stream.UnpinConsumer(ctx, f.name, group)
		}
	}
}

package nats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

// feed is one partition's pull (a transport.UnitFeed on a transport.Pull).
//
// It keeps each key's order across a change of hands: JetStream gives the
// last holder's unacknowledged messages to the next one only when their
// AckWait ends, while new messages come at once and would overtake their
// keys' earlier ones. So a new feed holds its deliveries back (the Pull's
// gate) until every message pending at the server is one it holds (the
// consumer's NumAckPending), then lets them through in stream order, and
// the rest as they come. A delivery under another pin or of a message it
// holds (its lease lapsed) gives the partition up; the next feed gates
// again.
type feed[K comparable, E transport.Keyed[K]] struct {
	*transport.Pull[jetstream.Msg, *held[K, E]]
	name string
	cn   *conn[K, E]
	cons jetstream.Consumer
	cc   jetstream.ConsumeContext
	pin  string // the pin of the first delivery; the Pull's goroutine's, then Close's
}

// Subscribe pulls the consumer of the i-th partition of Config.Partitions
// in the priority group.
func (cn *conn[K, E]) Subscribe(i int) (transport.UnitFeed[E, *held[K, E], *held[K, E]], error) {
	cfg := cn.c.cfg
	name := cfg.Topology.ConsumerName(cfg.Partitions[i])
	ctx, cancel := context.WithTimeout(cn.ctx, cfg.DrainTimeout)
	defer cancel()
	f := &feed[K, E]{name: name, cn: cn}
	var err error
	if f.cons, err = cn.stream.Consumer(ctx, name); err != nil {
		return nil, fmt.Errorf("nats: consumer %s: %w", name, err)
	}
	batch := min(cfg.MaxAckPending, 256)
	f.Pull, _ = transport.NewPull(transport.PullConfig[jetstream.Msg, *held[K, E]]{Name: "nats: " + name, Buffer: cfg.MaxAckPending + batch,
		Check: f.check, Take: f.take, Ack: f.ack, Gate: f.othersSettled})
	f.cc, err = f.cons.Consume(f.Push, jetstream.PullPriorityGroup(group), jetstream.PullMaxMessages(batch), jetstream.PullExpiry(max(time.Second, cfg.PinnedTTL/4)),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrBadRequest) || errors.Is(err, jetstream.ErrPinIDMismatch) {
				f.Lose(fmt.Errorf("nats: %s: %w", name, err))
			}
		}))
	if err != nil {
		f.Stop(false, nil)
		return nil, fmt.Errorf("nats: consume %s: %w", name, err)
	}
	return f, nil
}

// check returns a delivery's stream sequence; one under another pin than
// the first (the server pinned another client) loses the partition.
func (f *feed[K, E]) check(m jetstream.Msg) (uint64, error) {
	meta, err := m.Metadata()
	if err != nil {
		return 0, fmt.Errorf("nats: %s: a delivery without metadata: %w", f.name, err)
	}
	pin := m.Headers().Get("Nats-Pin-Id")
	f.pin = cmp.Or(f.pin, pin)
	if pin != "" && pin != f.pin {
		return 0, fmt.Errorf("nats: %s: the server pinned another client to the partition", f.name)
	}
	return meta.Sequence.Stream, nil
}

// take holds a delivery under its lease.
func (f *feed[K, E]) take(m jetstream.Msg, seq uint64) *held[K, E] {
	h := &held[K, E]{f: f, seq: seq, msg: m}
	f.cn.leases.Hold(h, time.Now())
	return h
}

// othersSettled reports whether every message pending at the server is
// one the feed holds; deliveries on their way make it answer no.
func (f *feed[K, E]) othersSettled(held int) bool {
	ctx, cancel := context.WithTimeout(f.cn.ctx, f.cn.c.cfg.DrainTimeout)
	defer cancel()
	info, err := f.cons.Info(ctx)
	return err == nil && info.NumAckPending <= held
}

func (f *feed[K, E]) ack(h *held[K, E]) {
	if err := h.msg.Ack(); err != nil {
		f.cn.c.cfg.Logger.Debug("ordergen/nats: acknowledgement not sent", "consumer", f.name, "seq", h.seq, "error", err)
	}
}

// Close ends the pull once its stream ended. With flush (a clean close) it
// sends the acknowledgements pending, gives the messages it holds back in
// stream order (a nak each: the server delivers them again first, in that
// order) and unpins the partition, so that a standby takes it at once;
// without, it sends nothing more: the server delivers them again when
// their AckWait ends.
func (f *feed[K, E]) Close(flush bool) {
	for _, h := range f.Stop(flush, f.cc.Stop) {
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

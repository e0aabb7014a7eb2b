package nats

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime/transport"
)

// Consumer consumes the events of one entity from a Topology's partitions
// and feeds them to per-key lanes (a transport.Target): it is a
// transport.UnitConsumer whose units are the partitions (Run, Close,
// OnOutcome, Stats and Units are its). Each partition's durable consumer is
// pulled by one Consumer at a time (the pinned client of its priority
// group); its messages are acknowledged as each finishes.
type Consumer[K comparable, E transport.Keyed[K]] struct {
	*transport.UnitConsumer[K, E, *held[K, E], *held[K, E]]
	cfg Config[E]
	dec transport.Decoder[K, E]
}

// NewConsumer returns a consumer for cfg. It does not connect before Run.
func NewConsumer[K comparable, E transport.Keyed[K]](cfg Config[E]) (*Consumer[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Consumer[K, E]{cfg: cfg, dec: transport.Decoder[K, E]{Codec: cfg.Codec}}
	names := make([]string, len(cfg.Partitions))
	for i, p := range cfg.Partitions {
		names[i] = cfg.Topology.ConsumerName(p)
	}
	c.UnitConsumer, err = transport.NewUnitConsumer[K](broker[K, E]{c}, transport.UnitConfig[E, *held[K, E]]{
		System: "nats", Name: cfg.Name, Unit: "partition", Units: names, Room: cfg.MaxAckPending, Drain: cfg.DrainTimeout,
		ReconnectDelay: cfg.ReconnectDelay, MaxReconnectDelay: cfg.MaxReconnectDelay,
		Settle: c.settled, DeadLetter: c.deadLetter, Logger: cfg.Logger, Leased: true,
		Meter: cfg.MeterProvider,
	})
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	return c, nil
}

// settled acknowledges a finished message; an unfinished one stays
// unacknowledged and is given back in order when its feed closes.
func (c *Consumer[K, E]) settled(h *held[K, E], st transport.Settlement) {
	if st == transport.Finished {
		h.f.Settled(h.seq)
		h.f.cn.leases.Release(h)
	}
}

// deadLetter copies a bad message to the dead-letter stream; once it is
// written the intake settles it Finished, which acknowledges it.
func (c *Consumer[K, E]) deadLetter(m transport.Message[E, *held[K, E]], done func(error)) {
	go func() {
		ctx, cancel := context.WithTimeout(m.Handle.f.cn.ctx, c.cfg.DrainTimeout)
		defer cancel()
		msg := m.Handle.msg
		done(publishDead(ctx, m.Handle.f.cn.js, c.cfg.Topology, msg.Headers(), msg.Data(), m.Key, m.Bad.Reason, m.Bad.Err, 0))
	}()
}

// publishDead publishes a dead letter of key, its headers and payload as
// they were plus the reason's (after attempts handler attempts, 0 for
// none), to the dead-letter stream.
func publishDead(ctx context.Context, js jetstream.JetStream, t Topology, hdr nats.Header, data []byte, key string, reason transport.Reason, cause error, attempts int) error {
	out := nats.NewMsg(t.DeadLetterSubject(key))
	for k, v := range hdr {
		out.Header[k] = v
	}
	for _, h := range transport.DeadLetterHeaders(reason, cause, attempts) {
		out.Header.Set(h.Key, h.Value)
	}
	out.Data = data
	if _, err := js.PublishMsg(ctx, out); err != nil {
		return fmt.Errorf("nats: dead letter of key %q to %s: %w", key, t.DeadLetterStream(), err)
	}
	return nil
}

// broker is the consumer's transport.UnitBroker.
type broker[K comparable, E transport.Keyed[K]] struct{ c *Consumer[K, E] }

// Refused reports the server's refusals of the configuration: a stream or
// consumer that exists with another configuration, credentials or
// permissions refused, JetStream not enabled.
func (broker[K, E]) Refused(err error) (yes, sure bool) {
	var api *jetstream.APIError
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) || errors.Is(err, jetstream.ErrConsumerExists) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
		errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrPermissionViolation) || (errors.As(err, &api) && api.Code == 400) {
		return true, true
	}
	return false, false
}

// Connect dials the server and declares the topology.
func (b broker[K, E]) Connect(ctx context.Context) (transport.UnitConn[E, *held[K, E], *held[K, E]], error) {
	return connect(ctx, b.c)
}

// Decode decodes a message: its key in transport.HeaderKey, its event type
// in transport.HeaderType. One delivered more than MaxDeliver times is bad
// (ReasonMaxDeliveries): it goes to the dead-letter stream instead.
func (f *feed[K, E]) Decode(h *held[K, E]) transport.Message[E, *held[K, E]] {
	msg, limit := h.msg, f.cn.c.cfg.MaxDeliver
	key := msg.Headers().Get(transport.HeaderKey)
	m := transport.Message[E, *held[K, E]]{Handle: h, Trace: transport.TraceFrom(msg.Headers().Get)}
	if meta, _ := msg.Metadata(); limit > 0 && meta != nil && meta.NumDelivered > uint64(limit) {
		m.Bad = &transport.Bad{Reason: transport.ReasonMaxDeliveries, Err: fmt.Errorf("delivered %d times, more than MaxDeliver", meta.NumDelivered)}
	} else {
		m.Event, m.Bad = f.cn.c.dec.Decode(msg.Headers().Get(transport.HeaderType), key, msg.Data())
	}
	if m.Bad != nil {
		m.Key, m.ID = key, f.name+"#"+strconv.FormatUint(h.seq, 10)
	}
	return m
}

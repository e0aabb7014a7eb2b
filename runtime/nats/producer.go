package nats

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Producer publishes events to a Topology's stream, each on its key's
// subject with its type and key in headers. It is a transport.OrderedSink:
// per-key order, and after a send of a key fails its later sends fail
// until Resume.
type Producer[K comparable, E any] struct {
	*transport.OrderedSink[K, E]
	w    *transport.ConnWriter[K, E, jetstream.JetStream, *nats.Msg]
	topo Topology
	cfg  ProducerConfig[E]
}

// ProducerConfig configures a Producer.
type ProducerConfig[E any] struct {
	// URL and Options are as a Consumer's: the producer dials the server
	// and dials again after a loss, once every send on the lost
	// connection failed. URL is required.
	URL     string
	Options []nats.Option
	// Topology names the stream, which the producer declares. Required.
	Topology Topology
	// Codec encodes the events. Required.
	Codec durable.Codec[E]
}

// timeout bounds the producer's declarations and its wait for an answer.
const timeout = 30 * time.Second

// NewProducer dials cfg.URL, declares the streams and returns a producer.
// It refuses a config without URL, Topology or Codec, and a key type that
// is neither a string nor an integer.
func NewProducer[K comparable, E any](cfg ProducerConfig[E]) (*Producer[K, E], error) {
	topo, err := cfg.Topology.withDefaults()
	if err == nil && (cfg.URL == "" || cfg.Codec == nil) {
		err = fmt.Errorf("nats: %w: a producer needs a URL and a Codec", runtime.ErrInvalidConfig)
	}
	if err != nil {
		return nil, err
	}
	p := &Producer[K, E]{topo: topo, cfg: cfg}
	if p.w, err = transport.NewConnWriter(transport.ConnConfig[K, E, jetstream.JetStream, *nats.Msg]{System: "nats",
		Dial: p.dial, Encode: p.encode, Send: func(js jetstream.JetStream, m *nats.Msg) error {
			_, err := js.PublishMsgAsync(m)
			return err
		}, Close: func(js jetstream.JetStream) { js.Conn().Close() }}); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	js, err := p.w.Conn(ctx)
	if err == nil {
		_, err = declare(ctx, js, topo)
	}
	if err != nil {
		_ = p.w.Close(ctx)
		return nil, err
	}
	p.OrderedSink, err = transport.NewOrderedSink[K, E](p.w)
	return p, err
}

// dial connects; the client's answers to the async publishes go to the
// writer.
func (p *Producer[K, E]) dial(ctx context.Context, lost func(error)) (jetstream.JetStream, error) {
	nc, err := dial(ctx, p.cfg.URL, p.cfg.Options, lost)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(timeout),
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, m *nats.Msg, _ *jetstream.PubAck) { p.w.Answer(m, nil) }),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) { p.w.Answer(m, err) }))
	if err != nil {
		nc.Close()
	}
	return js, err
}

// encode makes the message of event on its key's subject, its type, key
// and the send's trace context in headers.
func (p *Producer[K, E]) encode(ctx context.Context, key K, event E) (*nats.Msg, error) {
	text, err := transport.KeyText(key)
	if err != nil {
		return nil, fmt.Errorf("nats: key %v: %w", key, err)
	}
	typ, data, err := p.cfg.Codec.Encode(event)
	if err != nil {
		return nil, fmt.Errorf("nats: encode %T: %w", event, err)
	}
	msg := nats.NewMsg(p.topo.SubjectOf(text))
	for _, h := range append(transport.TraceOf(ctx).Headers(), transport.Header{Key: transport.HeaderType, Value: typ}, transport.Header{Key: transport.HeaderKey, Value: text}) {
		msg.Header.Set(h.Key, h.Value)
	}
	msg.Data = data
	return msg, nil
}

// DeadLetters returns a runtime.DeadLetterSink, for the
// runtime.SendToDeadLetter exhaustion policy, that publishes each event a
// handler gave up on to p's topology's dead-letter stream, with the
// transport's dead-letter headers, and returns once the server stored it
// (when that fails the runtime parks the event instead).
func DeadLetters[K comparable, E any](p *Producer[K, E]) runtime.DeadLetterSink[K, E] {
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, err := p.encode(ctx, dl.Key, dl.Event)
		var js jetstream.JetStream
		if err == nil {
			js, err = p.w.Conn(ctx)
		}
		if err == nil {
			err = publishDead(ctx, js, p.topo, msg.Header, msg.Data, msg.Header.Get(transport.HeaderKey), transport.ReasonHandlerFailed, dl.Err, dl.Attempts)
		}
		return err // each step says what failed
	}
}

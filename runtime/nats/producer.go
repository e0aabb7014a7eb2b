package nats

import (
	"cmp"
	"context"
	"fmt"
	"sync"
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
	w *writer[K, E]
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
	if _, kerr := transport.KeyText(*new(K)); err == nil && kerr != nil {
		err = fmt.Errorf("nats: %w", kerr)
	}
	if err != nil {
		return nil, err
	}
	w := &writer[K, E]{cfg: cfg, topo: topo}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	js, err := w.conn()
	if err == nil {
		_, err = declare(ctx, js, topo)
	}
	if err != nil {
		_ = w.Close(ctx)
		return nil, err
	}
	sink, err := transport.NewOrderedSink[K, E](w)
	return &Producer[K, E]{sink, w}, err
}

// writer is the producer's transport.Writer.
type writer[K comparable, E any] struct {
	cfg    ProducerConfig[E]
	topo   Topology
	failed transport.FailedKeys[K] // recorded before a new connection opens
	// mu guards the connection and the sends waiting on it.
	mu      sync.Mutex
	nc      *nats.Conn
	js      jetstream.JetStream
	waiting map[*nats.Msg]sent[K]
	closed  bool
}

type sent[K any] struct {
	key  K
	done func(error)
}

// conn returns the connection's JetStream, dialling when the last
// connection closed, after the sends waiting on it failed.
func (w *writer[K, E]) conn() (jetstream.JetStream, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, runtime.ErrClosed
	}
	if w.nc != nil && !w.nc.IsClosed() {
		return w.js, nil
	}
	w.drop(w.nc, nats.ErrConnectionClosed)
	nc, err := dial(context.Background(), w.cfg.URL, w.cfg.Options, func(nc *nats.Conn) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.drop(nc, nats.ErrConnectionClosed)
	})
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(timeout),
		jetstream.WithPublishAsyncAckHandler(func(_ jetstream.JetStream, m *nats.Msg, _ *jetstream.PubAck) { w.answer(m, nil) }),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) { w.answer(m, err) }))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats: %w", err)
	}
	w.nc, w.js, w.waiting = nc, js, map[*nats.Msg]sent[K]{}
	return js, nil
}

// drop fails the sends waiting on nc, when it is the current connection,
// and records their keys as failed; mu is held. The answers go out on
// goroutines: done must not run under mu.
func (w *writer[K, E]) drop(nc *nats.Conn, err error) {
	if nc == nil || nc != w.nc {
		return
	}
	for m, s := range w.waiting {
		w.failed.Fail(s.key, err)
		go s.done(fmt.Errorf("nats: publish to %s: %w", m.Subject, err))
	}
	clear(w.waiting)
}

// answer answers the send of m, once.
func (w *writer[K, E]) answer(m *nats.Msg, err error) {
	w.mu.Lock()
	s, ok := w.waiting[m]
	delete(w.waiting, m)
	if ok && err != nil {
		w.failed.Fail(s.key, err)
		err = fmt.Errorf("nats: publish to %s: %w", m.Subject, err)
	}
	w.mu.Unlock()
	if ok {
		s.done(err)
	}
}

// Write publishes event asynchronously; done gets the server's answer.
func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	msg, err := encode(w.topo, w.cfg.Codec, key, event, false)
	if err != nil {
		done(err) // nothing was sent: the key's order is whole
		return
	}
	for _, h := range transport.TraceOf(ctx).Headers() { // the send's trace context
		msg.Header.Set(h.Key, h.Value)
	}
	js, err := w.conn()
	w.mu.Lock()
	if err == nil {
		err = w.failed.Err(key) // again: a failure may have come meanwhile
	}
	if err == nil && w.js == js {
		w.waiting[msg] = sent[K]{key, done}
	} else {
		err = cmp.Or(err, nats.ErrConnectionClosed)
		w.failed.Fail(key, err)
	}
	w.mu.Unlock()
	if err != nil {
		done(fmt.Errorf("nats: publish of key %v: %w", key, err))
	} else if _, err := js.PublishMsgAsync(msg); err != nil {
		w.answer(msg, err)
	}
}

// Resume lets key's writes through again (OrderedSink.Resume calls it).
func (w *writer[K, E]) Resume(key K) { w.failed.Resume(key) }

// Close closes the connection; the sends not answered fail.
func (w *writer[K, E]) Close(context.Context) error {
	w.mu.Lock()
	w.closed = true
	nc := w.nc
	w.drop(nc, runtime.ErrClosed)
	w.mu.Unlock()
	if nc != nil {
		nc.Close()
	}
	return nil
}

// encode makes the message of event on its key's subject (or its
// dead-letter subject), its type and key in headers.
func encode[K comparable, E any](t Topology, codec durable.Codec[E], key K, event E, dead bool) (*nats.Msg, error) {
	text, err := transport.KeyText(key)
	if err != nil {
		return nil, fmt.Errorf("nats: key %v: %w", key, err)
	}
	typ, data, err := codec.Encode(event)
	if err != nil {
		return nil, fmt.Errorf("nats: encode %T: %w", event, err)
	}
	msg := nats.NewMsg(t.SubjectOf(text))
	if dead {
		msg.Subject = t.DeadLetterSubject(text)
	}
	msg.Header.Set(transport.HeaderType, typ)
	msg.Header.Set(transport.HeaderKey, text)
	msg.Data = data
	return msg, nil
}

// DeadLetters returns a runtime.DeadLetterSink, for the
// runtime.SendToDeadLetter exhaustion policy, that publishes each event a
// handler gave up on to p's topology's dead-letter stream, with the
// transport's dead-letter headers, and returns once the server stored it
// (when that fails the runtime parks the event instead).
func DeadLetters[K comparable, E any](p *Producer[K, E]) runtime.DeadLetterSink[K, E] {
	w := p.w
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		msg, err := encode(w.topo, w.cfg.Codec, dl.Key, dl.Event, true)
		if err != nil {
			return fmt.Errorf("nats: dead letter: %w", err)
		}
		for _, h := range transport.DeadLetterHeaders(transport.ReasonHandlerFailed, dl.Err, dl.Attempts) {
			msg.Header.Set(h.Key, h.Value)
		}
		js, err := w.conn()
		if err == nil {
			_, err = js.PublishMsg(ctx, msg)
		}
		if err != nil {
			return fmt.Errorf("nats: dead letter of key %v to %s: %w", dl.Key, w.topo.DeadLetterStream(), err)
		}
		return nil
	}
}

package rabbitmq_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/rabbitmq"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// TestConformance runs the transport conformance suite against the
// RabbitMQ server of ORDERGEN_TEST_RABBITMQ, keys spread by the
// consistent-hash exchange.
func TestConformance(t *testing.T) {
	url := brokerURL(t)
	transporttest.Run(t, harness(url, rabbitmq.ConsistentHash))
}

// TestConformancePublisherHash runs the suite with keys spread by the
// publisher instead.
func TestConformancePublisherHash(t *testing.T) {
	url := brokerURL(t)
	skipVariantIfShort(t)
	transporttest.Run(t, harness(url, rabbitmq.PublisherHash))
}

// TestConformanceQuorumQueues runs the suite on quorum queues (durable,
// replicated; single active consumer and in-order returns hold there too).
// A quorum queue may ignore acknowledgements that arrive just before a
// channel closes (rabbitmq-server issue 10327, seen here too): after a
// clean close the next consumer can get such messages again, which the
// version guard skips.
func TestConformanceQuorumQueues(t *testing.T) {
	url := brokerURL(t)
	skipVariantIfShort(t)
	h := harness(url, rabbitmq.ConsistentHash)
	h.Limits.RedeliversAfterClose = true
	h.NewStream = func(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
		return newStream(t, url, rabbitmq.Topology{Name: spec.Name, Queues: max(spec.Units, 1), QueueArgs: amqp.Table{"x-queue-type": "quorum"}})
	}
	transporttest.Run(t, h)
}

// skipVariantIfShort skips a variant of the suite under -short: the suite
// once, TestConformance, is the quick check; each variant's kills wait
// seconds for the broker to deliver again.
func skipVariantIfShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a variant of TestConformance, seconds long against the broker (skipped under -short)")
	}
}

func harness(url string, routing rabbitmq.Routing) transporttest.Harness {
	return transporttest.Harness{
		NewStream: func(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
			return newStream(t, url, rabbitmq.Topology{Name: spec.Name, Queues: max(spec.Units, 1), Routing: routing, Transient: true})
		},
		Limits:      transporttest.Limits{NoLeases: true},
		ParkBlocked: parkBlocked,
	}
}

// parkBlocked: a queue whose prefetch messages parked in memory hold.
func parkBlocked(m metricstest.Metrics) bool {
	v, _ := m.Sum(rabbitmq.MetricBlocked, meter.Attribute{Key: rabbitmq.AttrBlockReason, Value: "parked"})
	return v > 0
}

// stream is a topology on the test broker.
type stream struct {
	url  string
	topo rabbitmq.Topology
	conn *amqp.Connection
	ch   *amqp.Channel // reads the dead-letter queue
}

func newStream(t *testing.T, url string, topo rabbitmq.Topology) *stream {
	conn := dial(t)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := topo.Declare(ch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ch, err := conn.Channel()
		if err == nil {
			_ = topo.Delete(ch)
			_ = ch.Close()
		}
	})
	return &stream{url: url, topo: topo, conn: conn, ch: ch}
}

func (s *stream) Producer(t *testing.T, o transporttest.ProducerOptions) transport.Sink[string, transporttest.Event] {
	amqpCfg := amqp.Config{}
	if o.Net != nil {
		amqpCfg.Dial = netDial(o.Net)
	}
	p, err := rabbitmq.NewProducer[string, transporttest.Event](rabbitmq.ProducerConfig[transporttest.Event]{URL: brokerURL(t), AMQP: amqpCfg, Topology: s.topo, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func (s *stream) PublishPoison(ctx context.Context, key string, body []byte) error {
	ch, err := s.conn.Channel()
	if err != nil {
		return err
	}
	defer func() { _ = ch.Close() }()
	if err := ch.Confirm(false); err != nil {
		return err
	}
	exchange, routingKey := s.topo.Name, key
	if s.topo.Routing == rabbitmq.PublisherHash {
		exchange, routingKey = "", s.topo.Queue(s.topo.QueueOf(key))
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, routingKey, true, false, amqp.Publishing{
		Headers: amqp.Table{transport.HeaderKey: key}, Type: transporttest.EventType, Body: body,
	})
	if err != nil {
		return err
	}
	if ok, err := dc.WaitContext(ctx); err != nil || !ok {
		return fmt.Errorf("poison not confirmed: %v", err)
	}
	return nil
}

func (s *stream) DeadLetterSink(t *testing.T) runtime.DeadLetterSink[string, transporttest.Event] {
	sink, err := rabbitmq.DeadLetters[string, transporttest.Event](dial(t), s.topo, transporttest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	return sink
}

func (s *stream) DeadLetters(ctx context.Context) ([]transporttest.DeadLetter, error) {
	for {
		var out []transporttest.DeadLetter
		for {
			d, ok, err := s.ch.Get(s.topo.DeadLetterQueue(), true)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			dl := transporttest.DeadLetter{Body: d.Body}
			dl.Key, _ = d.Headers[transport.HeaderKey].(string)
			dl.Reason, _ = d.Headers[transport.HeaderReason].(string)
			if deaths, ok := d.Headers["x-death"].([]any); ok && dl.Reason == "" && len(deaths) > 0 {
				if death, ok := deaths[0].(amqp.Table); ok {
					dl.Reason = fmt.Sprint(death["reason"])
				}
			}
			out = append(out, dl)
		}
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *stream) Consumer(t *testing.T, o transporttest.ConsumerOptions) transporttest.Consumer {
	socks := &sockets{}
	prefetch := 0
	if o.MaxInFlight > 0 {
		prefetch = max(1, o.MaxInFlight/s.topo.Queues)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := rabbitmq.NewConsumer[string, transporttest.Event](rabbitmq.Config[transporttest.Event]{
		URL:            s.url,
		AMQP:           amqp.Config{Dial: socks.dialVia(o.Net)},
		Topology:       s.topo,
		Codec:          transporttest.Codec{},
		Prefetch:       prefetch,
		DrainTimeout:   5 * time.Second,
		ReconnectDelay: 20 * time.Millisecond,
		Name:           o.Name,
		Logger:         logger,
		MeterProvider:  o.MeterProvider,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &killable{Consumer: transporttest.KillOnCancel(c), socks: socks}
}

// killable kills a consumer by cutting its TCP connections first, so that
// it sends nothing more, then ending its Run.
type killable struct {
	transporttest.Consumer
	socks *sockets
}

func (k *killable) Kill() {
	k.socks.cut()
	k.Consumer.Kill()
}

// Disconnect cuts the consumer's TCP connections; it reconnects by itself.
func (k *killable) Disconnect() { k.socks.cut() }

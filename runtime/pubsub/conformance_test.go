package pubsub_test

import (
	"context"
	"flag"
	"log/slog"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// TestConformance runs the transport conformance suite on an in-process
// pstest server per test, with message ordering on.
func TestConformance(t *testing.T) {
	t.Parallel() // its own pstest server: it waits on ack deadlines, not on the CPU
	transporttest.Run(t, conformanceHarness())
}

var stressFor = flag.Duration("pubsub.stress", 3*time.Second, "how long TestConformanceStress injects faults (run long with e.g. -pubsub.stress=10m)")

// TestConformanceStress kills, closes, parks and replays at random on
// pstest (see transporttest.Stress).
func TestConformanceStress(t *testing.T) {
	t.Parallel()                                                                                     // its own pstest server, beside the tests that wait on ack deadlines
	transporttest.Stress(t, conformanceHarness(), transporttest.StressOptions{Duration: *stressFor}) // it logs its figures
}

// TestConformanceStressNetFaults also cuts and stalls the consumers'
// networks at random, and closes and kills consumers cut off: nothing is
// lost or reordered, and every stop returns (overlaps are counted: the
// client does not tell whether a lease was extended).
func TestConformanceStressNetFaults(t *testing.T) {
	t.Parallel() // its own pstest server, beside the tests that wait on ack deadlines
	transporttest.Stress(t, conformanceHarness(), transporttest.StressOptions{Duration: *stressFor, NetFaults: true})
}

func conformanceHarness() transporttest.Harness {
	return transporttest.Harness{
		NewStream: newConformanceStream,
		// pstest delivers a key's next message only once the one before is
		// acknowledged (as SQS FIFO does with a group). The client extends
		// leases without saying whether Pub/Sub confirmed them.
		Limits: transporttest.Limits{OneInFlightPerKey: true, UnconfirmedLeases: true},
		// The stream's ack deadline: the client extends it (at most
		// MaxDurationPerAckExtension, 10s, the least it takes, at a time).
		Lease: 10 * time.Second,
		ParkBlocked: func(m metricstest.Metrics) bool {
			v, _ := m.Sum("ordergen.pubsub.blocked", meter.Attribute{Key: "ordergen.pubsub.blocked.reason", Value: "parked"})
			return v > 0
		},
	}
}

// conformanceStream is a topic, its dead-letter topic and an ordered
// subscription on a pstest server of its own.
type conformanceStream struct {
	f    *fake
	name string

	mu   sync.Mutex
	dead []transporttest.DeadLetter
	more chan struct{} // signalled when a dead letter arrives
}

func newConformanceStream(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
	srv := pstest.NewServer()
	t.Cleanup(func() { _ = srv.Close() })
	f := &fake{srv: srv}
	cl := f.client(t)
	ctx := context.Background()
	for _, name := range []string{spec.Name, spec.Name + "-dlt"} {
		if _, err := cl.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/" + project + "/topics/" + name}); err != nil {
			t.Fatal(err)
		}
	}
	for name, tp := range map[string]string{spec.Name: spec.Name, spec.Name + "-dead": spec.Name + "-dlt"} {
		if _, err := cl.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
			Name:                  "projects/" + project + "/subscriptions/" + name,
			Topic:                 "projects/" + project + "/topics/" + tp,
			EnableMessageOrdering: true,
			AckDeadlineSeconds:    10,
		}); err != nil {
			t.Fatal(err)
		}
	}
	s := &conformanceStream{f: f, name: spec.Name, more: make(chan struct{}, 1)}
	// Read the dead letters as they come.
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cl.Subscriber(spec.Name+"-dead").Receive(rctx, func(_ context.Context, m *pubsub.Message) {
			m.Ack()
			s.mu.Lock()
			s.dead = append(s.dead, transporttest.DeadLetter{Key: m.Attributes[ps.AttrOrderingKey], Body: m.Data, Reason: m.Attributes[transport.HeaderReason]})
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

func (s *conformanceStream) publisher(t *testing.T, cl *pubsub.Client, topic string) *pubsub.Publisher {
	pub := cl.Publisher(topic)
	pub.EnableMessageOrdering = true
	pub.PublishSettings.DelayThreshold = time.Millisecond
	t.Cleanup(pub.Stop)
	return pub
}

func (s *conformanceStream) Producer(t *testing.T, o transporttest.ProducerOptions) transport.Sink[string, transporttest.Event] {
	cl := s.f.client(t)
	if o.Net != nil {
		cl = s.f.clientVia(t, o.Net)
	}
	p, err := ps.NewProducer[string, transporttest.Event](ps.ProducerConfig[transporttest.Event]{Publisher: s.publisher(t, cl, s.name), Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func (s *conformanceStream) PublishPoison(ctx context.Context, key string, body []byte) error {
	cl, err := pubsub.NewClient(ctx, project, s.f.opts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	pub := cl.Publisher(s.name)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	_, err = pub.Publish(ctx, &pubsub.Message{Data: body, OrderingKey: key, Attributes: map[string]string{transport.HeaderType: transporttest.EventType}}).Get(ctx)
	return err
}

func (s *conformanceStream) DeadLetterSink(t *testing.T) runtime.DeadLetterSink[string, transporttest.Event] {
	return ps.DeadLetters[string, transporttest.Event](s.publisher(t, s.f.client(t), s.name+"-dlt"), transporttest.Codec{})
}

func (s *conformanceStream) DeadLetters(ctx context.Context) ([]transporttest.DeadLetter, error) {
	for {
		s.mu.Lock()
		out := s.dead
		s.dead = nil
		s.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-s.more:
		case <-ctx.Done():
			return nil, nil
		}
	}
}

func (s *conformanceStream) Consumer(t *testing.T, o transporttest.ConsumerOptions) transporttest.Consumer {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A client of its own, closed once the consumer's Run returns: the
	// stress test makes thousands of consumers, and clients kept until the
	// test's end exhausted the process's file descriptors (their gRPC
	// connections) after about 2,500 of them.
	cl := s.f.client(t)
	if o.Net != nil {
		cl = s.f.clientVia(t, o.Net)
	}
	cfg := ps.Config[transporttest.Event]{
		Client:          cl,
		Subscription:    s.name,
		Codec:           transporttest.Codec{},
		DeadLetterTopic: s.name + "-dlt",
		MaxInFlight:     o.MaxInFlight,
		DrainTimeout:    5 * time.Second,
		ReceiveSettings: pubsub.ReceiveSettings{MaxDurationPerAckExtension: 10 * time.Second},
		Logger:          logger,
		MeterProvider:   o.MeterProvider,
	}
	ps.SetSweepEvery(&cfg, 20*time.Millisecond)
	c, err := ps.NewConsumer[string, transporttest.Event](cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A Run that stopped without waiting for an unreachable Pub/Sub leaves
	// the client's Receive to end with its last calls; it must end once
	// the client is closed (and its retries' pauses pass).
	t.Cleanup(func() {
		select {
		case <-ps.ReceiveReturned(c):
		case <-time.After(2 * time.Minute):
			t.Errorf("%s: the client's Receive did not return within 2 minutes of the test's end", o.Name)
		}
	})
	return closesClient{transporttest.KillOnCancel(c), cl}
}

// closesClient is a conformance consumer that closes its client once Run
// returned.
type closesClient struct {
	transporttest.Consumer
	cl *pubsub.Client
}

func (c closesClient) Run(ctx context.Context, target transport.Target[transporttest.Event]) error {
	defer func() { _ = c.cl.Close() }()
	return c.Consumer.Run(ctx, target)
}

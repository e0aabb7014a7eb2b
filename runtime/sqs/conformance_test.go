package sqs_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	oq "github.com/ordergen/ordergen/runtime/sqs"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

// lease is the visibility timeout of the conformance streams' queues.
const lease = 2 * time.Second

// TestConformance runs the transport conformance suite against the
// emulator (ORDERGEN_TEST_SQS), a pair of FIFO queues per test.
func TestConformance(t *testing.T) {
	endpoint(t)
	transporttest.Run(t, conformanceHarness())
}

var stressFor = flag.Duration("sqs.stress", 3*time.Second, "how long TestConformanceStress injects faults (run long with e.g. -sqs.stress=10m)")

// TestConformanceStress kills, closes, parks and replays at random against
// the emulator (see transporttest.Stress).
func TestConformanceStress(t *testing.T) {
	endpoint(t)
	transporttest.Stress(t, conformanceHarness(), transporttest.StressOptions{Duration: *stressFor}) // it logs its figures
}

// TestConformanceStressNetFaults also cuts and stalls the consumers'
// networks at random, and closes and kills consumers cut off: a handler
// never begins while one of its group runs with a live context, and
// nothing is lost.
func TestConformanceStressNetFaults(t *testing.T) {
	endpoint(t)
	transporttest.Stress(t, conformanceHarness(), transporttest.StressOptions{Duration: *stressFor, NetFaults: true})
}

func conformanceHarness() transporttest.Harness {
	return transporttest.Harness{
		NewStream: newConformanceStream,
		// A message group with a message in flight gets nothing more.
		Limits: transporttest.Limits{OneInFlightPerKey: true},
		Lease:  lease,
		ParkBlocked: func(m metricstest.Metrics) bool {
			v, _ := m.Sum("ordergen.sqs.blocked", meter.Attribute{Key: "ordergen.sqs.blocked.reason", Value: "parked"})
			return v > 0
		},
	}
}

type conformanceStream struct {
	q    *queues
	dead *deadLetters
}

func newConformanceStream(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
	q := newQueues(t, spec.Name, lease)
	return &conformanceStream{q: q, dead: q.readDead(t)}
}

func (s *conformanceStream) Producer(t *testing.T, o transporttest.ProducerOptions) transport.Sink[string, transporttest.Event] {
	client := s.q.client
	if o.Net != nil {
		client = clientVia(t, o.Net)
	}
	p, err := oq.NewProducer[string, transporttest.Event](oq.ProducerConfig[transporttest.Event]{Client: client, QueueURL: s.q.url, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func (s *conformanceStream) PublishPoison(ctx context.Context, key string, body []byte) error {
	_, err := s.q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: &s.q.url, MessageBody: aws.String(string(body)), MessageGroupId: aws.String(key),
		MessageDeduplicationId: aws.String(key + "-poison-" + time.Now().Format("150405.000000000")),
		MessageAttributes:      map[string]types.MessageAttributeValue{transport.HeaderType: {DataType: aws.String("String"), StringValue: aws.String(transporttest.EventType)}},
	})
	return err
}

func (s *conformanceStream) DeadLetterSink(*testing.T) runtime.DeadLetterSink[string, transporttest.Event] {
	return oq.DeadLetters[string, transporttest.Event](s.q.client, s.q.dlqURL, transporttest.Codec{})
}

func (s *conformanceStream) DeadLetters(ctx context.Context) ([]transporttest.DeadLetter, error) {
	for {
		s.dead.mu.Lock()
		got := s.dead.got
		s.dead.got = nil
		s.dead.mu.Unlock()
		if len(got) > 0 {
			out := make([]transporttest.DeadLetter, len(got))
			for i, m := range got {
				out[i] = transporttest.DeadLetter{Key: m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)], Body: []byte(aws.ToString(m.Body)),
					Reason: aws.ToString(m.MessageAttributes[transport.HeaderReason].StringValue)}
			}
			return out, nil
		}
		select {
		case <-s.dead.more:
		case <-ctx.Done():
			return nil, nil
		}
	}
}

func (s *conformanceStream) Consumer(t *testing.T, o transporttest.ConsumerOptions) transporttest.Consumer {
	logger := o.Logger
	if logger == nil {
		logger = testLogger()
	}
	client := s.q.client
	if o.Net != nil {
		client = clientVia(t, o.Net)
	}
	cfg := oq.Config[transporttest.Event]{
		Client:             client,
		QueueURL:           s.q.url,
		Codec:              transporttest.Codec{},
		DeadLetterQueueURL: s.q.dlqURL,
		MaxInFlight:        o.MaxInFlight,
		VisibilityTimeout:  lease,
		WaitTime:           time.Second,
		DrainTimeout:       5 * time.Second,
		Logger:             logger,
		MeterProvider:      o.MeterProvider,
	}
	oq.SetSweepEvery(&cfg, 20*time.Millisecond)
	c, err := oq.NewConsumer[string, transporttest.Event](cfg)
	if err != nil {
		t.Fatal(err)
	}
	return transporttest.KillOnCancel(c)
}

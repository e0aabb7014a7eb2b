package kafka_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// TestConformance runs the transport conformance suite on an in-process
// kfake cluster per test.
func TestConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Harness{
		NewStream:   newConformanceStream,
		Limits:      transporttest.Limits{NoLeases: true},
		ParkBlocked: kafkaParkBlocked,
	})
}

// kafkaParkBlocked: a partition paused because parked records keep its
// commit metadata at the bound, or the consumer's whole intake held by
// parked records.
func kafkaParkBlocked(m metricstest.Metrics) bool {
	paused, _ := m.Sum(kafka.MetricPaused, meter.Attribute{Key: kafka.AttrPauseReason, Value: kafka.PausedMetadata.String()})
	intake, _ := m.Sum(kafka.MetricIntakeBlocked, meter.Attribute{Key: kafka.AttrIntakeReason, Value: "parked"})
	return paused > 0 || intake > 0
}

// conformanceStream is a topic and its dead-letter topic on a cluster of
// its own.
type conformanceStream struct {
	c     *kfake.Cluster
	name  string
	dlt   *kgo.Client // reads the dead-letter topic
	admin *kgo.Client
}

func newConformanceStream(t *testing.T, spec transporttest.StreamSpec) transporttest.Stream {
	units := int32(max(spec.Units, 1))
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(units, spec.Name), kfake.SeedTopics(1, spec.Name+".dlt"),
		kfake.GroupMinSessionTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s := &conformanceStream{c: c, name: spec.Name}
	s.admin = client(t, c)
	s.dlt = client(t, c, kgo.ConsumeTopics(spec.Name+".dlt"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	return s
}

func (s *conformanceStream) Producer(t *testing.T, o transporttest.ProducerOptions) transport.Sink[string, transporttest.Event] {
	p, err := kafka.NewProducer[string, transporttest.Event](kafka.ProducerConfig[transporttest.Event]{Client: client(t, s.c, via(o.Net)...), Topic: s.name, Codec: transporttest.Codec{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func (s *conformanceStream) PublishPoison(ctx context.Context, key string, body []byte) error {
	r := &kgo.Record{Topic: s.name, Key: []byte(key), Value: body,
		Headers: []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(transporttest.EventType)}}}
	return s.admin.ProduceSync(ctx, r).FirstErr()
}

func (s *conformanceStream) DeadLetterSink(*testing.T) runtime.DeadLetterSink[string, transporttest.Event] {
	return kafka.DeadLetters[string, transporttest.Event](s.admin, s.name+".dlt", transporttest.Codec{})
}

func (s *conformanceStream) DeadLetters(ctx context.Context) ([]transporttest.DeadLetter, error) {
	fs := s.dlt.PollFetches(ctx)
	var out []transporttest.DeadLetter
	fs.EachRecord(func(r *kgo.Record) {
		dl := transporttest.DeadLetter{Key: string(r.Key), Body: r.Value}
		for _, h := range r.Headers {
			if h.Key == transport.HeaderReason {
				dl.Reason = string(h.Value)
			}
		}
		out = append(out, dl)
	})
	if err := fs.Err0(); err != nil && ctx.Err() == nil {
		return out, err
	}
	return out, nil
}

func (s *conformanceStream) Consumer(t *testing.T, o transporttest.ConsumerOptions) transporttest.Consumer {
	kc, err := kafka.NewConsumer[string, transporttest.Event](kafka.Config[transporttest.Event]{
		ClientOpts: append([]kgo.Opt{
			kgo.SeedBrokers(s.c.ListenAddrs()...),
			kgo.HeartbeatInterval(100 * time.Millisecond),
			kgo.FetchMaxWait(100 * time.Millisecond),
		}, via(o.Net)...),
		Group:           s.name,
		Topics:          []string{s.name},
		Codec:           transporttest.Codec{},
		DeadLetterTopic: s.name + ".dlt",
		CommitInterval:  50 * time.Millisecond,
		RevokeTimeout:   5 * time.Second,
		MaxInFlight:     o.MaxInFlight,
		Logger:          orDiscard(o.Logger),
		MeterProvider:   o.MeterProvider,
	})
	if err != nil {
		t.Fatal(err)
	}
	return transporttest.KillOnCancel(kc)
}

// via returns the client options that dial every broker, the seeds and
// those the cluster advertises, through n (none when n is nil), with a
// session timeout short enough that a member cut off from the cluster,
// which cannot leave the group, loses its partitions to the others within
// the test, and a rebalance timeout (how long a rebalance waits for the
// members to join again) to match: the default minute would let one
// member killed while cut off hold every rebalance of the group that long.
// (The revoke's RevokeTimeout, 5 s, fits in it.)
func via(n *netfault.Net) []kgo.Opt {
	if n == nil {
		return nil
	}
	return []kgo.Opt{kgo.Dialer(n.DialContext), kgo.SessionTimeout(3 * time.Second), kgo.RebalanceTimeout(8 * time.Second)}
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

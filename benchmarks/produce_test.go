package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	ledger "github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

// ProduceRound is the number of events each producer sends in one op of
// BenchmarkKafkaProduce, over ProduceKeys keys.
const (
	ProduceRound = 20000
	ProduceKeys  = 1000
)

// BenchmarkKafkaProduce compares, in the same run, the asynchronous typed
// producer (the generated AccountProducer's PublishAsync over
// runtime/kafka's Producer: validation, key and codec encoding, per-key
// pause bookkeeping, murmur2-checked partitioning) with raw franz-go: the
// same events encoded with the same codec into records produced with
// kgo.Client.Produce. One op sends ProduceRound events with each (the
// order alternates from op to op) and waits until the cluster (in-process
// kfake) acknowledged them all. Metrics: raw-ns/event, ordergen-ns/event
// and ratio, the producer's throughput as a fraction of raw kgo's.
func BenchmarkKafkaProduce(b *testing.B) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, "produce"))
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	newClient := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic("produce"))
		if err != nil {
			b.Fatal(err)
		}
		return cl
	}
	rawCl, ogCl := newClient(), newClient()
	defer rawCl.Close()
	defer ogCl.Close()
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: ogCl, Topic: "produce", Codec: ledger.AccountCodec{}})
	if err != nil {
		b.Fatal(err)
	}
	producer, err := ledger.NewAccountProducer(sink)
	if err != nil {
		b.Fatal(err)
	}
	events := make([]ledger.Deposited, ProduceRound)
	for i := range events {
		events[i] = ledger.Deposited{AccountID: fmt.Sprintf("acct-%04d", i%ProduceKeys), Version: uint64(i/ProduceKeys + 1), Amount: 1}
	}
	ctx := context.Background()
	// Warm both clients up (metadata, connections) before timing.
	if err := produceRaw(ctx, rawCl, events[:100]); err != nil {
		b.Fatal(err)
	}
	if err := produceTyped(ctx, producer, sink, events[:100]); err != nil {
		b.Fatal(err)
	}
	var rawTime, ogTime time.Duration
	b.ResetTimer()
	for i := range b.N {
		for turn := range 2 {
			start := time.Now()
			if (i+turn)%2 == 0 {
				if err := produceRaw(ctx, rawCl, events); err != nil {
					b.Fatal(err)
				}
				rawTime += time.Since(start)
			} else {
				if err := produceTyped(ctx, producer, sink, events); err != nil {
					b.Fatal(err)
				}
				ogTime += time.Since(start)
			}
		}
	}
	b.StopTimer()
	n := float64(b.N * ProduceRound)
	b.ReportMetric(float64(rawTime.Nanoseconds())/n, "raw-ns/event")
	b.ReportMetric(float64(ogTime.Nanoseconds())/n, "ordergen-ns/event")
	b.ReportMetric(float64(rawTime)/float64(ogTime), "ratio")
}

// produceRaw encodes events with the codec and produces them with kgo,
// keyed by account, then waits for every acknowledgement.
func produceRaw(ctx context.Context, cl *kgo.Client, events []ledger.Deposited) error {
	codec := ledger.AccountCodec{}
	var failed atomic.Int64
	for _, e := range events {
		name, data, err := codec.Encode(e)
		if err != nil {
			return err
		}
		r := &kgo.Record{Key: []byte(e.AccountID), Value: data, Headers: []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(name)}}}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d raw records failed", n)
	}
	return nil
}

// produceTyped publishes events through the generated producer without
// waiting, then waits for every answer.
func produceTyped(ctx context.Context, p *ledger.AccountProducer, sink *kafka.Producer[string, ledger.AccountEvent], events []ledger.Deposited) error {
	var failed atomic.Int64
	var first atomic.Value
	done := func(err error) {
		if err != nil && failed.Add(1) == 1 {
			first.Store(err)
		}
	}
	for _, e := range events {
		p.PublishAsync(ctx, e, done)
	}
	if err := sink.Flush(ctx); err != nil {
		return err
	}
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d typed sends failed, the first: %w", n, first.Load().(error))
	}
	return nil
}

// TestKafkaProduceRuns checks the benchmark's producers on a small round:
// both deliver every event, the typed one to the partition of its key.
func TestKafkaProduceRuns(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, "produce"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic("produce"),
		kgo.ConsumeTopics("produce"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sink, err := kafka.NewProducer[string, ledger.AccountEvent](kafka.ProducerConfig[ledger.AccountEvent]{Client: cl, Topic: "produce", Codec: ledger.AccountCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ledger.NewAccountProducer(sink)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]ledger.Deposited, 500)
	for i := range events {
		events[i] = ledger.Deposited{AccountID: fmt.Sprintf("acct-%04d", i%50), Version: uint64(i/50 + 1), Amount: 1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := produceRaw(ctx, cl, events); err != nil {
		t.Fatal(err)
	}
	if err := produceTyped(ctx, p, sink, events); err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < 2*len(events) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", got, 2*len(events))
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if want := kafka.Partition(r.Key, 12); r.Partition != want {
				t.Errorf("key %s on partition %d, want %d", r.Key, r.Partition, want)
			}
		})
	}
	var invalid error
	p.PublishAsync(ctx, ledger.Deposited{}, func(err error) { invalid = err })
	if !errors.Is(invalid, runtime.ErrInvalidEvent) {
		t.Errorf("an event without a key: %v", invalid)
	}
}

package benchmarks

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
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

// The Kafka benchmark's workload: KafkaKeys keys with one event each on a
// topic of KafkaPartitions partitions, and a handler that sleeps
// KafkaHandlerSleep (I/O, not CPU).
const (
	KafkaKeys         = 10000
	KafkaHandlerSleep = 5 * time.Millisecond
	// KafkaKeysInProgress is the ordergen consumer's lanes.max_active.
	KafkaKeysInProgress = 256
)

// BenchmarkKafka consumes the same topic with ordergen's key-concurrent
// consumer (runtime/kafka feeding a generated dispatcher with
// KafkaKeysInProgress keys in progress) and with a sequential-per-partition
// consumer (one goroutine per partition, records in offset order: the
// classic Kafka consumer), in the same run. One op consumes the whole topic
// with each. Metrics: keys-ms and partition-ms (time from the first event's
// start to the last event's end: joining the group is not counted),
// speedup (partition-ms / keys-ms) and theoretical (keys in progress /
// partitions, the speedup if lanes were the only limit).
func BenchmarkKafka(b *testing.B) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(KafkaPartitions, "bench"), kfake.SeedTopics(1, "bench.dlt"))
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	if err := kafkaProduce(cluster); err != nil {
		b.Fatal(err)
	}
	var keysTime, partTime time.Duration
	b.ResetTimer()
	for i := range b.N {
		d, err := kafkaKeyConcurrent(cluster, fmt.Sprintf("keys-%d", i))
		if err != nil {
			b.Fatal(err)
		}
		keysTime += d
		d, err = kafkaPerPartition(cluster)
		if err != nil {
			b.Fatal(err)
		}
		partTime += d
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(keysTime.Milliseconds())/n, "keys-ms")
	b.ReportMetric(float64(partTime.Milliseconds())/n, "partition-ms")
	b.ReportMetric(float64(partTime)/float64(keysTime), "speedup")
	b.ReportMetric(float64(KafkaKeysInProgress)/KafkaPartitions, "theoretical")
}

func kafkaKey(i int) string { return fmt.Sprintf("acct-%05d", i) }

// kafkaProduce writes one Deposited event per key.
func kafkaProduce(cluster *kfake.Cluster) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	codec := ledger.AccountCodec{}
	ctx := context.Background()
	for i := range KafkaKeys {
		name, data, err := codec.Encode(ledger.Deposited{AccountID: kafkaKey(i), Version: 1, Amount: 1})
		if err != nil {
			return err
		}
		cl.Produce(ctx, &kgo.Record{Topic: "bench", Key: []byte(kafkaKey(i)), Value: data,
			Headers: []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(name)}}}, nil)
	}
	return cl.Flush(ctx)
}

// sleepy is an AccountHandler that sleeps on each event and counts them.
// It times the consumption from the first event's start to the last
// event's end, so that joining the group and the first fetch are not
// counted.
type sleepy struct {
	n     atomic.Int64
	once  sync.Once
	start time.Time
	end   time.Time
	done  chan struct{}
}

func (h *sleepy) event() error {
	h.once.Do(func() { h.start = time.Now() })
	time.Sleep(KafkaHandlerSleep)
	if h.n.Add(1) == KafkaKeys {
		h.end = time.Now()
		close(h.done)
	}
	return nil
}

// elapsed is the consumption time, once done is closed.
func (h *sleepy) elapsed() time.Duration { return h.end.Sub(h.start) }

func (h *sleepy) HandleAccountOpened(context.Context, ledger.AccountOpened) error { return h.event() }
func (h *sleepy) HandleDeposited(context.Context, ledger.Deposited) error         { return h.event() }
func (h *sleepy) HandleWithdrew(context.Context, ledger.Withdrew) error           { return h.event() }
func (h *sleepy) HandleAccountFrozen(context.Context, ledger.AccountFrozen) error { return h.event() }
func (h *sleepy) HandleAccountClosed(context.Context, ledger.AccountClosed) error { return h.event() }
func (h *sleepy) ResyncAccount(context.Context, string) (ledger.AccountSnapshot, error) {
	return ledger.AccountSnapshot{}, runtime.ErrUnimplemented // no gaps in this benchmark
}

// kafkaKeyConcurrent consumes the topic with runtime/kafka in a new group.
func kafkaKeyConcurrent(cluster *kfake.Cluster, group string) (time.Duration, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := kafka.NewConsumer[string, ledger.AccountEvent](kafka.Config[ledger.AccountEvent]{
		ClientOpts:      []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...)},
		Group:           group,
		Topics:          []string{"bench"},
		Codec:           ledger.AccountCodec{},
		DeadLetterTopic: "bench.dlt",
		Logger:          quiet,
	})
	if err != nil {
		return 0, err
	}
	h := &sleepy{done: make(chan struct{})}
	d, err := ledger.NewAccountDispatcher(h, func(cfg *ledger.AccountConfig) {
		cfg.OnOutcome = c.OnOutcome
		cfg.MaxActive = KafkaKeysInProgress
		cfg.Logger = quiet
	})
	if err != nil {
		return 0, err
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Run(context.Background(), d) }()
	var runErr error
	var elapsed time.Duration
	select {
	case <-h.done:
		elapsed = h.elapsed()
	case runErr = <-ran:
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if err := d.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	if st := d.Stats()["Account"]; runErr == nil && st.Handled != KafkaKeys {
		runErr = fmt.Errorf("handled %d events, want %d", st.Handled, KafkaKeys)
	}
	return elapsed, runErr
}

// kafkaPerPartition consumes the topic with one goroutine per partition,
// each handling its records in offset order.
func kafkaPerPartition(cluster *kfake.Cluster) (time.Duration, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("bench"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	h := &sleepy{done: make(chan struct{})}
	codec := ledger.AccountCodec{}
	lanes := make([]chan []*kgo.Record, KafkaPartitions)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for i := range lanes {
		lanes[i] = make(chan []*kgo.Record, 64)
		wg.Go(func() {
			for recs := range lanes[i] {
				for _, r := range recs {
					if _, err := codec.Decode(string(r.Headers[0].Value), r.Value); err != nil {
						bad.Add(1)
					}
					_ = h.event()
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-h.done
		cancel()
	}()
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) > 0 {
				lanes[p.Partition] <- p.Records
			}
		})
	}
	for _, l := range lanes {
		close(l)
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		return 0, fmt.Errorf("%d records did not decode", n)
	}
	return h.elapsed(), nil
}

package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/benchmarks/benchevents"
	"github.com/ordergen/ordergen/benchmarks/peers"
	"github.com/ordergen/ordergen/benchmarks/workload"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

// kafkaNoopTopic is BenchmarkKafkaNoop's topic, of KafkaPartitions
// partitions; the consumer's dead letters (none are expected) go to
// kafkaNoopTopic + ".dlt".
const kafkaNoopTopic = "noop"

// BenchmarkKafkaNoop consumes the same topic of KafkaNoopRecords records on
// an in-process kfake cluster with a handler that does nothing, in the same
// run, two ways: through runtime/kafka's Consumer feeding the generated
// ItemDispatcher (the benchmarks' schema: its policies, 8 keys in progress,
// its version guard on the in-memory store), and through a plain franz-go
// poll loop in one goroutine (PollFetches, the same codec's Decode, the
// handler). Each op consumes the topic with both, in a new consumer group
// each, in alternating order. Each is timed from its first event's start to
// its last event's end (joining the group is not counted). Metrics:
// consumer-rec/s and plain-rec/s, and ratio, the consumer's records/s over
// the plain loop's. Both are checked: every record handled once, each key's
// in order.
func BenchmarkKafkaNoop(b *testing.B) {
	topic, err := newNoopTopic(KafkaNoopRecords)
	if err != nil {
		b.Fatal(err)
	}
	defer topic.close()
	var consumerTime, plainTime time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range 2 {
			if (i+j)%2 == 0 {
				d, err := topic.consume(fmt.Sprintf("consumer-%d", i))
				if err != nil {
					b.Fatal(err)
				}
				consumerTime += d
			} else {
				d, err := topic.pollLoop(fmt.Sprintf("plain-%d", i))
				if err != nil {
					b.Fatal(err)
				}
				plainTime += d
			}
		}
	}
	b.StopTimer()
	records := float64(b.N) * KafkaNoopRecords
	b.ReportMetric(records/consumerTime.Seconds(), "consumer-rec/s")
	b.ReportMetric(records/plainTime.Seconds(), "plain-rec/s")
	b.ReportMetric(plainTime.Seconds()/consumerTime.Seconds(), "ratio")
}

// TestKafkaNoop runs BenchmarkKafkaNoop's two consumers on a small topic and
// checks each: every record handled exactly once, each key's in order.
func TestKafkaNoop(t *testing.T) {
	topic, err := newNoopTopic(3000)
	if err != nil {
		t.Fatal(err)
	}
	defer topic.close()
	if _, err := topic.consume("consumer"); err != nil {
		t.Errorf("consumer: %v", err)
	}
	if _, err := topic.pollLoop("plain"); err != nil {
		t.Errorf("plain poll loop: %v", err)
	}
}

// noopTopic is a kfake cluster with a topic of n records of the uniform
// workload, and what was produced per key, for the checks.
type noopTopic struct {
	cluster   *kfake.Cluster
	n         int
	submitted []uint32 // per key: its records, the last one's sequence
}

// newNoopTopic starts a cluster and produces n records to kafkaNoopTopic.
func newNoopTopic(n int) (*noopTopic, error) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(KafkaPartitions, kafkaNoopTopic),
		kfake.SeedTopics(1, kafkaNoopTopic+".dlt"))
	if err != nil {
		return nil, err
	}
	t := &noopTopic{cluster: cluster, n: n, submitted: make([]uint32, workload.NumKeys)}
	if err := t.produce(); err != nil {
		cluster.Close()
		return nil, err
	}
	return t, nil
}

func (t *noopTopic) close() { t.cluster.Close() }

func (t *noopTopic) seeds() kgo.Opt { return kgo.SeedBrokers(t.cluster.ListenAddrs()...) }

// produce writes the records: the uniform workload's key sequence, each
// event encoded by the generated codec, keyed by its key.
func (t *noopTopic) produce() error {
	cl, err := kgo.NewClient(t.seeds())
	if err != nil {
		return err
	}
	defer cl.Close()
	keys := workload.Keys()
	seq := workload.Spec{}.Sequence()
	codec := benchevents.ItemCodec{}
	ctx := context.Background()
	var failed atomic.Pointer[error]
	for i := range t.n {
		k := seq[i%len(seq)]
		t.submitted[k]++
		ev := peers.Event{Key: k, Seq: t.submitted[k], Index: uint32(i)}
		name, data, err := codec.Encode(peers.ToSubmitted(keys[k], ev))
		if err != nil {
			return err
		}
		cl.Produce(ctx, &kgo.Record{Topic: kafkaNoopTopic, Key: []byte(keys[k]), Value: data,
			Headers: []kgo.RecordHeader{{Key: transport.HeaderType, Value: []byte(name)}}},
			func(_ *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err := failed.Load(); err != nil {
		return fmt.Errorf("produce: %w", *err)
	}
	return nil
}

// tally wraps a run's check: it notes when the first event started and
// when the n-th ended, and closes done then.
type tally struct {
	check *workload.Check
	h     peers.Handler
	n     int64
	count atomic.Int64
	once  sync.Once
	start time.Time
	end   time.Time
	done  chan struct{}
}

func (t *noopTopic) newTally() *tally {
	c := workload.NewCheck(t.n, true, false, workload.Spin{})
	return &tally{check: c, h: c.Handler(), n: int64(t.n), done: make(chan struct{})}
}

// handle is the no-op handler, with the run's checks.
func (ta *tally) handle(key string, ev peers.Event) {
	ta.once.Do(func() { ta.start = time.Now() })
	ta.h(key, ev)
	if ta.count.Add(1) == ta.n {
		ta.end = time.Now()
		close(ta.done)
	}
}

// verify returns the run's time, or why the run was wrong.
func (ta *tally) verify(submitted []uint32) (time.Duration, error) {
	if n := ta.count.Load(); n != ta.n {
		return 0, fmt.Errorf("%d events handled, want %d", n, ta.n)
	}
	if err := ta.check.Verify(submitted); err != nil {
		return 0, err
	}
	return ta.end.Sub(ta.start), nil
}

// consume reads the topic with runtime/kafka's consumer in group, feeding
// the generated dispatcher with the schema's policies.
func (t *noopTopic) consume(group string) (time.Duration, error) {
	quiet := slog.New(slog.DiscardHandler)
	c, err := kafka.NewConsumer[string, benchevents.ItemEvent](kafka.Config[benchevents.ItemEvent]{
		ClientOpts:      []kgo.Opt{t.seeds()},
		Group:           group,
		Topics:          []string{kafkaNoopTopic},
		Codec:           benchevents.ItemCodec{},
		DeadLetterTopic: kafkaNoopTopic + ".dlt",
		Logger:          quiet,
	})
	if err != nil {
		return 0, err
	}
	ta := t.newTally()
	d, err := benchevents.NewItemDispatcher(peers.ItemHandler(ta.handle), func(cfg *benchevents.ItemConfig) {
		cfg.OnOutcome = c.OnOutcome
		cfg.Logger = quiet
	})
	if err != nil {
		return 0, err
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Run(context.Background(), d) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var runErr error
	select {
	case <-ta.done:
	case runErr = <-ran:
		if runErr == nil {
			runErr = errors.New("the consumer stopped before every record was handled")
		}
	case <-ctx.Done():
		runErr = fmt.Errorf("%d of %d records handled: %w", ta.count.Load(), ta.n, ctx.Err())
	}
	closeErr := c.Close(ctx)
	if err := d.Close(ctx); err != nil {
		closeErr = errors.Join(closeErr, err)
	}
	if runErr != nil || closeErr != nil {
		return 0, errors.Join(runErr, closeErr)
	}
	if st := d.Stats()["Item"]; st.Handled != uint64(t.n) || st.Skipped != 0 || st.Retried != 0 {
		return 0, fmt.Errorf("dispatcher: %+v, want %d events handled at the first attempt", st, t.n)
	}
	if st := c.Stats(); st.DeadLettered != 0 {
		return 0, fmt.Errorf("consumer: %d records dead-lettered", st.DeadLettered)
	}
	return ta.verify(t.submitted)
}

// pollLoop reads the topic in group with a plain franz-go poll loop in one
// goroutine: poll, decode with the same codec, call the handler.
func (t *noopTopic) pollLoop(group string) (time.Duration, error) {
	cl, err := kgo.NewClient(t.seeds(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(kafkaNoopTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ta := t.newTally()
	codec := benchevents.ItemCodec{}
	var bad error
	for ta.count.Load() < ta.n && bad == nil {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("%d of %d records handled: %w", ta.count.Load(), ta.n, err)
		}
		fetches.EachError(func(_ string, _ int32, err error) { bad = errors.Join(bad, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			ev, err := codec.Decode(headerType(r), r.Value)
			if err != nil {
				bad = errors.Join(bad, err)
				return
			}
			s, ok := ev.(benchevents.Submitted)
			if !ok {
				bad = errors.Join(bad, fmt.Errorf("offset %d: event %T", r.Offset, ev))
				return
			}
			ta.handle(s.Key, peers.Event{Key: s.KeyIndex, Seq: uint32(s.Seq), Index: s.Index})
		})
	}
	if bad != nil {
		return 0, bad
	}
	return ta.verify(t.submitted)
}

// headerType returns the record's event type header, or "".
func headerType(r *kgo.Record) string {
	for _, h := range r.Headers {
		if h.Key == transport.HeaderType {
			return string(h.Value)
		}
	}
	return ""
}

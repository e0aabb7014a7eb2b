package kafka_test

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transport"
)

// The drop-oldest and drop-newest backlog policies would let the commit
// pass records no handler ran: Run refuses them before it joins the group,
// and commits nothing. (On 68098fc they were accepted, and a dropped
// record counted as finished.)
func TestDropPoliciesRefused(t *testing.T) {
	c := newCluster(t, 1)
	produce(t, c, []string{"k"}, 1, 50)
	for _, policy := range []runtime.FullPolicy{runtime.DropOldest, runtime.DropNewest} {
		t.Run(policy.String(), func(t *testing.T) {
			kc, err := kafka.NewConsumer[string, ev](kafka.Config[ev]{
				ClientOpts: []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, Group: "g-" + policy.String(),
				Topics: []string{topic}, Codec: codec{}, DeadLetterTopic: dlt, Logger: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			e, err := runtime.New(func(context.Context, string, ev) error { return nil }, runtime.Config[string, ev]{
				OnOutcome: kc.OnOutcome, Logger: slog.New(slog.DiscardHandler),
				Backlog: runtime.Backlog{PerKey: 2, Total: 2, WhenFull: policy},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = kc.Run(ctx, transport.EngineTarget(e))
			if !errors.Is(err, runtime.ErrInvalidConfig) || !strings.Contains(err.Error(), policy.String()) {
				t.Fatalf("Run with a %s subscriber returned %v, want an ErrInvalidConfig naming the policy", policy, err)
			}
			if commits := c.GroupInfo("g-" + policy.String()); commits != nil && len(commits.Commits) > 0 {
				t.Errorf("commits %v after a refused Run", commits.Commits)
			}
		})
	}
}

// A client whose partitioner does not hash keys like the Java client would
// silently break per-key order across producers: NewProducer refuses it,
// and accepts the partitioners that do. (On 68098fc a round-robin client
// was accepted.)
func TestProducerRefusesPartitioners(t *testing.T) {
	c := newCluster(t, 3)
	fnv32a := func(b []byte) uint32 {
		h := fnv.New32a()
		h.Write(b)
		return h.Sum32()
	}
	refused := map[string]kgo.Partitioner{
		"round robin":          kgo.RoundRobinPartitioner(),
		"sticky":               kgo.StickyPartitioner(),
		"least backup":         kgo.LeastBackupPartitioner(),
		"manual":               kgo.ManualPartitioner(),
		"uniform without keys": kgo.UniformBytesPartitioner(1<<16, true, false, nil),
		"sarama fnv":           kgo.StickyKeyPartitioner(kgo.SaramaCompatHasher(fnv32a)),
	}
	for name, p := range refused {
		_, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c, kgo.RecordPartitioner(p)), Topic: topic, Codec: codec{}})
		if !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s partitioner: NewProducer returned %v, want an ErrInvalidConfig", name, err)
		}
	}
	accepted := map[string][]kgo.Opt{
		"default":        nil,
		"sticky key":     {kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil))},
		"uniform keyed":  {kgo.RecordPartitioner(kgo.UniformBytesPartitioner(1<<10, false, true, nil))},
		"kafka murmur2":  {kgo.RecordPartitioner(kgo.StickyKeyPartitioner(kgo.KafkaHasher(kafka.Murmur2)))},
		"same, explicit": {kgo.RecordPartitioner(kgo.UniformBytesPartitioner(1<<16, true, true, nil))},
	}
	for name, opts := range accepted {
		if _, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c, opts...), Topic: topic, Codec: codec{}}); err != nil {
			t.Errorf("%s partitioner refused: %v", name, err)
		}
	}
}

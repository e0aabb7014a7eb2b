package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/kafka"
)

// murmur2 against the Java client's own vectors (UtilsTest.testMurmur2 in
// Apache Kafka's clients module).
func TestMurmur2JavaVectors(t *testing.T) {
	for key, want := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		if got := int32(kafka.Murmur2([]byte(key))); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", key, got, want)
		}
	}
}

// Partition agrees with franz-go's default partitioner for keyed records,
// for every key length and many partition counts.
func TestPartitionAgreesWithFranzGo(t *testing.T) {
	tp := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	for i := range 500 {
		key := []byte(fmt.Sprintf("%0*d", i%40, i))
		for _, n := range []int{1, 2, 7, 12, 100, 1<<31 - 1} {
			want := tp.Partition(&kgo.Record{Key: key}, n)
			if got := kafka.Partition(key, n); int(got) != want {
				t.Fatalf("Partition(%q, %d) = %d, franz-go %d", key, n, got, want)
			}
		}
	}
	if kafka.Partition([]byte("k"), 0) != -1 {
		t.Error("Partition with no partitions is not -1")
	}
}

// The producer's records land on the partition Partition names.
func TestProducerPartitionsByMurmur2(t *testing.T) {
	const parts = 7
	c := newCluster(t, parts)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	ks := keys(50)
	for _, k := range ks {
		if err := p.Send(context.Background(), k, ev{k, 1}); err != nil {
			t.Fatal(err)
		}
	}
	cl := client(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for got := 0; got < len(ks); {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records", got, len(ks))
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			if want := kafka.Partition(r.Key, parts); r.Partition != want {
				t.Errorf("key %s on partition %d, want %d", r.Key, r.Partition, want)
			}
		})
	}
}

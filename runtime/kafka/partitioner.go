package kafka

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
)

// Partition returns the partition of a record keyed by key in a topic of n
// partitions, as the Java client's default partitioner computes it (and
// franz-go's): murmur2 of the key, the high bit masked, modulo n. It
// returns -1 for n below 1.
func Partition(key []byte, n int) int32 {
	if n < 1 {
		return -1
	}
	return int32(int(murmur2(key)&0x7fffffff) % n)
}

// murmur2 is the 32-bit MurmurHash2 with the Java client's seed
// (0x9747b28c), over little-endian 4-byte words.
func murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(data))
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		k *= m
		k ^= k >> r
		k *= m
		h = h*m ^ k
		data = data[4:]
	}
	switch len(data) {
	case 3:
		h ^= uint32(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// probeKeys and probeCounts are what checkPartitioner asks the client's
// partitioner about: enough keys and partition counts that a partitioner
// that does not hash keys with murmur2 answers differently somewhere.
var probeCounts = [...]int{2, 3, 5, 12, 64, 1000}

const probeKeys = 64

// checkPartitioner refuses, with an error wrapping ErrInvalidConfig, a client
// whose partitioner does not place every keyed record of topic where the
// Java client's default partitioner would (Partition), or does not require
// that placement to be kept when some partitions are not writable.
func checkPartitioner(cl *kgo.Client, topic string) error {
	p, _ := cl.OptValue(kgo.RecordPartitioner).(kgo.Partitioner)
	if p == nil {
		return fmt.Errorf("kafka: %w: the client has no partitioner", runtime.ErrInvalidConfig)
	}
	tp := p.ForTopic(topic)
	for i := range probeKeys {
		key := []byte("ordergen-probe-" + strconv.Itoa(i))
		for _, n := range probeCounts {
			r := &kgo.Record{Topic: topic, Key: key}
			want := Partition(key, n)
			if !tp.RequiresConsistency(r) {
				return fmt.Errorf("kafka: %w: the client's partitioner may place a keyed record on another partition than its key's when some are not writable: per-key order would break; use franz-go's default partitioner", runtime.ErrInvalidConfig)
			}
			got := partitionWith(tp, r, n)
			if got != want {
				return fmt.Errorf("kafka: %w: the client's partitioner put key %q on partition %d of %d, the Java client's murmur2 partitioner on %d: per-key order needs every producer to hash keys alike; use franz-go's default partitioner",
					runtime.ErrInvalidConfig, key, got, n, want)
			}
		}
	}
	return nil
}

// partitionWith asks tp where it puts r among n partitions, without
// panicking for a partitioner that does not answer plainly.
func partitionWith(tp kgo.TopicPartitioner, r *kgo.Record, n int) (got int32) {
	defer func() {
		if recover() != nil {
			got = -1
		}
	}()
	if b, ok := tp.(kgo.TopicBackupPartitioner); ok {
		return int32(b.PartitionByBackup(r, n, &probeBackup{n: n}))
	}
	return int32(tp.Partition(r, n))
}

// probeBackup is a TopicBackupIter over n partitions with nothing
// buffered.
type probeBackup struct{ n, i int }

func (b *probeBackup) Next() (int, int64) {
	b.i++
	return b.i - 1, 0
}

func (b *probeBackup) Rem() int { return b.n - b.i }

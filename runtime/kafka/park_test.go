package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// With the in-memory park, a parked key's records stay unfinished until
// the metadata bound pauses the partition; a replay then finishes them and
// resumes it: every record is handled, the commit reaches the end of the
// partition, and a restart runs none of the replayed events again. (On
// 68098fc the replay's outcomes were ignored: the partition stayed paused
// and the commit stayed put.)
func TestReplayAfterPauseResumesPartition(t *testing.T) {
	resolveParkAfterPause(t, false)
}

// A discard resolves the park as a replay does: the discarded records
// finish (discarded by the operator), the partition resumes and the commit
// reaches the end.
func TestDiscardAfterPauseResumesPartition(t *testing.T) {
	resolveParkAfterPause(t, true)
}

func resolveParkAfterPause(t *testing.T, discard bool) {
	const total = 1000
	c := newCluster(t, 1)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	// One record in ten is of key "bad", whose handler fails for good
	// until the operator fixes it; the others are one event of a key each.
	want := map[string]int{}
	for i := range total {
		key := fmt.Sprintf("k%04d", i)
		if i%10 == 0 {
			key = "bad"
		}
		want[key]++
		if err := p.Send(context.Background(), key, ev{key, want[key]}); err != nil {
			t.Fatal(err)
		}
	}
	var fixed atomic.Bool
	applied := total
	if discard {
		applied -= want["bad"]
	}
	j := newJournal(applied)
	handled := afterHandled(total) // handled, or discarded
	const metadataPause = "partition paused: its commit metadata"
	logs := newLogSignal(metadataPause)
	m := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxMetadataBytes = 64
			cfg.Logger = logs.logger()
		},
		engine: handled.hook,
		handler: func(_ context.Context, key string, e ev) error {
			j.start("a", e)
			switch {
			case key == "bad" && !fixed.Load():
				return runtime.Permanent(errors.New("broken until fixed"))
			case key == "bad" && discard:
				return nil // later ones, after the discard: handled, not journaled
			}
			j.apply(e)
			return nil
		},
	})
	// The partition may pause for records in flight before "bad" parks, and
	// resume when they finish; once "bad" is parked its records keep gaps
	// open, and the partition pauses for good. So wait for the park, then
	// for a pause that is still on when looked at.
	await(t, handled.parked, "the first record of bad to park")
	var paused kafka.Stats
	for n := 1; ; n++ {
		await(t, logs.after(metadataPause, n), "the partition to pause for its metadata")
		if paused = m.c.Stats(); paused.Paused == 1 {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fixed.Store(true)
	if discard {
		if _, err := m.engine.Discard(ctx, "bad"); err != nil {
			t.Fatal(err)
		}
		delete(want, "bad")
	} else if err := m.engine.Replay(ctx, "bad"); err != nil {
		t.Fatal(err)
	}
	await(t, j.done, "every record to be applied after the park was resolved")
	await(t, handled.done, "every record's outcome")
	if err := m.c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if commit := c.GroupInfo("g").Commits[topic][0]; commit.Offset != total {
		t.Errorf("after the park was resolved the commit is at %d (metadata %q), want %d", commit.Offset, commit.Metadata, total)
	}
	m.stop(t)
	if paused.Paused != 1 || paused.InFlight == 0 {
		t.Errorf("while paused: %d partitions paused, %d records in flight", paused.Paused, paused.InFlight)
	}
	j.check(t, want)

	// A restart starts after the end: it takes only a record produced
	// now, and none of the replayed events runs again.
	if err := p.Send(context.Background(), "after", ev{"after", 1}); err != nil {
		t.Fatal(err)
	}
	j2 := newJournal(1)
	m2 := startMember(t, c, "g", memberOpts{handler: j2.handler("b")})
	await(t, j2.done, "the record produced after the restart")
	m2.stop(t)
	if st := m2.c.Stats(); st.Polled != 1 {
		t.Errorf("the restarted consumer polled %d records, want only the new one", st.Polled)
	}
	j2.check(t, map[string]int{"after": 1})
}

// outcomeCount passes outcomes on to the consumer, closes parked at the
// first event parked and done once n events were handled (or discarded).
type outcomeCount struct {
	n          int64
	seen       atomic.Int64
	once, park sync.Once
	done       chan struct{}
	parked     chan struct{}
}

func afterHandled(n int) *outcomeCount {
	return &outcomeCount{n: int64(n), done: make(chan struct{}), parked: make(chan struct{})}
}

func (h *outcomeCount) hook(rc *runtime.Config[string, ev]) {
	consumer := rc.OnOutcome
	rc.OnOutcome = func(key string, tag uint64, o runtime.Outcome) {
		consumer(key, tag, o)
		if o == runtime.Parked {
			h.park.Do(func() { close(h.parked) })
		}
		if (o == runtime.Handled || o == runtime.Discarded) && h.seen.Add(1) == h.n {
			h.once.Do(func() { close(h.done) })
		}
	}
}

// A partition held for its commit metadata (a parked key keeps its gaps
// open until an operator resolves it) holds up only itself: records
// produced to another partition after the hold are still polled and
// handled. (Each retry of the held partition used to wake the feeder
// again at once: it retried in a loop, several hundred thousand times a
// second, and never polled again.)
func TestHeldPartitionLeavesTheOthersGoing(t *testing.T) {
	c := newCluster(t, 2)
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Partition 0 (the manual partitioner's default): every tenth record is
	// the next of "bad", the others the first of a key of their own.
	var recs []*kgo.Record
	for i := range 1000 {
		key, seq := fmt.Sprintf("k%04d", i), 1
		if i%10 == 0 {
			key, seq = "bad", i/10+1
		}
		recs = append(recs, rec(key, "ev", fmt.Sprintf(`{"Key":%q,"Seq":%d}`, key, seq)))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	const metadataPause = "partition paused: its commit metadata"
	logs := newLogSignal(metadataPause)
	var others tally // records of partition 1 handled
	m := startMember(t, c, "g", memberOpts{
		cfg: func(cfg *kafka.Config[ev]) {
			cfg.MaxMetadataBytes = 64
			cfg.Logger = logs.logger()
		},
		handler: func(_ context.Context, key string, _ ev) error {
			switch {
			case key == "bad":
				return runtime.Permanent(errors.New("broken"))
			case strings.HasPrefix(key, "other"):
				others.add()
			}
			return nil
		},
	})
	// The partition may pause for records in flight before "bad" parks and
	// resume; once "bad" is parked it pauses for good.
	for n := 1; ; n++ {
		await(t, logs.after(metadataPause, n), "partition 0 to pause for its metadata")
		if m.c.Stats().Paused == 1 {
			break
		}
	}
	var later []*kgo.Record
	for i := range 5 {
		r := rec(fmt.Sprintf("other%d", i), "ev", fmt.Sprintf(`{"Key":"other%d","Seq":1}`, i))
		r.Partition = 1
		later = append(later, r)
	}
	if err := cl.ProduceSync(ctx, later...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	await(t, others.after(len(later)), "partition 1's records, produced after partition 0's hold")
	if st := m.c.Stats(); st.Paused != 1 {
		t.Errorf("%d partitions paused, want partition 0 still paused for its metadata", st.Paused)
	}
	m.stop(t)
}

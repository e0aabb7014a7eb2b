package kafka_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/kafka"
)

var stormCycles = flag.Int("kafka.storm", 30, "join/leave cycles of TestRebalanceStorm (run longer with e.g. -kafka.storm=300)")

// A rebalance storm: three members of a group on six partitions, one of
// them leaving cleanly and a new one joining in its place, cycle after
// cycle, while records keep arriving. Every event is applied exactly once,
// in order per key: a clean leave or a revoke withdraws what has not
// started, waits for what runs and commits before the partition moves, so
// the next owner starts right after what finished (nothing lost, nothing
// applied twice, nothing backwards).
func TestRebalanceStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("stress: the full run (without -short) runs it")
	}
	const members, perRound = 3, 3
	cycles := *stormCycles
	c := newCluster(t, 6)
	ks := keys(30)
	total := len(ks) * perRound * (cycles + 1)
	j := newJournal(total)
	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	seq := 0
	round := func() { // perRound more events of every key, sent without waiting
		for range perRound {
			seq++
			for _, k := range ks {
				p.SendAsync(context.Background(), k, ev{k, seq}, func(err error) {
					if err != nil {
						t.Errorf("produce: %v", err)
					}
				})
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	born := 0
	start := func() *member {
		born++
		apply := j.handler(fmt.Sprint("m", born))
		return startMember(t, c, "g", memberOpts{handler: func(ctx context.Context, key string, e ev) error {
			// Work of up to half a millisecond, so that rebalances find
			// events running and queued.
			time.Sleep(time.Duration(e.Seq%3) * 250 * time.Microsecond)
			return apply(ctx, key, e)
		}})
	}
	var ms [members]*member
	for i := range ms {
		ms[i] = start()
	}
	round()
	began := time.Now()
	for cycle := range cycles {
		if _, err := c.WaitGroupStable(ctx, "g", members); err != nil {
			t.Fatal(err)
		}
		slot := cycle % members
		ms[slot].stop(t)   // a clean leave...
		round()            // ...while records arrive...
		ms[slot] = start() // ...and a join
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, j.done, fmt.Sprintf("all %d events to be applied", total))
	for _, m := range ms {
		m.stop(t)
	}
	want := map[string]int{}
	for _, k := range ks {
		want[k] = seq
	}
	j.check(t, want)
	t.Logf("%d join/leave cycles in %v; %d events applied once each, in order", cycles, time.Since(began).Round(time.Millisecond), total)
}

package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

// produceTo writes events 1..n of each key to the partition given for it.
func produceTo(t *testing.T, c *kfake.Cluster, keyOf map[int32]string, n int) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for part, key := range keyOf {
		for seq := 1; seq <= n; seq++ {
			r := rec(key, "ev", fmt.Sprintf(`{"Key":%q,"Seq":%d}`, key, seq))
			r.Partition = part
			recs = append(recs, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// blockFirst returns a handler for who that journals each start and
// application, and holds the first event of every key until gate opens or
// its context is cancelled; firsts is closed once keys such events started.
func blockFirst(j *journal, who string, keys int, gate <-chan struct{}) (runtime.Handler[string, ev], <-chan struct{}) {
	firsts := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ctx context.Context, key string, e ev) error {
		j.start(who, e)
		if e.Seq == 1 {
			mu.Lock()
			if !seen[key] {
				seen[key] = true
				if len(seen) == keys {
					close(firsts)
				}
			}
			mu.Unlock()
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		j.apply(e)
		return nil
	}, firsts
}

// A partition revoked from a member while its handler runs the first event
// of a key, with the key's later events queued behind it, moves to another
// member: the queued events never start on the first member, its running
// handler is cancelled at RevokeTimeout, and the new owner applies the
// key's events once each, in order. (On 68098fc the first member ran the
// key's queued events again after the new owner had applied them all.)
func TestRevokedPartitionFenced(t *testing.T) {
	c := newCluster(t, 2)
	produceTo(t, c, map[int32]string{0: "k0", 1: "k1"}, 5)
	j := newJournal(5)
	gate := make(chan struct{})
	var subs submits
	ha, firsts := blockFirst(j, "a", 2, gate)
	a := startMember(t, c, "g", memberOpts{handler: ha, wrap: subs.wrap, engine: fenceRetry,
		cfg: func(cfg *kafka.Config[ev]) { cfg.RevokeTimeout = 200 * time.Millisecond }})
	await(t, subs.after(10), "the first member to take every record")
	await(t, firsts, "the first member to start the first event of both keys")

	b := startMember(t, c, "g", memberOpts{handler: j.handler("b"), engine: fenceRetry})
	await(t, j.done, "the second member to apply the moved key's five events")
	close(gate) // the first member's handlers may go on now
	b.stop(t)
	a.stop(t)

	moved, stayed := "k0", "k1"
	if len(j.startsOf("b", "k1")) > 0 {
		moved, stayed = "k1", "k0"
	}
	if got := j.startsOf("a", moved); !slices.Equal(got, []int{1}) {
		t.Errorf("the first member started %s's events %v; want only the first, before its partition moved", moved, got)
	}
	j.check(t, map[string]int{moved: 5, stayed: 5})
}

// A member told ILLEGAL_GENERATION by one heartbeat loses its partition
// while a handler runs the first event of a key, and gets the partition
// back under a new ownership: the events of the lost ownership never start
// again, the new ownership's run once each, in order. (On 68098fc the lost
// ownership's queued events ran, then the new ownership's again from the
// first: duplicates and a backwards application in one process.)
func TestLostPartitionFencedInProcess(t *testing.T) {
	c := newCluster(t, 1)
	produce(t, c, []string{"k"}, 1, 5)
	var armed, fired atomic.Bool
	c.ControlKey(int16(kmsg.Heartbeat), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !armed.Load() || !fired.CompareAndSwap(false, true) {
			return nil, nil, false
		}
		req := kr.(*kmsg.HeartbeatRequest)
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.Version = req.Version
		resp.ErrorCode = kerr.IllegalGeneration.Code
		return resp, nil, true
	})
	j := newJournal(5)
	gate := make(chan struct{})
	logs := newLogSignal("partitions assigned")
	var subs submits
	h, firsts := blockFirst(j, "a", 1, gate)
	m := startMember(t, c, "g", memberOpts{handler: h, wrap: subs.wrap, engine: fenceRetry,
		cfg: func(cfg *kafka.Config[ev]) { cfg.Logger = logs.logger() }})
	await(t, firsts, "the first event to start")
	armed.Store(true)
	await(t, logs.after("partitions assigned", 2), "the partition to come back after the lost heartbeat")
	taken := subs.count() // what the lost ownership took; it takes nothing more
	await(t, subs.after(taken+5), "the new ownership to take the five records again")
	close(gate)
	await(t, j.done, "five applications")
	m.stop(t)

	if got := j.startsOf("a", "k"); !slices.Equal(got, []int{1, 1, 2, 3, 4, 5}) {
		t.Errorf("handler starts %v; want the lost ownership's first event, then the new ownership's 1..5", got)
	}
	j.check(t, map[string]int{"k": 5})
}

package runtime_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// The hot-key scenario of the lanes article: 400 events over 40 keys, half
// of them on one key, handlers taking 1-4 ms, 8 keys in progress at once.
type hotEvent struct {
	key   string
	seq   int
	sleep time.Duration
}

func hotKeyEvents() []hotEvent {
	rng := rand.New(rand.NewPCG(3, 3))
	seq := map[string]int{}
	events := make([]hotEvent, 0, 400)
	for range 400 {
		key := fmt.Sprintf("acct-%d", rng.IntN(40))
		if rng.Float64() < 0.5 {
			key = "acct-0"
		}
		events = append(events, hotEvent{key, seq[key], time.Millisecond + time.Duration(rng.Int64N(int64(3*time.Millisecond)))})
		seq[key]++
	}
	return events
}

// completionLog records, for each event, how many hot-key events had
// completed when it completed.
type completionLog struct {
	hotDone  atomic.Int64
	mu       sync.Mutex
	coldLast int64 // hot events done when the last cold event completed
	order    map[string][]int
}

func (c *completionLog) done(e hotEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		c.order = map[string][]int{}
	}
	c.order[e.key] = append(c.order[e.key], e.seq)
	if e.key == "acct-0" {
		c.hotDone.Add(1)
		return
	}
	c.coldLast = c.hotDone.Load()
}

func work(e hotEvent, log *completionLog) {
	time.Sleep(e.sleep) // the handler's latency
	log.done(e)
}

func runLanes(t *testing.T, events []hotEvent) *completionLog {
	log := &completionLog{}
	h := func(_ context.Context, _ string, e hotEvent) error { work(e, log); return nil }
	eng, err := runtime.New(h, runtime.Config[string, hotEvent]{MaxActive: 8, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, e := range events {
		if err := eng.Submit(ctx, e.key, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return log
}

// runPartitioned is the baseline: key -> one of 8 serial workers by crc32.
func runPartitioned(events []hotEvent) *completionLog {
	log := &completionLog{}
	var parts [8]chan hotEvent
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = make(chan hotEvent, len(events))
		wg.Go(func() {
			for e := range parts[i] {
				work(e, log)
			}
		})
	}
	for _, e := range events {
		parts[crc32.ChecksumIEEE([]byte(e.key))%8] <- e
	}
	for _, p := range parts {
		close(p)
	}
	wg.Wait()
	return log
}

func TestHotKeyDoesNotStallColdKeys(t *testing.T) {
	events := hotKeyEvents()
	var hot int64
	for _, e := range events {
		if e.key == "acct-0" {
			hot++
		}
	}
	lanes := runLanes(t, events)
	parts := runPartitioned(events)
	for name, log := range map[string]*completionLog{"lanes": lanes, "partitioned": parts} {
		for key, seqs := range log.order {
			for i, s := range seqs {
				if s != i {
					t.Fatalf("%s: key %s completed out of order: %v", name, key, seqs)
				}
			}
		}
	}
	t.Logf("hot-key events (of %d) completed when the last cold event completed: lanes %d, partitioned %d",
		hot, lanes.coldLast, parts.coldLast)
	// With lanes the cold keys finish while the hot key has most of its
	// backlog still ahead; partitioned, some cold key waits behind nearly
	// all of it.
	if lanes.coldLast*2 >= hot {
		t.Errorf("lanes: the last cold event completed after %d of %d hot events; cold keys waited for the hot key", lanes.coldLast, hot)
	}
	if parts.coldLast*5 < hot*4 {
		t.Errorf("partitioned baseline: the last cold event completed after only %d of %d hot events; the scenario does not reproduce the stall", parts.coldLast, hot)
	}
}

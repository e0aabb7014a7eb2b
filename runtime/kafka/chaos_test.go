package kafka_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
)

var chaosFor = flag.Duration("kafka.chaos", 3*time.Second, "how long TestConsumerChaos attacks the consumers (run long with e.g. -kafka.chaos=2m)")

// guarded is the shared database of the chaos test: per key the last
// applied Seq, applied only when it is the next one (the version guard).
// It records what must never happen: an event handled before its
// predecessor was applied (order broken or an event lost), and a handler
// starting for a key while another member's handler of that key runs with
// a context nobody cancelled (a partition's work not fenced).
type guarded struct {
	mu         sync.Mutex
	last       map[string]int
	running    map[string][]context.Context
	dups       int
	violations []string
	fixedUpTo  map[string]int // per key, the poison events up to this Seq are fixed
}

// poison reports whether the event fails for good until the operator
// fixes it: about one in forty.
func poison(e ev) bool {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", e.Key, e.Seq)
	return h.Sum32()%40 == 0
}

func (g *guarded) handle(ctx context.Context, key string, e ev) error {
	g.mu.Lock()
	for _, other := range g.running[key] {
		if other.Err() == nil {
			g.violations = append(g.violations, fmt.Sprintf("key %s: event %d started while an unfenced handler of the key ran", key, e.Seq))
		}
	}
	g.running[key] = append(g.running[key], ctx)
	broken := poison(e) && e.Seq > g.fixedUpTo[key]
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		rs := g.running[key]
		for i, c := range rs {
			if c == ctx {
				g.running[key] = append(rs[:i], rs[i+1:]...)
				break
			}
		}
	}()
	if broken {
		return runtime.Permanent(errors.New("poison"))
	}
	if err := ctx.Err(); err != nil {
		return err // fenced: apply nothing
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch last := g.last[key]; {
	case e.Seq == last+1:
		g.last[key] = e.Seq
	case e.Seq <= last:
		g.dups++ // delivered again after a crash: the guard skips it
	default:
		g.violations = append(g.violations, fmt.Sprintf("key %s: event %d handled after %d", key, e.Seq, last))
	}
	return nil
}

// The consumers attacked at random moments: members join, leave cleanly
// and crash; poison events park their keys and the operator fixes and
// replays them (or replays them unfixed, and they park again); bad wire
// records go to the dead-letter topic. Throughout: no event is handled
// before its predecessor and no handler starts while an unfenced one of its
// key runs elsewhere. At the end every event is applied (nothing lost) and
// every bad record was dead-lettered.
func TestConsumerChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos: the full run (without -short) runs it")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (run long with -kafka.chaos=2m)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	c := newCluster(t, 6)
	ks := keys(20)
	g := &guarded{last: map[string]int{}, running: map[string][]context.Context{}, fixedUpTo: map[string]int{}}
	produced := map[string]int{}

	var mu sync.Mutex // guards members and born
	members := map[string]*member{}
	born := 0
	join := func() {
		mu.Lock()
		born++
		name := fmt.Sprint("m", born)
		mu.Unlock()
		m := startMember(t, c, "g", memberOpts{handler: g.handle, engine: func(rc *runtime.Config[string, ev]) {
			rc.Retry = runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
		}, cfg: func(cfg *kafka.Config[ev]) { cfg.RevokeTimeout = time.Second }})
		mu.Lock()
		members[name] = m
		mu.Unlock()
	}
	pick := func() (string, *member) {
		mu.Lock()
		defer mu.Unlock()
		if len(members) < 2 {
			return "", nil
		}
		names := make([]string, 0, len(members))
		for n := range members {
			names = append(names, n)
		}
		n := names[rng.IntN(len(names))]
		m := members[n]
		delete(members, n)
		return n, m
	}
	// operate fixes (or not) and replays the parked keys of every member;
	// it runs on the test's goroutine, which produces.
	operate := func(fix bool) {
		mu.Lock()
		ms := make([]*member, 0, len(members))
		for _, m := range members {
			ms = append(ms, m)
		}
		mu.Unlock()
		ctx := context.Background()
		for _, m := range ms {
			parked, err := m.engine.ParkedKeys(ctx)
			if err != nil {
				continue
			}
			for _, pk := range parked {
				if fix { // the poison sent so far
					g.mu.Lock()
					g.fixedUpTo[pk.Key] = produced[pk.Key]
					g.mu.Unlock()
				}
				_ = m.engine.Replay(ctx, pk.Key) // may park again, or find the key gone
			}
		}
	}

	p, err := kafka.NewProducer[string, ev](kafka.ProducerConfig[ev]{Client: client(t, c), Topic: topic, Codec: codec{}})
	if err != nil {
		t.Fatal(err)
	}
	raw := client(t, c)
	var badOffsets int
	produceSome := func() {
		for range 20 {
			k := ks[rng.IntN(len(ks))]
			produced[k]++
			p.SendAsync(context.Background(), k, ev{k, produced[k]}, func(err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if rng.IntN(10) == 0 { // a bad wire record
			badOffsets++
			raw.Produce(context.Background(), rec(ks[0], "ev", `{"Key":`), nil)
		}
	}

	for range 3 {
		join()
	}
	deadline := time.Now().Add(*chaosFor)
	ops := map[string]int{}
	for time.Now().Before(deadline) {
		produceSome()
		switch op := rng.IntN(10); {
		case op < 2:
			mu.Lock()
			n := len(members)
			mu.Unlock()
			if n < 4 {
				join()
				ops["join"]++
			}
		case op < 4:
			if _, m := pick(); m != nil {
				m.stop(t)
				ops["leave"]++
			}
		case op < 5:
			if _, m := pick(); m != nil {
				m.kill(t)
				ops["crash"]++
			}
		case op < 7:
			operate(rng.IntN(2) == 0)
			ops["replay"]++
		default:
			// let the group settle for a while: records flow
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(50+rng.IntN(200))*time.Millisecond)
			mu.Lock()
			n := len(members)
			mu.Unlock()
			_, _ = c.WaitGroupStable(ctx, "g", n)
			cancel()
			ops["settle"]++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The storm ends: the operator fixes and replays until everything is
	// applied.
	done := func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for k, n := range produced {
			if g.last[k] != n {
				return false
			}
		}
		return true
	}
	for !done() {
		if ctx.Err() != nil {
			g.mu.Lock()
			t.Fatalf("not everything applied: last %v, produced %v", g.last, produced)
		}
		operate(true)
		wait, stop := context.WithTimeout(ctx, 100*time.Millisecond) // the operator's pace
		<-wait.Done()
		stop()
	}
	mu.Lock()
	for _, m := range members {
		m.stop(t)
	}
	mu.Unlock()

	dc := client(t, c, kgo.ConsumeTopics(dlt), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	dead := 0
	for dead < badOffsets && ctx.Err() == nil {
		dead += len(dc.PollFetches(ctx).Records())
	}
	if dead < badOffsets {
		t.Errorf("%d dead letters for %d bad records", dead, badOffsets)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, v := range g.violations {
		if i == 20 {
			t.Errorf("... %d more", len(g.violations)-20)
			break
		}
		t.Error(v)
	}
	total := 0
	for _, n := range produced {
		total += n
	}
	t.Logf("%d events, %d bad records; operations %v; %d events delivered again after crashes (skipped by the guard)", total, badOffsets, ops, g.dups)
}

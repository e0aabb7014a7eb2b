package pubsub_test

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

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
)

var chaosFor = flag.Duration("pubsub.chaos", 3*time.Second, "how long TestConsumerChaos attacks the consumers (run long with e.g. -pubsub.chaos=10m)")

// guarded is the shared database of the chaos test: per key the last
// applied Seq, applied only when it is the next one (the version guard).
// It records what must never happen: an event handled before its
// predecessor was applied (order broken or an event lost), and a handler
// starting for a key while another one of that key runs with a context
// nobody cancelled (a key's work not fenced).
type guarded struct {
	mu         sync.Mutex
	last       map[string]int
	running    map[string][]context.Context
	dups       int
	violations []string
	fixedUpTo  map[string]int // per key, the poison events up to this Seq are fixed
}

func newGuarded() *guarded {
	return &guarded{last: map[string]int{}, running: map[string][]context.Context{}, fixedUpTo: map[string]int{}}
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
		g.dups++ // delivered again: the guard skips it
	default:
		g.violations = append(g.violations, fmt.Sprintf("key %s: event %d handled after %d", key, e.Seq, last))
	}
	return nil
}

// The consumers attacked at random moments: members join, close cleanly
// and crash; poison events park their keys and the operator fixes and
// replays them (or replays them unfixed, and they park again); bad messages
// go to the dead-letter topic; a short MaxExtension gives keys back to
// Pub/Sub while parked. Throughout: no event is handled before its
// predecessor and no handler starts while an unfenced one of its key runs
// elsewhere. At the end every event is applied (nothing lost) and every bad
// message was dead-lettered.
func TestConsumerChaos(t *testing.T) {
	t.Parallel() // its own pstest server, beside the tests that wait on ack deadlines
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (run long with -pubsub.chaos=10m)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	f := newFake(t)
	ks := keys(20)
	g := newGuarded()
	produced := map[string]int{}

	var mu sync.Mutex // guards members and born
	members := map[string]*member{}
	born := 0
	join := func() {
		mu.Lock()
		born++
		name := fmt.Sprint("m", born)
		mu.Unlock()
		m := f.start(t, memberOpts{handler: g.handle,
			engine: func(rc *runtime.Config[string, ev]) {
				rc.Retry = runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
			},
			cfg: func(c *ps.Config[ev]) {
				c.DrainTimeout = 500 * time.Millisecond
				c.MaxExtension = time.Duration(2+rng.IntN(4)) * time.Second // parked keys go back to Pub/Sub
				c.MaxInFlight = 8 + rng.IntN(64)
			}})
		mu.Lock()
		members[name] = m
		mu.Unlock()
	}
	pick := func() *member {
		mu.Lock()
		defer mu.Unlock()
		if len(members) < 2 {
			return nil
		}
		names := make([]string, 0, len(members))
		for n := range members {
			names = append(names, n)
		}
		n := names[rng.IntN(len(names))]
		m := members[n]
		delete(members, n)
		return m
	}
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
				if fix {
					g.mu.Lock()
					g.fixedUpTo[pk.Key] = produced[pk.Key]
					g.mu.Unlock()
				}
				_ = m.engine.Replay(ctx, pk.Key) // may park again, or find the key gone
			}
		}
	}

	p := f.producer(t)
	raw := f.client(t).Publisher(topic)
	raw.EnableMessageOrdering = true
	defer raw.Stop()
	bad := 0
	var badResults []*pubsub.PublishResult
	// backlog is how many events are published and not applied yet: the
	// storm publishes only while it stays small, so that a long run
	// attacks the consumers instead of outrunning the broker.
	backlog := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := 0
		for k, p := range produced {
			n += p - g.last[k]
		}
		return n
	}
	produceSome := func() {
		if backlog() > 400 {
			return
		}
		for range 20 {
			k := ks[rng.IntN(len(ks))]
			produced[k]++
			p.SendAsync(context.Background(), k, ev{k, produced[k]}, func(err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if rng.IntN(10) == 0 { // a bad message, of a key of its own
			bad++
			badResults = append(badResults, raw.Publish(context.Background(), &pubsub.Message{
				Data: []byte(`{"Key":`), OrderingKey: fmt.Sprint("bad", bad), Attributes: map[string]string{transport.HeaderType: "ev"}}))
		}
	}

	for range 3 {
		join()
	}
	deadline := time.Now().Add(*chaosFor)
	ops := map[string]int{}
	var stats []ps.Stats // of every member, when it stopped
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
		case op < 3:
			if m := pick(); m != nil {
				m.stop(t)
				stats = append(stats, m.c.Stats())
				ops["close"]++
			}
		case op < 4:
			if m := pick(); m != nil {
				m.kill(t)
				stats = append(stats, m.c.Stats())
				ops["crash"]++
			}
		case op < 6:
			operate(rng.IntN(2) == 0)
			ops["replay"]++
		default:
			time.Sleep(time.Duration(20+rng.IntN(100)) * time.Millisecond) // the scenario's pace
			ops["wait"]++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range badResults {
		if _, err := r.Get(ctx); err != nil {
			t.Fatal(err)
		}
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
			t.Errorf("not everything applied: last %v, produced %v; violations %v", g.last, produced, g.violations)
			g.mu.Unlock()
			break
		}
		operate(true)
		time.Sleep(100 * time.Millisecond) // the operator's pace
	}
	mu.Lock()
	for _, m := range members {
		stats = append(stats, m.c.Stats())
		m.stop(t)
	}
	mu.Unlock()
	if bad > 0 {
		f.dead(t, bad)
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
	var givenBack ps.Stats
	for _, s := range stats {
		givenBack.KeysGivenBack.Nacked += s.KeysGivenBack.Nacked
		givenBack.KeysGivenBack.MaxExtension += s.KeysGivenBack.MaxExtension
		givenBack.Stale += s.Stale
	}
	t.Logf("%d events, %d bad messages; operations %v; %d events delivered again (skipped by the guard); members gave back keys %+v, %d stale messages",
		total, bad, ops, g.dups, givenBack.KeysGivenBack, givenBack.Stale)
}

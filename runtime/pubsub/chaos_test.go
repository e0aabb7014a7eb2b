package pubsub_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

var chaosFor = flag.Duration("pubsub.chaos", 3*time.Second, "how long TestConsumerChaos attacks the consumers (run long with e.g. -pubsub.chaos=10m)")

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
	g := transporttest.NewGuarded()
	produced := map[string]int{}

	crowd := transporttest.NewCrowd[*member]()
	join := func() {
		crowd.Join(func(string) *member {
			return f.start(t, memberOpts{handler: func(ctx context.Context, key string, e ev) error { return g.Handle(ctx, key, e.Seq) },
				engine: func(rc *runtime.Config[string, ev]) {
					rc.Retry = runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
				},
				cfg: func(c *ps.Config[ev]) {
					c.DrainTimeout = 500 * time.Millisecond
					c.MaxExtension = time.Duration(2+rng.IntN(4)) * time.Second // parked keys go back to Pub/Sub
					c.MaxInFlight = 8 + rng.IntN(64)
				}})
		})
	}
	operate := func(fix bool) {
		crowd.Each(func(_ string, m *member) {
			transporttest.ReplayParked(context.Background(), m.engine, g, produced, fix)
		})
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
		return g.Backlog(produced)
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
			if crowd.Len() < 4 {
				join()
				ops["join"]++
			}
		case op < 3:
			if _, m, ok := crowd.Leave(rng); ok {
				m.stop(t)
				stats = append(stats, m.c.Stats())
				ops["close"]++
			}
		case op < 4:
			if _, m, ok := crowd.Leave(rng); ok {
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
		return g.Done(produced)
	}
	for !done() {
		if ctx.Err() != nil {
			t.Errorf("not everything applied: last %v, produced %v", g.Applied(), produced)
			break
		}
		operate(true)
		time.Sleep(100 * time.Millisecond) // the operator's pace
	}
	crowd.Each(func(_ string, m *member) {
		stats = append(stats, m.c.Stats())
		m.stop(t)
	})
	if bad > 0 {
		f.dead(t, bad)
	}
	g.Report(t)
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
		total, bad, ops, g.Dups(), givenBack.KeysGivenBack, givenBack.Stale)
}

package kafka_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/kafka"
	"github.com/ordergen/ordergen/runtime/transporttest"
)

var (
	chaosFor  = flag.Duration("kafka.chaos", 3*time.Second, "how long TestConsumerChaos attacks the consumers (run long with e.g. -kafka.chaos=2m)")
	chaosSeed = flag.Uint64("kafka.chaos.seed", 0, "TestConsumerChaos's seed (0: a new one), to replay a failed run's choices (not its timing)")
)

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
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (run long with -kafka.chaos=2m)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	c := newCluster(t, 6, crashable) // the members crash: see shortSessions
	ks := keys(20)
	g := transporttest.NewGuarded()
	produced := map[string]int{}

	crowd := transporttest.NewCrowd[*member]()
	// The members' logs, printed if the test fails.
	logs := &lockedBuffer{}
	join := func() {
		crowd.Join(func(name string) *member {
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("member", name)
			return startMember(t, c, "g", memberOpts{handler: func(ctx context.Context, key string, e ev) error { return g.Handle(ctx, key, e.Seq) }, engine: func(rc *runtime.Config[string, ev]) {
				rc.Retry = runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
				rc.Logger = log
			}, cfg: func(cfg *kafka.Config[ev]) {
				cfg.RevokeTimeout = time.Second
				cfg.Logger = log
				shortSessions(cfg)
			}})
		})
	}
	// operate fixes (or not) and replays the parked keys of every member;
	// it runs on the test's goroutine, which produces.
	operate := func(fix bool) {
		crowd.Each(func(_ string, m *member) {
			transporttest.ReplayParked(context.Background(), m.engine, g, produced, fix)
		})
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
			if crowd.Len() < 4 {
				join()
				ops["join"]++
			}
		case op < 4:
			if _, m, ok := crowd.Leave(rng); ok {
				m.stop(t)
				ops["leave"]++
			}
		case op < 5:
			if _, m, ok := crowd.Leave(rng); ok {
				m.kill(t)
				ops["crash"]++
			}
		case op < 7:
			operate(rng.IntN(2) == 0)
			ops["replay"]++
		default:
			// let the group settle for a while: records flow
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(50+rng.IntN(200))*time.Millisecond)
			_, _ = c.WaitGroupStable(ctx, "g", crowd.Len())
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
		return g.Done(produced)
	}
	for !done() {
		if ctx.Err() != nil {
			crowd.Each(func(name string, m *member) {
				parked, _ := m.engine.ParkedKeys(context.Background())
				t.Logf("member %s: consumer %+v; engine %+v; parked keys %v", name, m.c.Stats(), m.engine.Stats(), parked)
			})
			t.Logf("the members' logs:\n%s", logs.tail(200_000))
			t.Fatalf("not everything applied: last %v, produced %v", g.Applied(), produced)
		}
		operate(true)
		wait, stop := context.WithTimeout(ctx, 100*time.Millisecond) // the operator's pace
		<-wait.Done()
		stop()
	}
	crowd.Each(func(_ string, m *member) { m.stop(t) })

	dc := client(t, c, kgo.ConsumeTopics(dlt), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	dead := 0
	for dead < badOffsets && ctx.Err() == nil {
		dead += len(dc.PollFetches(ctx).Records())
	}
	if dead < badOffsets {
		t.Errorf("%d dead letters for %d bad records", dead, badOffsets)
	}
	g.Report(t)
	total := 0
	for _, n := range produced {
		total += n
	}
	t.Logf("%d events, %d bad records; operations %v; %d events delivered again after crashes (skipped by the guard)", total, badOffsets, ops, g.Dups())
}

// lockedBuffer is an io.Writer for loggers of several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tail returns the last n bytes written, at most.
func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.b.Bytes()
	return string(b[max(len(b)-n, 0):])
}

package transport_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

var stressFor = flag.Duration("keyintake.stress", 2*time.Second, "how long each TestKeyIntakeStress case attacks the core (run long with e.g. -keyintake.stress=5m)")

// guarded is the shared database of the stress test: per key the last
// applied Seq, applied only when it is the next one (the version guard).
// It records what must never happen: an event handled before its
// predecessor was applied, and a handler starting for a key while another
// one of the key runs with a context nobody cancelled.
type guarded struct {
	mu         sync.Mutex
	last       map[string]int
	running    map[string][]context.Context
	dups       int
	violations []string
	fixed      bool           // every poison event is fixed
	fixedUpTo  map[string]int // per key, the poison events up to this Seq are fixed
}

// violate records what must never happen.
func (g *guarded) violate(v string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.violations = append(g.violations, v)
}

func poison(e ev) bool {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", e.Key, e.Seq)
	return h.Sum32()%30 == 0
}

func (g *guarded) handle(ctx context.Context, key string, e ev) error {
	g.mu.Lock()
	for _, other := range g.running[key] {
		if other.Err() == nil {
			g.violations = append(g.violations, fmt.Sprintf("key %s: event %d started while an unfenced handler of the key ran", key, e.Seq))
		}
	}
	g.running[key] = append(g.running[key], ctx)
	broken := poison(e) && !g.fixed && e.Seq > g.fixedUpTo[key]
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
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch last := g.last[key]; {
	case e.Seq == last+1:
		g.last[key] = e.Seq
	case e.Seq <= last:
		g.dups++
	default:
		g.violations = append(g.violations, fmt.Sprintf("key %s: event %d handled after %d", key, e.Seq, last))
	}
	return nil
}

// The core attacked on a fake broker, one consumer process after another:
// random leases that lapse (parked keys and slow handlers given back),
// poison events that park their keys, replays fixed or not, bad messages
// whose dead letter fails at random (their key given back), processes that
// close cleanly or crash (their deliveries lapse), at random moments. With
// several deliveries of a key outstanding at once (Pub/Sub's streams, with
// the fence) and with one (SQS FIFO, pstest). Throughout, no event is
// handled before its predecessor and no handler starts while an unfenced
// one of its key runs; at the end every event is applied and the broker
// holds nothing unacknowledged.
func TestKeyIntakeStress(t *testing.T) {
	for _, maxOut := range []int{1, 4} {
		t.Run(fmt.Sprintf("outstanding=%d", maxOut), func(t *testing.T) { stress(t, maxOut) })
	}
}

func stress(t *testing.T, maxOut int) {
	if testing.Short() {
		t.Skip("a stress test: seconds of faults at random (skipped under -short)")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (run long with -keyintake.stress=5m)", seed)
	rng := rand.New(rand.NewPCG(seed, uint64(maxOut)))
	var rngMu sync.Mutex
	intn := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	b := newBroker(maxOut)
	g := &guarded{last: map[string]int{}, running: map[string][]context.Context{}, fixedUpTo: map[string]int{}}
	const keys = 16
	produced := map[string]int{}
	bad := 0
	// The storm publishes only while the backlog is small, so that a long
	// run attacks the core instead of outrunning it.
	backlog := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		n := 0
		for k, p := range produced {
			n += p - g.last[k]
		}
		return n
	}
	publishSome := func() {
		if backlog() > 200 {
			return
		}
		for range 10 {
			k := fmt.Sprintf("k%02d", intn(keys))
			produced[k]++
			b.publish(ev{k, produced[k]})
		}
		if intn(5) == 0 {
			bad++
			b.publish(ev{fmt.Sprintf("bad%03d", bad), -1})
		}
	}
	ops := map[string]int{}
	var totals transport.KeyStats
	deadline := time.Now().Add(*stressFor)
	for epoch := 0; ; epoch++ {
		final := !time.Now().Before(deadline)
		p := startProcess(t, b, g, intn, final)
		if final {
			g.mu.Lock()
			g.fixed = true
			g.mu.Unlock()
		}
		until := time.Now().Add(time.Duration(100+intn(500)) * time.Millisecond)
		if final {
			until = time.Now().Add(2 * time.Minute)
		}
		for time.Now().Before(until) {
			if final && b.drained() && p.quiet() {
				break
			}
			switch op := intn(10); {
			case op < 3 && !final:
				publishSome()
				ops["publish"]++
			case op < 5:
				fix := intn(6) == 0
				if fix { // the operator fixes what was published so far
					g.mu.Lock()
					for k, n := range produced {
						g.fixedUpTo[k] = n
					}
					g.mu.Unlock()
				}
				p.replay()
				ops["replay"]++
			default:
				time.Sleep(time.Duration(1+intn(10)) * time.Millisecond) // the scenario's pace
			}
		}
		crash := intn(3) == 0 && !final
		s := p.stop(t, crash)
		totals.Received += s.Received
		totals.Fenced += s.Fenced
		totals.Ended.Unfinished += s.Ended.Unfinished
		totals.Ended.Lease += s.Ended.Lease
		totals.DeadLettered += s.DeadLettered
		totals.DeadLetterErrors += s.DeadLetterErrors
		if crash {
			ops["crash"]++
			b.expireAll()
		} else {
			ops["close"]++
			b.expireAll() // what was on the wire when the process stopped
		}
		if final {
			break
		}
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
	for k, n := range produced {
		if g.last[k] != n {
			t.Errorf("key %s: applied up to %d of %d", k, g.last[k], n)
		}
	}
	if !b.drained() {
		t.Error("the broker still holds unacknowledged messages")
	}
	total := 0
	for _, n := range produced {
		total += n
	}
	t.Logf("%d events, %d bad messages; operations %v; %d received, %d delivered again (skipped by the guard), %d stale given back behind fences, keys given back %+v, %d dead letters (%d failed writes), broker acks %d nacks %d",
		total, bad, ops, totals.Received, g.dups, totals.Fenced, totals.Ended, totals.DeadLettered, totals.DeadLetterErrors, b.acks, b.nacks)
}

// process is one consumer process on the fake broker.
type process struct {
	b      *broker
	engine *runtime.Engine[string, ev]
	core   *transport.KeyIntake[string, ev, handle]
	stopCh chan struct{}
	wg     sync.WaitGroup
	intn   func(int) int
	held   atomic.Int64 // messages given to the core and not settled at the broker
}

func startProcess(t *testing.T, b *broker, g *guarded, intn func(int) int, final bool) *process {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	var core atomic.Pointer[transport.KeyIntake[string, ev, handle]]
	e, err := runtime.New(g.handle, runtime.Config[string, ev]{
		MaxActive: 8,
		Retry:     runtime.Retry{Attempts: 1 + intn(2), Initial: time.Millisecond, Max: time.Millisecond},
		OnOutcome: func(k string, tag uint64, o runtime.Outcome) { core.Load().OnOutcome(k, tag, o) },
		Backlog:   runtime.Backlog{PerKey: 4 + intn(8), Total: 16 + intn(64), WhenFull: runtime.Reject},
		Logger:    quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &process{b: b, engine: e, stopCh: make(chan struct{}), intn: intn}
	lease := time.Duration(30+intn(300)) * time.Millisecond
	if final {
		lease = time.Minute
	}
	maxInFlight := 2 + intn(40)
	c, err := startKeyIntake(transport.EngineTarget(e), transport.KeyConfig[ev, handle]{
		System:      "fake",
		MaxInFlight: maxInFlight,
		EndTimeout:  time.Duration(10+intn(50)) * time.Millisecond,
		Fence:       b.maxOut > 1,
		FenceWindow: 200 * time.Millisecond,
		SweepEvery:  5 * time.Millisecond,
		Settle: func(h handle, st transport.Settlement) {
			p.held.Add(-1)
			b.settle(h, st)
		},
		DeadLetter: func(_ transport.Message[ev, handle], done func(error)) {
			if !final && intn(3) == 0 {
				done(errors.New("the dead-letter write failed"))
				return
			}
			done(nil)
		},
		Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	core.Store(c)
	p.core = c
	// The receivers: one to three at once, each with its share of the keys
	// (Pub/Sub calls a key's callbacks one at a time, in order, and
	// different keys' at once), each reserving room before it takes a
	// message. Whenever one is about to take a message, the core holds no
	// more than MaxInFlight messages unsettled at the broker with it.
	receivers := make([]chan transport.Message[ev, handle], 1+intn(3))
	for i := range receivers {
		receivers[i] = make(chan transport.Message[ev, handle], 8)
		p.wg.Go(func() {
			for {
				var m transport.Message[ev, handle]
				select {
				case m = <-receivers[i]:
				case <-p.stopCh:
					return
				}
				if c.Reserve(context.Background(), p.stopCh, 1) <= 0 {
					return // dropped: its lease lapses (expireAll)
				}
				if intn(4) == 0 {
					// The receiver's latency between room and take: the
					// window in which another receiver could take the same
					// room.
					time.Sleep(time.Duration(intn(2)) * time.Millisecond)
				}
				if held := p.held.Add(1); held > int64(maxInFlight) {
					g.violate(fmt.Sprintf("the core took a message while %d were unsettled at the broker, over MaxInFlight %d", held-1, maxInFlight))
				}
				if err := c.Receive(m); err != nil {
					t.Errorf("receive: %v", err)
					return
				}
			}
		})
	}
	p.wg.Go(func() { // the stream, which hands each key to its receiver
		for {
			select {
			case m := <-b.wire:
				if intn(4) == 0 {
					// The stream's latency: deliveries queue up on the wire,
					// some of them stale by the time they arrive.
					time.Sleep(time.Duration(intn(3)) * time.Millisecond)
				}
				if m.Event.Seq < 0 {
					m.Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: errors.New("bad")}
				}
				h := fnv.New32a()
				h.Write([]byte(m.Key))
				select {
				case receivers[h.Sum32()%uint32(len(receivers))] <- m:
				case <-p.stopCh:
					return
				}
			case <-p.stopCh:
				return
			}
		}
	})
	p.wg.Go(func() { // the broker's deliveries
		for {
			select {
			case <-p.stopCh:
				return
			default:
			}
			if !b.deliverSome(1+intn(3), lease, intn) {
				time.Sleep(time.Millisecond) // nothing to deliver: the broker's pace
			}
		}
	})
	return p
}

// replay replays the parked keys (fixed or not: the poison is fixed in the
// last process only).
func (p *process) replay() {
	ctx := context.Background()
	parked, err := p.engine.ParkedKeys(ctx)
	if err != nil {
		return
	}
	for _, pk := range parked {
		_ = p.engine.Replay(ctx, pk.Key)
	}
}

// quiet reports whether nothing is unsettled and nothing parked.
func (p *process) quiet() bool {
	s := p.core.Stats()
	return s.Unsettled == 0 && s.Waiting == 0
}

// stop stops the process cleanly, or as a crash would.
func (p *process) stop(t *testing.T, crash bool) transport.KeyStats {
	t.Helper()
	close(p.stopCh)
	p.wg.Wait()
	if crash {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = p.engine.Close(ctx)
		_, _ = p.core.Shutdown(transport.DoneContext())
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(p.intn(200))*time.Millisecond)
		_, _ = p.core.Shutdown(ctx)
		cancel()
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		if err := p.engine.Close(ctx); err != nil {
			t.Errorf("engine close: %v", err)
		}
		cancel()
	}
	// Drain what is still on the wire: in transit when the process went.
	for {
		select {
		case <-p.b.wire:
			continue
		default:
		}
		break
	}
	return p.core.Stats()
}

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

var (
	streamStressFor  = flag.Duration("streamintake.stress", 2*time.Second, "how long TestStreamIntakeStress attacks the stream intake (run long with e.g. -streamintake.stress=5m)")
	streamStressSeed = flag.Uint64("streamintake.seed", 0, "TestStreamIntakeStress's seed (0: a new one): replays a failed run's choices, not its timing")
)

// sev is the stream stress test's event: ev, with the holding (of its
// unit) that delivered it.
type sev struct {
	Key string
	Seq int
	gen int
}

func (e sev) EventKey() string { return e.Key }

// smsg is one message of a unit of the fake stream broker.
type smsg struct {
	id    string
	e     sev
	bad   bool
	acked bool
}

// shandle is a delivery: the message and the holding it went to.
type shandle struct {
	unit, gen int
	m         *smsg
}

// sunit is one unit of order: its messages not acknowledged, in order, of
// which the first sent went to its holder.
type sunit struct {
	msgs     []*smsg
	sent     int
	inflight int // sent and not acknowledged
	holder   int // the holding's generation; 0: none
	avail    chan struct{}
}

// sbroker is a fake broker of ordered units with RabbitMQ's semantics for a
// queue with a single active consumer: a unit delivers its messages in
// order to its one holder, up to a prefetch of unacknowledged ones;
// acknowledgements may come in any order; when the holding ends, the
// unacknowledged messages go back, in their order, for the next holder.
type sbroker struct {
	mu    sync.Mutex
	units []*sunit
	gen   int
	dead  map[string]int // bad messages dead-lettered
}

func newSBroker(n int) *sbroker {
	b := &sbroker{dead: map[string]int{}}
	for range n {
		b.units = append(b.units, &sunit{avail: make(chan struct{}, 1)})
	}
	return b
}

func (u *sunit) signal() {
	select {
	case u.avail <- struct{}{}:
	default:
	}
}

func (b *sbroker) unitOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(b.units)))
}

func (b *sbroker) publish(m *smsg) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.units[b.unitOf(m.e.Key)]
	u.msgs = append(u.msgs, m)
	u.signal()
}

// hold gives unit i to a new holding, if it has none.
func (b *sbroker) hold(i int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.units[i]
	if u.holder != 0 {
		return 0
	}
	b.gen++
	u.holder = b.gen
	u.signal()
	return b.gen
}

// next delivers up to room more messages of unit i to holding gen.
func (b *sbroker) next(i, gen, room int) []shandle {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.units[i]
	if u.holder != gen {
		return nil
	}
	var out []shandle
	for u.sent < len(u.msgs) && u.inflight < room {
		out = append(out, shandle{i, gen, u.msgs[u.sent]})
		u.sent++
		u.inflight++
	}
	return out
}

// ack acknowledges a delivery of the current holding (a stale one is
// ignored: its channel closed).
func (b *sbroker) ack(h shandle) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.units[h.unit]
	if u.holder != h.gen || h.m.acked {
		return
	}
	h.m.acked = true
	u.inflight--
	u.signal()
}

// release ends holding gen of unit i: the messages not acknowledged go
// back, in order.
func (b *sbroker) release(i, gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.units[i]
	if u.holder != gen {
		return
	}
	kept := u.msgs[:0]
	for _, m := range u.msgs {
		if !m.acked {
			kept = append(kept, m)
		}
	}
	u.msgs, u.sent, u.inflight, u.holder = kept, 0, 0, 0
	u.signal()
}

// drained says whether every message was acknowledged (acknowledged
// messages stay in a unit until its holding ends).
func (b *sbroker) drained() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range b.units {
		for _, m := range u.msgs {
			if !m.acked {
				return false
			}
		}
	}
	return true
}

// sholding is one process's holding of a unit: a stream and its receiver.
type sholding struct {
	unit, gen int
	stream    *transport.Stream[string, sev, shandle]
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
}

// endedHolding is how a holding's End went, for a violation's message:
// when it returned, how long it took and what it returned.
type endedHolding struct {
	at   time.Time
	took time.Duration
	err  error
}

// sproc is one consumer process: an engine behind a stream intake.
type sproc struct {
	b      *sbroker
	g      *guarded
	in     *transport.StreamIntake[string, sev, shandle]
	engine *runtime.Engine[string, sev]
	intn   func(int) int
	final  bool
	ended  *sync.Map // holdings (gen) whose End returned: endedHolding

	mu       sync.Mutex
	holdings map[int]*sholding // by unit
	failed   error             // a Receive or Retry that returned an error
}

func startSProc(t *testing.T, b *sbroker, g *guarded, intn func(int) int, final bool, ended *sync.Map) *sproc {
	t.Helper()
	p := &sproc{b: b, g: g, intn: intn, final: final, ended: ended, holdings: map[int]*sholding{}}
	in, err := transport.NewStreamIntake[string](transport.StreamConfig[sev, shandle]{
		System: "fake",
		Settle: func(h shandle, st transport.Settlement) {
			if st == transport.Finished {
				b.ack(h)
			}
		},
		DeadLetter: p.deadLetter,
		Admit:      p.admit,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.in = in
	p.engine, err = runtime.New(p.handle, runtime.Config[string, sev]{
		MaxActive: 1 + intn(6),
		Backlog:   runtime.Backlog{PerKey: 1 + intn(3), Total: 3 + intn(20)},
		Retry:     runtime.Retry{Attempts: 30, Initial: time.Millisecond, Max: 2 * time.Millisecond},
		OnOutcome: in.OnOutcome,
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(validatingS{transport.EngineTarget(p.engine)}); err != nil {
		t.Fatal(err)
	}
	return p
}

// validatingS refuses an event without a key as invalid.
type validatingS struct{ transport.Target[sev] }

func (v validatingS) SubmitTagged(ctx context.Context, e sev, tag uint64, from int) (int, error) {
	if e.Key == "" {
		return 0, fmt.Errorf("%w: no key", runtime.ErrInvalidEvent)
	}
	return v.Target.SubmitTagged(ctx, e, tag, from)
}

// handle is the handler: it must never start for a delivery whose
// holding ended, and the guard checks order per key.
func (p *sproc) handle(ctx context.Context, key string, e sev) error {
	if v, ok := p.ended.Load(e.gen); ok {
		end := v.(endedHolding)
		p.g.violate(fmt.Sprintf("key %s: event %d started %v after its holding %d ended (End took %v and returned %v; the attempt's context: %v, cause %v)",
			key, e.Seq, time.Since(end.at), e.gen, end.took, end.err, ctx.Err(), context.Cause(ctx)))
	}
	if p.intn(20) == 0 && !p.final {
		return errors.New("a transient failure") // retried
	}
	if p.intn(4) == 0 {
		select { // some work, which an ending ownership may cancel
		case <-time.After(time.Duration(p.intn(300)) * time.Microsecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.g.handle(ctx, key, ev{key, e.Seq})
}

// admit holds, now and then, a message of a stream that has messages in
// flight (as Kafka's metadata bound does: they finish, and a settlement
// wakes the stream).
func (p *sproc) admit(h shandle) transport.Admission {
	if p.final || p.intn(15) != 0 {
		return transport.AdmitTake
	}
	p.mu.Lock()
	hd := p.holdings[h.unit]
	p.mu.Unlock()
	if hd == nil || hd.gen != h.gen {
		return transport.AdmitTake
	}
	if n, _ := hd.stream.Unsettled(); n > 0 {
		return transport.AdmitHold
	}
	return transport.AdmitTake
}

// deadLetter writes a bad message, failing at random until the final
// process, and answering now or later.
func (p *sproc) deadLetter(m transport.Message[sev, shandle], done func(error)) {
	fail := !p.final && p.intn(3) == 0
	answer := func() {
		if fail {
			done(errors.New("the dead-letter destination is down"))
			return
		}
		if m.Handle.m.bad {
			p.b.mu.Lock()
			p.b.dead[m.Handle.m.id]++
			p.b.mu.Unlock()
		}
		done(nil)
	}
	if p.intn(2) == 0 {
		answer()
		return
	}
	go answer()
}

// take makes the process hold unit i, if nobody does.
func (p *sproc) take(i int) {
	gen := p.b.hold(i)
	if gen == 0 {
		return
	}
	hd := &sholding{unit: i, gen: gen, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	hd.stream = p.in.Open(fmt.Sprintf("unit-%d", i), transport.StreamHooks{Wake: func() {
		select {
		case hd.wake <- struct{}{}:
		default:
		}
	}})
	p.mu.Lock()
	p.holdings[i] = hd
	p.mu.Unlock()
	go p.receive(hd)
}

// receive feeds a holding's deliveries to its stream until stopped.
func (p *sproc) receive(hd *sholding) {
	defer close(hd.done)
	u := p.b.units[hd.unit]
	const prefetch = 6
	// One buffer for every delivery, cleared once Receive returns, as the
	// Kafka consumer's: the stream must not keep it.
	var buf []transport.Message[sev, shandle]
	for {
		var err error
		select {
		case <-hd.stop:
			return
		case <-hd.wake:
			err = hd.stream.Retry()
		case <-u.avail:
			ms := buf[:0]
			for _, h := range p.b.next(hd.unit, hd.gen, prefetch) {
				m := transport.Message[sev, shandle]{Handle: h, Event: h.m.e, ID: h.m.id}
				m.Event.gen = hd.gen
				if h.m.bad {
					m.Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: errors.New("does not decode")}
				}
				ms = append(ms, m)
			}
			if len(ms) > 0 {
				u.signal() // more may be there for the room left
				err = hd.stream.Receive(ms)
				clear(ms)
				buf = ms
			}
		}
		if err != nil {
			p.mu.Lock()
			p.failed = err
			p.mu.Unlock()
			return
		}
	}
}

// end ends the holding of unit i: its receiver stops, its stream ends
// (with ctx), then the broker takes the unit back.
func (p *sproc) end(i int, ctx context.Context) {
	p.mu.Lock()
	hd := p.holdings[i]
	delete(p.holdings, i)
	p.mu.Unlock()
	if hd == nil {
		return
	}
	close(hd.stop)
	<-hd.done
	start := time.Now()
	_, err := p.in.End(ctx, hd.stream)
	p.ended.Store(hd.gen, endedHolding{at: time.Now(), took: time.Since(start), err: err})
	p.b.release(hd.unit, hd.gen)
}

// endCtx is an End's context: done already (a lost partition, a crash), or
// a short drain.
func (p *sproc) endCtx() (context.Context, context.CancelFunc) {
	if p.intn(2) == 0 {
		return transport.Ended(fmt.Errorf("%w: the stress moved the unit", transport.ErrOwnershipEnded)), func() {}
	}
	return context.WithTimeout(context.Background(), time.Duration(p.intn(20))*time.Millisecond)
}

// stop ends every holding (as a crash, or with a drain) and the engine.
func (p *sproc) stop(crash bool) {
	p.mu.Lock()
	var units []int
	for i := range p.holdings {
		units = append(units, i)
	}
	p.mu.Unlock()
	for _, i := range units {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if crash {
			ctx, cancel = transport.Ended(fmt.Errorf("%w: the process crashed", transport.ErrOwnershipEnded)), func() {}
		}
		p.end(i, ctx)
		cancel()
	}
	_ = p.engine.Close(transport.DoneContext())
}

// The stream intake attacked on a fake broker of ordered units, by several
// processes at once that take units, hand them back (as a rebalance or a
// lost channel: a drain, or none), crash and close at random moments; with
// lanes so small that streams wait for room all the time, the transport's
// Admit holding streams at random, bad and invalid messages whose dead
// letters fail at random or answer later, and handlers that fail and are
// retried. Throughout, no event is handled before its predecessor, no
// handler starts while an unfenced one of its key runs, and none starts
// after its holding ended; at the end every event is applied, every bad
// message dead-lettered and the broker holds nothing unacknowledged.
func TestStreamIntakeStress(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test: seconds of faults at random (skipped under -short)")
	}
	seed := *streamStressSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -streamintake.seed; run long with -streamintake.stress=5m)", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	var rngMu sync.Mutex
	intn := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}
	b := newSBroker(4)
	g := &guarded{last: map[string]int{}, running: map[string][]context.Context{}, fixedUpTo: map[string]int{}, fixed: true}
	var ended sync.Map
	const keys = 12
	produced := map[string]int{}
	var bad, invalid int
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
		if backlog() > 150 {
			return
		}
		for range 8 {
			k := fmt.Sprintf("k%02d", intn(keys))
			produced[k]++
			b.publish(&smsg{id: fmt.Sprintf("%s/%d", k, produced[k]), e: sev{Key: k, Seq: produced[k]}})
		}
		switch intn(6) {
		case 0:
			bad++
			k := fmt.Sprintf("k%02d", intn(keys)) // its unit's, out of the guard's sequence
			b.publish(&smsg{id: fmt.Sprintf("bad%04d", bad), e: sev{Key: k, Seq: -1}, bad: true})
		case 1:
			invalid++
			m := &smsg{id: fmt.Sprintf("invalid%04d", invalid), e: sev{Key: "", Seq: -1}}
			b.mu.Lock()
			u := b.units[intn(len(b.units))]
			u.msgs = append(u.msgs, m)
			u.signal()
			b.mu.Unlock()
		}
	}
	procs := []*sproc{}
	ops := map[string]int{}
	deadline := time.Now().Add(*streamStressFor)
	for time.Now().Before(deadline) {
		if len(procs) < 3 && intn(3) == 0 {
			procs = append(procs, startSProc(t, b, g, intn, false, &ended))
			ops["start"]++
		}
		switch op := intn(20); {
		case op < 8:
			publishSome()
			ops["publish"]++
		case op < 11 && len(procs) > 0:
			procs[intn(len(procs))].take(intn(len(b.units)))
			ops["take"]++
		case op < 13 && len(procs) > 0:
			p := procs[intn(len(procs))]
			ctx, cancel := p.endCtx()
			p.end(intn(len(b.units)), ctx)
			cancel()
			ops["move"]++
		case op == 13 && len(procs) > 0:
			i := intn(len(procs))
			crash := intn(2) == 0
			procs[i].stop(crash)
			procs = append(procs[:i], procs[i+1:]...)
			ops[map[bool]string{true: "crash", false: "close"}[crash]]++
		default:
			time.Sleep(time.Duration(intn(3)) * time.Millisecond) // the scenario's pace
		}
		for _, p := range procs {
			p.mu.Lock()
			err := p.failed
			p.mu.Unlock()
			if err != nil {
				t.Fatalf("a stream's receiver failed: %v", err)
			}
		}
	}
	for _, p := range procs {
		p.stop(false)
	}
	// The final process holds every unit, fails nothing, and drains it.
	final := startSProc(t, b, g, intn, true, &ended)
	for i := range b.units {
		final.take(i)
	}
	var settledAll atomic.Bool
	until := time.Now().Add(time.Minute)
	for time.Now().Before(until) {
		if b.drained() {
			settledAll.Store(true)
			break
		}
		time.Sleep(5 * time.Millisecond) // the broker is looked at, not waited on
	}
	final.stop(false)
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, v := range g.violations {
		if i == 20 {
			t.Errorf("... %d more", len(g.violations)-20)
			break
		}
		t.Error(v)
	}
	if !settledAll.Load() {
		t.Error("the broker still holds unacknowledged messages a minute after the final process started")
	}
	for k, n := range produced {
		if g.last[k] != n {
			t.Errorf("key %s: applied up to %d of %d", k, g.last[k], n)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 1; i <= bad; i++ {
		if b.dead[fmt.Sprintf("bad%04d", i)] == 0 {
			t.Errorf("bad message %d never dead-lettered", i)
		}
	}
	total := 0
	for _, n := range produced {
		total += n
	}
	t.Logf("%d events, %d bad and %d invalid messages; operations %v; %d delivered again (skipped by the guard)", total, bad, invalid, ops, g.dups)
}

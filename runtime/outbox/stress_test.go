package outbox_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

var (
	stressFor  = flag.Duration("outbox.stress", 0, "run TestStress this long on each store (default: a few short epochs)")
	stressSeed = flag.Uint64("outbox.seed", 0, "seed of TestStress (default: from the clock, logged)")
)

// TestStress attacks the relays with random schedules, in epochs: writers
// append to a few keys in transactions (some rolled back), several relays
// on handles of their own (as processes would be) ship them, and at random
// moments a relay crashes (its context ends, mid-send too), is closed
// (sometimes with a context that ends at once), or restarts with other
// settings, the sink refuses events, takes one and answers an error, or
// refuses a key for good (it parks), an operator retries or discards
// parked keys, and on PostgreSQL the server ends a relay's sessions
// (pg_terminate_backend), its claim's among them, while the relay goes on.
// Each epoch ends by healing everything and draining, then checks what the
// sinks took:
//
//   - no key is ever sent by two relays at once, unless the server ended
//     the sessions of one of them;
//   - a round whose claim's session the server ended starts at most one
//     send of each key after it was gone (the one whose claim it had just
//     confirmed);
//   - after dropping re-sends, each key's versions arrived increasing and
//     without gaps, but over versions an operator discarded;
//   - every committed event arrived (or was discarded), with the payload
//     of its commit, and no event of a rolled-back transaction did;
//   - an event arrived again only if its earlier arrival was in a round
//     that did not commit (a crash, a failed commit) or its send answered
//     an error, or it arrives from a round whose session the server ended.
//
// Run it long with -outbox.stress=10m (under -race).
func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("randomized stress test; skipped under -short")
	}
	seed := *stressSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-outbox.seed to repeat)", seed)
	eachBackend(t, func(t *testing.T, b backend) {
		epochs, epochFor := 3, 400*time.Millisecond
		if *stressFor > 0 {
			epochFor = 2 * time.Second
			epochs = max(int(*stressFor/epochFor), 1)
		}
		h := newStress(t, b, seed)
		deadline := time.Now().Add(*stressFor)
		for e := 0; e < epochs || time.Now().Before(deadline); e++ {
			h.epoch(epochFor)
			if t.Failed() {
				return
			}
		}
		t.Logf("%s: %s", b.name, h.totals)
	})
}

// stress is the state of one store's run, kept across epochs.
type stress struct {
	t      *testing.T
	b      backend
	rng    *rand.Rand
	rngMu  sync.Mutex
	entity string
	keys   []string
	writer *sqlstore.Store

	instances atomic.Int64 // relay instances started, numbering them

	// mu guards the fields below.
	mu        sync.Mutex
	log       []delivery
	committed map[delivery]int       // (key, version) -> payload, this epoch
	payloads  map[delivery]int       // (key, version, relay, round) -> payload of each arrival
	rounds    map[[2]uint64]bool     // (instance, round) -> its marks committed
	discarded map[string][][2]uint64 // key -> version ranges discarded, this epoch
	inflight  map[string][]int64     // the relays of a key's sends in progress
	sessions                         // the sessions the server ended, this epoch
	poisoned  map[string]bool        // keys the sink refuses for good until healed
	last      map[string]uint64      // each key's last version at the epoch's start
	errs      []error                // violations seen while running
	totals    stressTotals
}

// stressTotals count what the run did, for its log.
type stressTotals struct {
	epochs, committed, rolledBack, delivered, resent, crashes, closes, abortedCloses, refusals, takenThenFailed, permanent, retries, discards int
	kills, killedRounds, lateSends                                                                                                            int
}

func (s stressTotals) String() string {
	return fmt.Sprintf("%d epochs: %d events committed, %d rolled back; %d deliveries (%d re-sends); %d crashes, %d closes (%d cut short); sink: %d refusals, %d taken then failed, %d permanent refusals (parks); operator: %d retries, %d discards; server: %d relays' sessions ended, %d rounds' claims with them, %d sends begun after",
		s.epochs, s.committed, s.rolledBack, s.delivered, s.resent, s.crashes, s.closes, s.abortedCloses, s.refusals, s.takenThenFailed, s.permanent, s.retries, s.discards,
		s.kills, s.killedRounds, s.lateSends)
}

func newStress(t *testing.T, b backend, seed uint64) *stress {
	return &stress{t: t, b: b, rng: rand.New(rand.NewPCG(seed, 7)), entity: entityName(t), keys: keys(8), writer: b.handle(t),
		last: map[string]uint64{}}
}

func (h *stress) intn(n int) int {
	h.rngMu.Lock()
	defer h.rngMu.Unlock()
	return h.rng.IntN(n)
}

func (h *stress) chance(p float64) bool {
	h.rngMu.Lock()
	defer h.rngMu.Unlock()
	return h.rng.Float64() < p
}

func (h *stress) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, err)
}

// epoch runs writers, relays and an operator for d, then heals, drains and
// checks.
func (h *stress) epoch(d time.Duration) {
	t := h.t
	h.mu.Lock()
	h.log, h.committed, h.payloads, h.rounds = nil, map[delivery]int{}, map[delivery]int{}, map[[2]uint64]bool{}
	h.discarded, h.inflight, h.poisoned = map[string][][2]uint64{}, map[string][]int64{}, map[string]bool{}
	h.sessions = newSessions()
	h.totals.epochs++
	h.mu.Unlock()

	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() { h.write(ctx, w) })
	}
	for slot := range 3 {
		wg.Go(func() { h.relays(ctx, slot) })
	}
	wg.Go(func() { h.operate(ctx) })
	wg.Wait()

	h.drain()
	h.check()
}

// write commits transactions of 1 to 3 events of random keys until ctx
// ends; one in eight rolls back.
func (h *stress) write(ctx context.Context, w int) {
	serial := 0
	for ctx.Err() == nil {
		tx, err := h.writer.DB().BeginTx(context.Background(), nil)
		if err != nil {
			h.fail(err)
			return
		}
		var mine []delivery
		var payloads []int
		ok := true
		for range 1 + h.intn(3) {
			serial++
			e := event{Key: h.keys[h.intn(len(h.keys))], N: w<<32 | serial}
			v, err := appendTx(context.Background(), h.writer, tx, h.entity, e)
			if err != nil {
				// Two transactions appending to the same keys in opposite
				// orders lock their sequence rows so (PostgreSQL): one is
				// aborted, as with any rows, and the service retries it.
				if !strings.Contains(err.Error(), "deadlock detected") {
					h.fail(fmt.Errorf("append: %w", err))
				}
				ok = false
				break
			}
			mine = append(mine, delivery{key: e.Key, version: v})
			payloads = append(payloads, e.N)
		}
		if !ok || h.chance(0.125) {
			tx.Rollback()
			h.mu.Lock()
			h.totals.rolledBack += len(mine)
			h.mu.Unlock()
			continue
		}
		if err := tx.Commit(); err != nil {
			h.fail(fmt.Errorf("commit: %w", err))
			return
		}
		h.mu.Lock()
		for i, d := range mine {
			h.committed[d] = payloads[i]
		}
		h.totals.committed += len(mine)
		h.mu.Unlock()
	}
}

// relays runs relay instances in one slot until ctx ends: each runs for a
// random while, then crashes or is closed, and the next one starts on a
// handle of its own, with other settings.
func (h *stress) relays(ctx context.Context, slot int) {
	for ctx.Err() == nil {
		inst := h.instances.Add(1)
		dsn, name := h.b.dsn, ""
		if h.b.name == "postgres" { // sessions the server can be told to end
			name = fmt.Sprintf("%s-relay-%d", strings.ToLower(h.entity), inst)
			var err error
			if dsn, err = namedDSN(h.b.dsn, name); err != nil {
				h.fail(err)
				return
			}
		}
		s, err := h.b.open(context.Background(), dsn)
		if err != nil {
			h.fail(err)
			return
		}
		h.runOne(ctx, s, inst, name)
		s.Close()
	}
}

// runOne runs one relay instance until it crashes or closes.
func (h *stress) runOne(ctx context.Context, s *sqlstore.Store, inst int64, name string) {
	h.live(inst, name)
	defer h.live(inst, "")
	runCtx, crash := context.WithCancel(context.Background())
	defer crash()
	sink := &stressSink{h: h, inst: inst, crash: crash}
	r, err := outbox.New(outbox.Config[string, event]{Store: s, Entity: h.entity, Codec: codec{}, Sink: sink, Logger: quiet(),
		Batch: 1 + h.intn(24), Senders: 1 + h.intn(4), ParkAfter: h.intn(2) * (2 + h.intn(3)),
		Backoff: outbox.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}, Poll: time.Duration(1+h.intn(20)) * time.Millisecond,
		Retention: -1, StatsEvery: 10 * time.Millisecond})
	if err != nil {
		h.fail(err)
		return
	}
	outbox.OnRoundEnd(r, func(round uint64, committed bool) {
		h.mu.Lock()
		h.rounds[[2]uint64{uint64(inst), round}] = committed
		h.mu.Unlock()
	})
	outbox.OnClaim(r, func(round uint64) { h.claimed(inst, round) })
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	life := time.NewTimer(time.Duration(h.intn(40)) * time.Millisecond)
	defer life.Stop()
	select {
	case <-ctx.Done():
	case <-life.C:
	case err := <-done: // the sink crashed it (Close may come before Run begins: then ErrClosed)
		if !errors.Is(err, context.Canceled) {
			h.fail(fmt.Errorf("relay %d ended by itself: %v", inst, err))
		}
		h.count(func(t *stressTotals) { t.crashes++ })
		return
	}
	switch {
	case h.chance(0.4):
		crash()
		if err := <-done; !errors.Is(err, context.Canceled) {
			h.fail(fmt.Errorf("Run of crashed relay %d: %v", inst, err))
		}
		h.count(func(t *stressTotals) { t.crashes++ })
	case h.chance(0.3):
		cctx, cancel := context.WithCancel(context.Background())
		cancel() // a Close that gives the round in progress no time
		r.Close(cctx)
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, runtime.ErrClosed) {
			h.fail(fmt.Errorf("Run of relay %d closed at once: %v", inst, err))
		}
		h.count(func(t *stressTotals) { t.closes++; t.abortedCloses++ })
	default:
		if err := r.Close(context.Background()); err != nil {
			h.fail(fmt.Errorf("Close of relay %d: %v", inst, err))
		}
		// Closed before Run began: ErrClosed; crashed by the sink meanwhile:
		// its context's error.
		if err := <-done; err != nil && !errors.Is(err, runtime.ErrClosed) && !(sink.crashed.Load() && errors.Is(err, context.Canceled)) {
			h.fail(fmt.Errorf("Run of closed relay %d: %v", inst, err))
		}
		h.count(func(t *stressTotals) { t.closes++ })
	}
}

func (h *stress) count(f func(*stressTotals)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(&h.totals)
}

// operate retries and discards the keys that do not flow, at random
// moments, and poisons and heals keys.
func (h *stress) operate(ctx context.Context) {
	for ctx.Err() == nil {
		t := time.NewTimer(time.Duration(1+h.intn(15)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		key := h.keys[h.intn(len(h.keys))]
		switch {
		case h.chance(0.05):
			h.mu.Lock()
			h.poisoned[key] = true
			h.mu.Unlock()
		case h.chance(0.2):
			h.mu.Lock()
			delete(h.poisoned, key)
			h.mu.Unlock()
		case h.b.name == "postgres" && h.chance(0.15):
			h.endSessions()
		}
		stopped, err := h.writer.OutboxKeys(context.Background(), h.entity, 0)
		if err != nil {
			h.fail(err)
			return
		}
		for _, k := range stopped {
			switch {
			case h.chance(0.1):
				h.discard(k.Key)
			case h.chance(0.3):
				h.retry(k.Key)
			}
		}
	}
}

func (h *stress) retry(key string) {
	err := h.writer.RetryOutboxKey(context.Background(), h.entity, key)
	if err != nil && !errors.Is(err, sqlstore.ErrOutboxKeyFlowing) {
		h.fail(err)
	}
	if err == nil {
		h.count(func(t *stressTotals) { t.retries++ })
	}
}

func (h *stress) discard(key string) {
	d, err := h.writer.DiscardOutboxKey(context.Background(), h.entity, key)
	switch {
	case errors.Is(err, sqlstore.ErrOutboxKeyFlowing):
		return
	case err != nil:
		h.fail(err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.totals.discards++
	if d.Events > 0 {
		h.discarded[key] = append(h.discarded[key], [2]uint64{d.From, d.To})
	}
}

// drain heals everything and ships what is left with one relay.
func (h *stress) drain() {
	t := h.t
	h.mu.Lock()
	h.poisoned = map[string]bool{}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	inst := h.instances.Add(1)
	r, err := outbox.New(outbox.Config[string, event]{Store: h.writer, Entity: h.entity, Codec: codec{},
		Sink: &stressSink{h: h, inst: inst, healthy: true}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	outbox.OnRoundEnd(r, func(round uint64, committed bool) {
		h.mu.Lock()
		h.rounds[[2]uint64{uint64(inst), round}] = committed
		h.mu.Unlock()
	})
	for {
		stopped, err := h.writer.OutboxKeys(ctx, h.entity, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range stopped {
			h.retry(k.Key)
		}
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := h.writer.OutboxBacklog(ctx, h.entity)
		if err != nil {
			t.Fatal(err)
		}
		if b.Unsent == 0 {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the outbox did not drain: %+v", b)
		}
	}
}

// check checks the epoch's deliveries against what was committed and
// discarded.
func (h *stress) check() {
	t := h.t
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, err := range h.errs {
		t.Error(err)
	}
	// Order, over discarded versions.
	seen := map[string]uint64{}
	for k, v := range h.last {
		seen[k] = v
	}
	type arrival struct {
		relay         int
		round         uint64
		failed, final bool
	}
	earlier := map[delivery][]arrival{}
	dumped := map[string]bool{}
	for _, d := range h.log {
		h.totals.delivered++
		id := delivery{key: d.key, version: d.version}
		if p, ok := h.committed[id]; !ok || p != h.payloads[delivery{key: d.key, version: d.version, relay: d.relay, round: d.round}] {
			t.Errorf("%s v%d arrived with payload %d; committed: %d, %v", d.key, d.version, h.payloads[delivery{key: d.key, version: d.version, relay: d.relay, round: d.round}], p, ok)
		}
		last := seen[d.key]
		switch {
		case d.version <= last:
			h.totals.resent++
			prior := earlier[id]
			if len(prior) == 0 {
				t.Errorf("%s v%d arrived again in relay %d round %d, never having arrived this epoch (it was marked in an earlier one)", d.key, d.version, d.relay, d.round)
			}
			for _, a := range prior {
				if a.final && !h.lostRound(int64(d.relay), d.round) {
					t.Errorf("%s v%d arrived again in relay %d round %d after relay %d round %d had sent and marked it", d.key, d.version, d.relay, d.round, a.relay, a.round)
				}
			}
		case d.version == last+1 || h.skipsDiscarded(d.key, last, d.version):
			seen[d.key] = d.version
		default:
			t.Errorf("%s v%d arrived after v%d (discarded: %v)", d.key, d.version, last, h.discarded[d.key])
			if !dumped[d.key] {
				dumped[d.key] = true
				var hist []string
				for _, x := range h.log {
					if x.key == d.key {
						hist = append(hist, fmt.Sprintf("v%d r%d.%d c%v f%v", x.version, x.relay, x.round, h.rounds[[2]uint64{uint64(x.relay), x.round}], x.failed))
					}
				}
				var vs []int
				for id := range h.committed {
					if id.key == d.key {
						vs = append(vs, int(id.version))
					}
				}
				slices.Sort(vs)
				t.Logf("history of %s (from v%d; committed this epoch: %v): %s", d.key, h.last[d.key], vs, strings.Join(hist, ", "))
			}
		}
		committed := h.rounds[[2]uint64{uint64(d.relay), d.round}]
		earlier[id] = append(earlier[id], arrival{relay: d.relay, round: d.round, failed: d.failed, final: committed && !d.failed})
	}
	// Completeness.
	for id := range h.committed {
		if len(earlier[id]) == 0 && !h.isDiscarded(id.key, id.version) {
			t.Errorf("%s v%d was committed and never arrived", id.key, id.version)
		}
	}
	for _, k := range h.keys {
		v := seen[k]
		for h.isDiscarded(k, v+1) { // discarded at the end: the next epoch goes on after them
			v++
		}
		h.last[k] = v
	}
	for _, k := range h.keys {
		if v, err := h.writer.OutboxVersion(context.Background(), h.entity, k); err != nil || v != h.last[k] {
			t.Errorf("key %s: the outbox is at version %d (%v), the sink got up to %d", k, v, err, h.last[k])
		}
	}
}

func (h *stress) isDiscarded(key string, v uint64) bool {
	for _, r := range h.discarded[key] {
		if v >= r[0] && v <= r[1] {
			return true
		}
	}
	return false
}

// skipsDiscarded reports whether every version between last and v was
// discarded.
func (h *stress) skipsDiscarded(key string, last, v uint64) bool {
	for x := last + 1; x < v; x++ {
		if !h.isDiscarded(key, x) {
			return false
		}
	}
	return true
}

// stressSink takes events for one relay instance, with faults.
type stressSink struct {
	h       *stress
	inst    int64
	crash   context.CancelFunc // ends the relay's Run: a crash mid-send
	crashed atomic.Bool        // it did
	healthy bool
}

var errRefused = errors.New("refused by the stress sink")

func (s *stressSink) Send(ctx context.Context, key string, e event) error {
	h := s.h
	h.mu.Lock()
	h.inflight[key] = append(h.inflight[key], s.inst)
	if n := h.unended(h.inflight[key]); n > 1 {
		h.errs = append(h.errs, fmt.Errorf("key %s sent by %d relays at once (%v in all), none of whose sessions the server ended", key, n, h.inflight[key]))
	}
	h.sendBegins(s.inst, outbox.RoundOf(ctx), key)
	poisoned := h.poisoned[key]
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		i := slices.Index(h.inflight[key], s.inst)
		h.inflight[key] = slices.Delete(h.inflight[key], i, i+1)
		h.mu.Unlock()
	}()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !s.healthy {
		switch {
		case poisoned:
			h.count(func(t *stressTotals) { t.permanent++ })
			return runtime.Permanent(errRefused)
		case h.chance(0.03):
			h.count(func(t *stressTotals) { t.refusals++ })
			return errRefused
		case h.chance(0.01) && s.crash != nil:
			s.crashed.Store(true)
			s.crash() // the process dies while this send is in flight
			return context.Canceled
		case h.b.name == "postgres" && h.chance(0.04):
			h.endSessionsOf(s.inst) // the relay's session dies while this send is in flight
		}
		if h.chance(0.05) {
			time.Sleep(time.Duration(h.intn(300)) * time.Microsecond) // a slow broker
		}
	}
	failed := !s.healthy && h.chance(0.02)
	round := outbox.RoundOf(ctx)
	h.mu.Lock()
	h.log = append(h.log, delivery{key: key, version: e.Version, relay: int(s.inst), round: round, failed: failed})
	h.payloads[delivery{key: key, version: e.Version, relay: int(s.inst), round: round}] = e.N
	if failed {
		h.totals.takenThenFailed++
	}
	h.mu.Unlock()
	if failed {
		return errRefused // taken, but the answer says otherwise (a timeout after the broker wrote it)
	}
	return nil
}

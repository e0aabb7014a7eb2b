package groupcommit_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/genimpl"
	"github.com/ordergen/ordergen/runtime/groupcommit"
)

// TestStress runs batch engines (runtime.NewBatch) whose handlers apply
// their events through a Committer, over the fake store, SQLite and, with
// ORDERGEN_TEST_POSTGRES, PostgreSQL, for -groupcommit.stress. Each round
// delivers versions 1..n of its keys in phases: a phase has a random
// committer and engine, random faults (works that fail, panic or run past
// MaxWork; conflicts, failed and ambiguous commits) and ends by closing
// the engine and the committer at a random moment; the next phase
// redelivers from a little before what was committed, as a restarted
// consumer does; the last phase has no faults and drains. After every
// phase: each key's committed applications are exactly versions 1..V, once
// each, V its committed version (consecutive, increasing, none applied
// twice), and every event the engine reported Handled is at most V (none
// lost). After the last, V is n for every key.
//
//	go test -race -run TestStress ./runtime/groupcommit -groupcommit.stress=5m
var (
	stressFor  = flag.Duration("groupcommit.stress", 2*time.Second, "how long TestStress runs")
	stressSeed = flag.Uint64("groupcommit.seed", 0, "seed of TestStress's choices (default: from the clock, logged)")
)

func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test skipped under -short")
	}
	seed := *stressSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-groupcommit.seed)", seed)
	rnd := mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pg := postgresStore(t)
	if pg == nil {
		t.Log(skipPostgres)
	}
	var total stressTotals
	deadline := time.Now().Add(*stressFor)
	for round := 0; time.Now().Before(deadline) && !t.Failed(); round++ {
		switch {
		case round%3 == 0:
			stressRound(t, rnd, fakeBackend(), &total)
		case round%3 == 1:
			stressRound(t, rnd, sqlBackend(t, "sqlite", sqliteStore(t)), &total)
		case pg != nil:
			stressRound(t, rnd, sqlBackend(t, "postgres", pg), &total)
		}
	}
	t.Logf("totals: %s", total.String())
}

// stressTotals add up the rounds, for the log.
type stressTotals struct {
	rounds, phases, handled, skipped     atomicCount
	committed, events, evictions, alone  atomicCount
	failureRollbacks, savepointRollbacks atomicCount
	conflictRollbacks, failed, panics    atomicCount
	conflicts, fails, ambiguous          atomicCount
	byBackend                            sync.Map // name -> *atomicCount of rounds
}

func (s *stressTotals) String() string {
	by := ""
	s.byBackend.Range(func(k, v any) bool { by += fmt.Sprintf(" %s=%d", k, v.(*atomicCount).Load()); return true })
	return fmt.Sprintf("rounds %d (%s), phases %d; events handled %d, skipped %d; groups committed %d (%d events); "+
		"rollbacks: failure %d, eviction %d, conflict %d; savepoint rollbacks %d; works failed %d (panics %d); alone %d; "+
		"injected: conflicts %d, failed commits %d, ambiguous commits %d",
		s.rounds.Load(), by[min(1, len(by)):], s.phases.Load(), s.handled.Load(), s.skipped.Load(), s.committed.Load(), s.events.Load(),
		s.failureRollbacks.Load(), s.evictions.Load(), s.conflictRollbacks.Load(), s.savepointRollbacks.Load(),
		s.failed.Load(), s.panics.Load(), s.alone.Load(), s.conflicts.Load(), s.fails.Load(), s.ambiguous.Load())
}

type atomicCount struct{ atomic.Int64 }

func (c *atomicCount) add() { c.Add(1) }

// stressEvent is an event of the stress test: its key's version.
type stressEvent struct{ version uint64 }

func stressRound[T any](t *testing.T, rnd *mrand.Rand, b backend[T], total *stressTotals) {
	t.Helper()
	ns := uniqueNamespace(t)
	keys := make([]string, 10+rnd.IntN(150))
	for i := range keys {
		keys[i] = fmt.Sprintf("key%03d", i)
	}
	n := uint64(5 + rnd.IntN(60))
	for phase := 0; ; phase++ {
		last := phase >= 2+rnd.IntN(4)
		stressPhase(t, rnd, b, ns, keys, n, last, total)
		if t.Failed() || last {
			break
		}
	}
	if !t.Failed() {
		for _, key := range keys {
			if v, _, err := b.committed(ns, key); err != nil || v != n {
				t.Fatalf("%s %s: committed version %d (%v) after the last phase, want %d", b.name, key, v, err, n)
			}
		}
	}
	total.rounds.add()
	c, _ := total.byBackend.LoadOrStore(b.name, new(atomicCount))
	c.(*atomicCount).add()
}

// stressPhase runs one engine and committer over keys, delivering each
// key's events from a little before its committed version to n, and checks
// the store when both are closed.
func stressPhase[T any](t *testing.T, rnd *mrand.Rand, b backend[T], ns string, keys []string, n uint64, last bool, total *stressTotals) {
	t.Helper()
	total.phases.add()
	var f faults
	var works workFaults
	if !last {
		f = faults{conflict: rnd.Float64() * 0.1, fail: rnd.Float64() * 0.03, ambiguous: rnd.Float64() * 0.03, slowBegin: rnd.Float64() * 0.2}
		works = workFaults{fail: rnd.Float64() * 0.05, panic: rnd.Float64() * 0.02, slow: rnd.Float64() * 0.02}
	}
	counts := &faultCounts{}
	store := &faulty[T]{GroupTxStore: b.store, conflict: b.conflict, f: f, counts: counts}
	cfg := groupcommit.Config{
		Name:       b.name,
		MaxEvents:  1 + rnd.IntN(300),
		Linger:     []time.Duration{0, 0, 200 * time.Microsecond, time.Millisecond}[rnd.IntN(4)],
		MaxWork:    time.Duration(2+rnd.IntN(10)) * time.Millisecond,
		Savepoints: rnd.IntN(2) == 0,
		MaxGroups:  1 + rnd.IntN(3),
		MaxRetries: 1 + rnd.IntN(6),
		Logger:     quiet,
	}
	if last {
		cfg.MaxWork = time.Minute // it drains: nothing is slow
	}
	c, err := groupcommit.New[T](store, ns, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handled := map[string]uint64{}
	var panics atomicCount
	ecfg := runtime.Config[string, stressEvent]{
		Name:      "stress",
		MaxActive: 2 + rnd.IntN(64),
		BatchSize: 1 + rnd.IntN(16),
		Backlog:   runtime.Backlog{PerKey: 1000, Total: 100000, WhenFull: runtime.Block},
		Retry:     runtime.Retry{Attempts: 50, Initial: 100 * time.Microsecond, Max: time.Millisecond},
		Timeout:   time.Second,
		Logger:    quiet,
		OnOutcome: func(key string, tag uint64, o runtime.Outcome) {
			if o == runtime.Handled {
				mu.Lock()
				handled[key] = max(handled[key], tag)
				mu.Unlock()
				total.handled.add()
			} else if o == runtime.Skipped {
				total.skipped.add()
			}
		},
	}
	handler := func(ctx context.Context, key string, evs []stressEvent) error {
		return c.Do(ctx, key, len(evs), func(ctx context.Context, tx T, read durable.KeyState) (groupcommit.Result, error) {
			return stressWork(ctx, b, tx, ns, key, read, evs, works, cfg.MaxWork, &panics)
		})
	}
	eng, err := runtime.NewBatch(handler, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	// Producers: each delivers its share of the keys, their events
	// interleaved and each key's in order, from a little before what was
	// committed (a redelivery).
	stop := make(chan struct{})
	var producers sync.WaitGroup
	parts := 1 + rnd.IntN(4)
	for p := range parts {
		var mine []string
		for i := p; i < len(keys); i += parts {
			mine = append(mine, keys[i])
		}
		next := map[string]uint64{}
		todo := mine[:0]
		for _, key := range mine {
			v, _, err := b.committed(ns, key)
			if err != nil {
				t.Fatal(err)
			}
			if next[key] = max(1, v+1-min(v, uint64(rnd.IntN(4)))); next[key] <= n {
				todo = append(todo, key)
			}
		}
		mine = todo
		producers.Go(func() {
			for len(mine) > 0 {
				select {
				case <-stop:
					return
				default:
				}
				i := mrand.IntN(len(mine))
				key := mine[i]
				if err := runtime.EngineForTransport(eng).SubmitTagged(context.Background(), key, stressEvent{next[key]}, next[key]); err != nil {
					return // closed
				}
				if next[key]++; next[key] > n {
					mine = append(mine[:i], mine[i+1:]...)
				}
			}
		})
	}
	if last {
		producers.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := eng.Flush(ctx); err != nil {
			t.Errorf("%s: flush: %v", b.name, err)
		}
		cancel()
		if err := eng.Close(context.Background()); err != nil {
			t.Errorf("%s: close: %v", b.name, err)
		}
		_ = c.Close()
	} else {
		// Close at a random moment (a random schedule, not a signal), the
		// engine or the committer first.
		time.Sleep(time.Duration(rnd.Int64N(int64(150 * time.Millisecond))))
		close(stop)
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rnd.Int64N(int64(30*time.Millisecond))))
		if rnd.IntN(2) == 0 {
			_ = c.Close()
			_ = eng.Close(ctx)
		} else {
			_ = eng.Close(ctx)
			_ = c.Close()
		}
		cancel()
	}
	producers.Wait()
	mu.Lock()
	defer mu.Unlock()
	s := c.Stats()
	total.committed.Add(int64(s.Committed))
	total.events.Add(int64(s.Events))
	total.evictions.Add(int64(s.Evictions))
	total.alone.Add(int64(s.Alone))
	total.failureRollbacks.Add(int64(s.FailureRollbacks))
	total.savepointRollbacks.Add(int64(s.SavepointRollbacks))
	total.conflictRollbacks.Add(int64(s.ConflictRollbacks))
	total.failed.Add(int64(s.Failed))
	total.panics.Add(panics.Load())
	total.conflicts.Add(counts.conflicts.Load())
	total.fails.Add(counts.fails.Load())
	total.ambiguous.Add(counts.ambiguous.Load())
	for _, key := range keys {
		v, apps, err := b.committed(ns, key)
		if err != nil {
			t.Fatal(err)
		}
		for version := uint64(1); version <= v; version++ {
			if apps[version] != 1 {
				t.Fatalf("%s %s at version %d: version %d applied %d times (%v)", b.name, key, v, version, apps[version], apps)
			}
		}
		if len(apps) != int(v) {
			t.Fatalf("%s %s at version %d: applications %v beyond it", b.name, key, v, apps)
		}
		if h := handled[key]; h > v {
			t.Fatalf("%s %s: the engine reported version %d handled, the store committed %d", b.name, key, h, v)
		}
	}
}

// workFaults are the probabilities of a work's faults.
type workFaults struct{ fail, panic, slow float64 }

var errWorkFault = errors.New("injected: work failed")

// stressWork applies evs as a generated batch guard does (CheckVersion, the
// application written in tx, the last version in the Result), then perhaps
// fails, panics or runs past maxWork (up to three times it, or until its
// context ends).
func stressWork[T any](ctx context.Context, b backend[T], tx T, ns, key string, read durable.KeyState, evs []stressEvent, f workFaults, maxWork time.Duration, panics *atomicCount) (groupcommit.Result, error) {
	verdicts := make([]error, len(evs))
	v := read.Version
	for i, e := range evs {
		verdicts[i] = genimpl.CheckVersion(e.version, v, false)
		if verdicts[i] != nil {
			continue
		}
		if err := b.apply(ctx, tx, ns, key, e.version); err != nil {
			return groupcommit.Result{}, err
		}
		v = e.version
	}
	switch r := mrand.Float64(); {
	case r < f.fail:
		return groupcommit.Result{}, errWorkFault
	case r < f.fail+f.panic:
		panics.add()
		panic("injected: work panicked")
	case r < f.fail+f.panic+f.slow:
		slow := time.NewTimer(time.Duration(mrand.Int64N(int64(3 * maxWork))))
		defer slow.Stop()
		select {
		case <-slow.C:
		case <-ctx.Done():
			return groupcommit.Result{}, context.Cause(ctx)
		}
	}
	return groupcommit.Result{Write: durable.KeyState{Version: v, State: read.State}, Verdict: genimpl.Verdicts(verdicts)}, nil
}

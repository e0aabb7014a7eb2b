package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/gen"
	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

var groupStressFor = flag.Duration("ledger.groupstress", 3*time.Second, "how long TestGroupStress runs on each store")

// TestGroupStress attacks the generated group-commit path with random
// schedules: processes (dispatchers on one store) with random group bounds,
// worker counts and savepoints, fed the whole stream again from the start
// each (an at-least-once source), reordered and duplicated, with handlers
// that fail transiently after writing or run past MaxWork, each process
// closed at a random moment, sometimes giving up on what it has not
// finished. After every process the store is consistent: each account's
// applied events are exactly versions 1..its stored version, none twice,
// and its balance is that of those versions in order. At the end a last
// process delivers everything: every account is at its last version with
// the balance of in-order application.
func TestGroupStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test")
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 22))
			l := openGroupLedger(t, dialect)
			prefix := prefixBalances(l.seq)
			c := newChaos(rng.Uint64())
			l.book.chaos = c.fail
			deadline := time.Now().Add(*groupStressFor)
			processes, rounds := 0, 0
			for rounds == 0 || time.Now().Before(deadline) {
				// A round: a fresh store, processes that stop part way, and
				// a last one that finishes.
				rounds++
				if err := l.book.reset(t.Context(), l.store.DB()); err != nil {
					t.Fatal(err)
				}
				if err := l.store.DeleteNamespace(t.Context(), "Account"); err != nil {
					t.Fatal(err)
				}
				c.stir()
				for range 1 + rng.IntN(6) {
					processes++
					runProcess(t, l, rng, c, false)
					checkConsistent(t, l, prefix)
				}
				processes++
				runProcess(t, l, rng, c, true)
				checkConsistent(t, l, prefix)
				checkFinished(t, l)
			}
			t.Logf("%d rounds, %d processes, %d transient failures and %d slow handlers injected", rounds, processes, c.failures(), c.slows())
		})
	}
}

// checkFinished fails unless every account is at its last version with the
// balance of in-order application, no event applied twice.
func checkFinished(t *testing.T, l *durableLedger) {
	t.Helper()
	balances, twice, err := l.book.snapshot(t.Context(), l.store.DB())
	if err != nil {
		t.Fatal(err)
	}
	for account, want := range l.want {
		if balances[account] != want {
			t.Fatalf("%s: balance %d, in-order application gives %d", account, balances[account], want)
		}
	}
	if twice != 0 {
		t.Fatalf("%d events applied twice", twice)
	}
	assertLastVersions(t, l.store)
}

// runProcess runs one process over l's store: a dispatcher with random
// bounds, fed the stream reordered and duplicated. Unless last, it is
// closed at a random point of the stream, with a context that has ended
// half of the time (what it has not finished is abandoned); the last one
// delivers the whole stream, replays the keys that earlier processes
// parked (closed while holding their events), flushes and closes.
func runProcess(t *testing.T, l *durableLedger, rng *rand.Rand, c *chaos, last bool) {
	t.Helper()
	ctx := t.Context()
	maxEvents, linger := 1+rng.IntN(64), time.Duration(rng.IntN(3))*time.Millisecond
	maxWork, savepoints, workers := time.Duration(2+rng.IntN(30))*time.Millisecond, rng.IntN(2) == 0, 1+rng.IntN(2*durableAccounts)
	if last {
		c.calm() // the last process finishes: its handlers fail no more
	}
	d, err := l.start(func(cfg *ledger.AccountConfig) {
		cfg.MaxActive = workers
		cfg.Retry = runtime.Retry{Attempts: 1000, Initial: time.Millisecond, Max: 5 * time.Millisecond, Multiplier: 2}
		cfg.Group.MaxEvents, cfg.Group.Linger, cfg.Group.MaxWork, cfg.Group.Savepoints = maxEvents, linger, maxWork, savepoints
	})
	if err != nil {
		t.Fatal(err)
	}
	stream := shuffled(rng, l.seq)
	cut := len(stream)
	if !last {
		cut = rng.IntN(len(stream) + 1)
	}
	for _, e := range stream[:cut] {
		if err := publish(ctx, d, e); err != nil {
			t.Fatal(err)
		}
	}
	if last {
		if err := d.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// A process that closed while events of a key were held on a gap
		// parked the key (the engine's rule, group or not): an operator
		// replays it, the events delivered since with it.
		parked, err := d.ParkedKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range parked[ledger.AccountFirstSubscriber] {
			if err := d.Replay(ctx, k.Key); err != nil {
				t.Fatalf("replay %s: %v", k.Key, err)
			}
		}
		if err := d.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if st := d.Stats()[ledger.AccountFirstSubscriber]; st.Held != 0 || st.Parked != 0 || st.Pending != 0 {
			parked, _ := d.ParkedKeys(ctx)
			t.Fatalf("the last process (max_events %d, linger %v, MaxWork %v, savepoints %v, %d workers) ends with %+v, parked %+v",
				maxEvents, linger, maxWork, savepoints, workers, st, parked)
		}
		if err := d.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return
	}
	stop, cancel := context.WithCancel(ctx)
	if rng.IntN(2) == 0 {
		cancel()
	}
	defer cancel()
	var ce *runtime.CloseError
	if err := d.Close(stop); err != nil && !errors.As(err, &ce) {
		t.Fatalf("close (max_events %d, linger %v, MaxWork %v, savepoints %v, %d workers): %v", maxEvents, linger, maxWork, savepoints, workers, err)
	}
}

// shuffled returns seq with some events delivered twice and some moved a
// few places later: what an at-least-once source with several producers
// does. Versions then arrive out of order, and the guards hold, skip and
// reoffer them.
func shuffled(rng *rand.Rand, seq []entry) []entry {
	out := make([]entry, 0, len(seq)+len(seq)/10)
	for _, e := range seq {
		out = append(out, e)
		if rng.IntN(10) == 0 {
			out = append(out, e)
		}
	}
	for i := range out {
		if rng.IntN(8) == 0 {
			j := min(len(out)-1, i+1+rng.IntN(4))
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// prefixBalances returns, by account, the balance after each version of
// seq applied in order (index: the version).
func prefixBalances(seq []entry) map[string][]int64 {
	out := map[string][]int64{}
	for _, e := range seq {
		b := out[e.account]
		if b == nil {
			b = []int64{0}
		}
		next := b[len(b)-1]
		switch e.kind {
		case "deposit":
			next += e.amount
		case "withdraw":
			next -= e.amount
		}
		out[e.account] = append(b, next)
	}
	return out
}

// checkConsistent fails unless each account's applied events are exactly
// versions 1..its stored version, none twice, with the balance of those in
// order: what a group commits, it commits whole.
func checkConsistent(t *testing.T, l *durableLedger, prefix map[string][]int64) {
	t.Helper()
	ctx := t.Context()
	balances, twice, err := l.book.snapshot(ctx, l.store.DB())
	if err != nil {
		t.Fatal(err)
	}
	if twice != 0 {
		t.Fatalf("%d events applied twice", twice)
	}
	versions := durable.EncodedVersions[string](l.store.Versions(string(ledger.AccountFirstSubscriber)))
	for account, want := range prefix {
		v, err := versions.Version(ctx, account)
		if err != nil {
			t.Fatal(err)
		}
		var n, top int64
		if err := l.store.DB().QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(version), 0) FROM `+l.book.applied+` WHERE account = $1`, account).Scan(&n, &top); err != nil {
			t.Fatal(err)
		}
		if uint64(n) != v || uint64(top) != v {
			t.Fatalf("%s: stored version %d, but %d events applied, the latest v%d", account, v, n, top)
		}
		if got := balances[account]; v > 0 && got != want[v] {
			t.Fatalf("%s at v%d: balance %d, in-order application gives %d", account, v, got, want[v])
		}
	}
}

// chaos injects faults into the book's handlers: a transient failure after
// the writes (which rolls them back with the key's work) or a handler that
// runs past MaxWork, until calm.
type chaos struct {
	mu      sync.Mutex
	rng     *rand.Rand
	quiet   bool
	failed  int
	slowed  int
	pending map[fault]int // transient failures left, by event
}

func newChaos(seed uint64) *chaos {
	return &chaos{rng: rand.New(rand.NewPCG(seed, 7)), pending: map[fault]int{}}
}

// fail is the book's chaos hook.
func (c *chaos) fail(ctx context.Context, account string, version uint64) error {
	c.mu.Lock()
	if c.quiet {
		c.mu.Unlock()
		return nil
	}
	f := fault{account, version}
	left, seen := c.pending[f]
	if !seen {
		left = 0
		if c.rng.IntN(20) == 0 {
			left = 1 + c.rng.IntN(3)
		}
	}
	slow := c.rng.IntN(100) == 0
	if left > 0 {
		c.pending[f] = left - 1
		c.failed++
	} else {
		c.pending[f] = 0
	}
	if slow {
		c.slowed++
	}
	c.mu.Unlock()
	if slow { // past MaxWork: evicted, it runs again alone
		timer := time.NewTimer(40 * time.Millisecond)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if left > 0 {
		return fmt.Errorf("transient failure of %s v%d (%d more)", account, version, left-1)
	}
	return nil
}

// stir starts the faults again, with new events to fail.
func (c *chaos) stir() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quiet = false
	clear(c.pending)
}

// calm stops the faults.
func (c *chaos) calm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quiet = true
}

func (c *chaos) failures() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func (c *chaos) slows() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slowed
}

package transport_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

var sourceStress = flag.Duration("source.stress", time.Second, "how long TestSourceStress attacks a Source")

// A Source attacked at random moments: feeders take and offer messages
// under ownerships that a rebalancer ends at random (with deadlines that
// cut running handlers short), handlers that succeed, hold, fail for good
// (the key parks in memory) or run long, and an operator who replays and
// discards parked keys. Checked throughout: every message is settled
// exactly once; never after End returned for its ownership; Finished only
// when its event was handled (or its key discarded); and no handler starts
// for an event of an ownership whose End returned (a handler that finds its
// ownership ended must have started before and had its context cancelled).
func TestSourceStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress: the full run (without -short) runs it")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (run long with -source.stress=1m)", seed)
	var mu sync.Mutex // guards what follows
	ended := map[*transport.Ownership]bool{}
	ownerOf := map[int]*transport.Ownership{}
	settled := map[int][]transport.Settlement{}
	handled := map[int]bool{}
	startsOf := map[int]int{}
	outsOf := map[int][]runtime.Outcome{}
	tagOf := map[uint64]int{}
	endErr := map[*transport.Ownership]error{}
	var violations []string
	fixed := map[string]bool{}
	violate := func(format string, args ...any) {
		violations = append(violations, fmt.Sprintf(format, args...))
	}

	handler := func(ctx context.Context, key string, e tev) error {
		mu.Lock()
		// An attempt that started before End returned has finished since
		// (End waits for it) or had its context cancelled by End.
		startsOf[e.N]++
		if ended[ownerOf[e.N]] && ctx.Err() == nil {
			violate("message %d of an ended ownership started (start %d, outcomes %v, endErr %v)", e.N, startsOf[e.N], outsOf[e.N], endErr[ownerOf[e.N]])
		}
		broken := !fixed[key] && e.N%13 == 0
		mu.Unlock()
		switch {
		case broken || key == "drop":
			return runtime.Permanent(errors.New("broken"))
		case e.N%7 == 0:
			select { // long: the rebalancer's deadline may cut it short
			case <-time.After(2 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		handled[e.N] = true
		mu.Unlock()
		return nil
	}
	var src *transport.Source[string, tev, int]
	e, err := runtime.New(handler, runtime.Config[string, tev]{
		MaxActive: 8,
		Retry:     runtime.Retry{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond},
		Backlog:   runtime.Backlog{PerKey: 64, Total: 512},
		Logger:    slog.New(slog.DiscardHandler),
		OnOutcome: func(k string, tag uint64, o runtime.Outcome) {
			mu.Lock()
			outsOf[tagOf[tag]] = append(outsOf[tagOf[tag]], o)
			mu.Unlock()
			src.OnOutcome(k, tag, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	src, err = transport.NewSource[string](transport.EngineTarget(e), func(m int, st transport.Settlement) {
		mu.Lock()
		defer mu.Unlock()
		settled[m] = append(settled[m], st)
		if len(settled[m]) > 1 {
			violate("message %d settled %v", m, settled[m])
		}
		if ended[ownerOf[m]] {
			violate("message %d settled %v after End returned", m, st)
		}
		if st == transport.Finished && !handled[m] && m%5 != 4 { // m%5 == 4: key "drop"
			violate("message %d finished without being handled", m)
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var next int
	var current []*transport.Ownership
	for range 4 {
		current = append(current, src.Own())
	}
	keys := []string{"a", "b", "c", "d", "drop"}
	// Feeders: each takes messages under a random current ownership.
	for f := range 3 {
		r := rand.New(rand.NewPCG(seed+uint64(f), 7))
		wg.Go(func() {
			var waiting []struct {
				tag uint64
				e   tev
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				o := current[r.IntN(len(current))]
				next++
				m := next
				ownerOf[m] = o
				mu.Unlock()
				tag, err := src.Take(o, m)
				mu.Lock()
				tagOf[tag] = m
				mu.Unlock()
				if err != nil {
					mu.Lock()
					delete(ownerOf, m)
					mu.Unlock()
					continue
				}
				waiting = append(waiting, struct {
					tag uint64
					e   tev
				}{tag, tev{keys[m%len(keys)], m}})
				kept := waiting[:0]
				for _, w := range waiting {
					err := src.Offer(transport.DoneContext(), w.tag, w.e)
					if errors.Is(err, runtime.ErrBacklogFull) {
						kept = append(kept, w) // offered again later, as a paused partition would
					} else if err != nil && !errors.Is(err, transport.ErrOwnershipEnded) {
						t.Errorf("offer: %v", err)
					}
				}
				waiting = kept
			}
		})
	}
	// The rebalancer ends ownerships at random, with random deadlines.
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 11))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.IntN(3000)) * time.Microsecond):
			}
			mu.Lock()
			i := rng.IntN(len(current))
			o := current[i]
			current[i] = src.Own()
			d := time.Duration(rng.IntN(3)) * time.Millisecond
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), d)
			_, eerr := src.End(ctx, o)
			cancel()
			mu.Lock()
			ended[o] = true
			endErr[o] = eerr
			mu.Unlock()
		}
	})
	// The operator fixes, replays and discards parked keys at random.
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(seed, 13))
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rng.IntN(5000)) * time.Microsecond):
			}
			key := keys[rng.IntN(len(keys))]
			ctx := context.Background()
			if key == "drop" {
				_, _ = e.Discard(ctx, key)
				continue
			}
			mu.Lock()
			fixed[key] = rng.IntN(2) == 0
			mu.Unlock()
			_ = e.Replay(ctx, key)
		}
	})
	time.Sleep(*sourceStress) // the attack's duration, not a synchronisation
	close(stop)
	wg.Wait()
	mu.Lock()
	last := current
	mu.Unlock()
	if _, err := src.End(context.Background(), last...); err != nil {
		t.Errorf("final End: %v", err)
	}
	mu.Lock()
	for _, o := range last {
		ended[o] = true
	}
	defer mu.Unlock()
	for m, o := range ownerOf {
		if got := settled[m]; len(got) != 1 {
			violate("message %d (ownership ended %v) settled %v", m, ended[o], got)
		}
	}
	if src.Unsettled() != 0 {
		violate("%d messages live after every ownership ended", src.Unsettled())
	}
	for i, v := range violations {
		if i == 20 {
			t.Errorf("... %d more", len(violations)-20)
			break
		}
		t.Error(v)
	}
	t.Logf("%d messages, %d handled", len(ownerOf), len(handled))
}

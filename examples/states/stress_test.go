package states

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/examples/states/shipping"
	"github.com/ordergen/ordergen/runtime"
)

var stressFor = flag.Duration("states.stress", time.Second, "how long TestStressSkipsAreToldAndTheFirstDuplicateLoggedOnce attacks (run long with e.g. -states.stress=5m)")

// flaky is a Parcel handler whose attempts fail at random (they are
// retried), in front of a tracker.
type flaky struct {
	*tracker
	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

func (f *flaky) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.IntN(5) == 0 {
		return errors.New("the tracking database blinked")
	}
	return nil
}

func (f *flaky) HandleParcelBooked(ctx context.Context, e shipping.ParcelBooked) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.tracker.HandleParcelBooked(ctx, e)
}

func (f *flaky) HandleParcelScanned(ctx context.Context, e shipping.ParcelScanned) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.tracker.HandleParcelScanned(ctx, e)
}

func (f *flaky) HandleParcelLocated(ctx context.Context, e shipping.ParcelLocated) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.tracker.HandleParcelLocated(ctx, e)
}

func (f *flaky) HandleParcelDelivered(ctx context.Context, e shipping.ParcelDelivered) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.tracker.HandleParcelDelivered(ctx, e)
}

// Random parcels' events from several goroutines at once, a handler that
// fails at random and a Close at a random moment: every skip of the guards
// is told to OnSkip once and counted, the first duplicate of the
// subscriber is logged once and no other, and the outcomes add up.
func TestStressSkipsAreToldAndTheFirstDuplicateLoggedOnce(t *testing.T) {
	deadline := time.Now().Add(*stressFor)
	round := 0
	defer func() { t.Logf("%d rounds", round) }()
	for ; round == 0 || time.Now().Before(deadline); round++ {
		rng := rand.New(rand.NewPCG(uint64(round), 42))
		log := &debugLog{}
		var told, duplicates atomic.Int64
		h := &flaky{tracker: newTracker(), rng: rand.New(rand.NewPCG(uint64(round), 7))}
		d, err := shipping.NewParcelDispatcher(h, func(c *shipping.ParcelConfig) {
			c.Logger = log.logger()
			c.Retry = runtime.Retry{Attempts: 50, Initial: time.Microsecond, Max: time.Microsecond, Multiplier: 1}
			c.Backlog.WhenFull = runtime.Block
			c.OnSkip = func(_ string, _ shipping.ParcelEvent, reason string) {
				told.Add(1)
				if strings.HasPrefix(reason, "duplicate: ") {
					duplicates.Add(1)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		publishers, keys := 1+rng.IntN(6), 1+rng.IntN(40)
		closeAfter := 1 + rng.IntN(2000) // a count of publishes: 0 would never come
		var published atomic.Int64
		var wg sync.WaitGroup
		closed := make(chan error, 1)
		for p := range publishers {
			prng := rand.New(rand.NewPCG(uint64(round), uint64(p)))
			wg.Go(func() {
				for range 400 {
					key := fmt.Sprintf("p-%d", prng.IntN(keys))
					ev := []shipping.ParcelEvent{
						shipping.ParcelBooked{ParcelID: key},
						shipping.ParcelScanned{ParcelID: key, Location: "Leeds"},
						shipping.ParcelLocated{ParcelID: key, Location: "York"},
						shipping.ParcelDelivered{ParcelID: key},
					}[prng.IntN(4)]
					if err := d.Publish(context.Background(), ev); errors.Is(err, runtime.ErrClosed) {
						return
					} else if err != nil {
						t.Error(err)
						return
					}
					if published.Add(1) == int64(closeAfter) {
						go func() { closed <- d.Close(context.Background()) }()
					}
				}
			})
		}
		wg.Wait()
		if published.Load() < int64(closeAfter) {
			go func() { closed <- d.Close(context.Background()) }()
		}
		if err := <-closed; err != nil {
			t.Fatalf("round %d: close: %v", round, err)
		}
		st := d.Stats()[shipping.ParcelFirstSubscriber]
		if st.Accepted != st.Handled+st.Skipped+uint64(st.Parked)+st.Dropped || st.Pending != 0 {
			t.Fatalf("round %d: outcomes do not add up: %+v", round, st)
		}
		if uint64(told.Load()) != st.Skipped || st.Unimplemented != 0 {
			t.Fatalf("round %d: %d skips told to OnSkip, %d counted (%d unimplemented)", round, told.Load(), st.Skipped, st.Unimplemented)
		}
		var logged int
		for _, l := range log.lines() {
			if strings.Contains(l, "as a duplicate") {
				logged++
			}
		}
		if want := min(1, int(duplicates.Load())); logged != want {
			t.Fatalf("round %d: %d duplicates skipped, %d logged; want %d", round, duplicates.Load(), logged, want)
		}
	}
}

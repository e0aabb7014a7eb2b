package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// An event's room in the total backlog is given back before its outcome is
// reported (the package documentation's rule, and retire's order): inside
// OnOutcome, the room taken is at most what the events submitted so far,
// less those reported so far, can hold. Each reporter gives its events'
// room back before it counts its report, so the bound holds however the
// workers interleave. It is checked where outcomes come from: events run
// inline, events of a lane (keys whose first event failed), a batch
// handler's lanes, and a park outside the engine's memory. (A park in
// memory keeps its events' room: the rule's stated exception.)
func TestRoomIsGivenBackBeforeTheOutcomeIsReported(t *testing.T) {
	for _, path := range []string{"inline", "lane", "batch", "park"} {
		t.Run(path, func(t *testing.T) {
			var submitted, reported atomic.Int64
			var mu sync.Mutex
			var broken []string
			var e *runtime.Engine[string, ev]
			ready := make(chan struct{})
			cfg := runtime.Config[string, ev]{
				MaxActive: 4,
				Retry:     fastRetry,
				Logger:    discardLogger(),
				OnOutcome: func(key string, tag uint64, o runtime.Outcome) {
					<-ready // e is set
					k := reported.Add(1)
					taken := runtime.RoomTaken(e)
					if s := submitted.Load(); taken > s-k {
						mu.Lock()
						if len(broken) < 5 {
							broken = append(broken, fmt.Sprintf("%s/%d %v: %d room taken with %d submitted and %d reported", key, tag, o, taken, s, k))
						}
						mu.Unlock()
					}
				},
			}
			var failed sync.Map
			handle := func(_ context.Context, key string, x ev) error {
				switch path {
				case "lane":
					if _, again := failed.LoadOrStore(key, true); !again {
						return errors.New("the first attempt fails: the key gets a lane")
					}
				case "park":
					if x.Seq%10 == 9 {
						return runtime.Permanent(errors.New("parks the key"))
					}
				}
				return nil
			}
			var err error
			switch path {
			case "batch":
				e, err = runtime.NewBatch(func(ctx context.Context, key string, xs []ev) error {
					for _, x := range xs {
						if err := handle(ctx, key, x); err != nil {
							return err
						}
					}
					return nil
				}, cfg)
			case "park":
				cfg.Parks = runtime.NewMemoryParkStore[string, ev]() // passed in: outside the backlog
				e, err = runtime.New(handle, cfg)
			default:
				e, err = runtime.New(handle, cfg)
			}
			if err != nil {
				t.Fatal(err)
			}
			close(ready)
			t.Cleanup(func() { _ = e.Close(context.Background()) })
			ctx := context.Background()
			for i := 0; i < 5000; i++ {
				submitted.Add(1) // before: the event may be reported before Submit returns
				if err := runtime.EngineForTransport(e).SubmitTagged(ctx, fmt.Sprintf("k%d", i%50), ev{Seq: i / 50}, uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			flush(t, e)
			if reported.Load() < 5000 {
				t.Fatalf("%d outcomes reported of 5000 events", reported.Load())
			}
			mu.Lock()
			defer mu.Unlock()
			if len(broken) > 0 {
				t.Fatalf("outcomes reported before their room was given back:\n%s", fmt.Sprint(broken))
			}
		})
	}
}

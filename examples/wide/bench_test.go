package wide_test

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	goruntime "runtime"
	"strconv"
	"testing"

	"github.com/ordergen/ordergen/examples/wide/fleet"
	"github.com/ordergen/ordergen/runtime"
)

// BenchmarkQueuedEvent publishes b.N events of the 30-event Vehicle entity
// while the dispatcher's only worker is held in a handler, so that every
// event stays queued and nothing but publishing allocates, and reports:
//
//   - B/pending: the heap held per pending event, the runtime's
//     bookkeeping included; B/pending-engine: what runtime.New's engine
//     holds per pending event of no size under the same load (its lanes
//     and inboxes); B/event: the difference, what the event itself costs,
//     against largest-B, the size of the largest event type.
//   - allocs/publish: allocations per publish; allocs/submit-engine: the
//     engine's own under the same load (its queues growing with the
//     backlog); allocs/publish-own: the difference, the dispatcher's.
//
// Run it with -benchtime 20000x: one event per op is too few to measure.
func BenchmarkQueuedEvent(b *testing.B) {
	events := vehicleEvents(b.N)
	b.ResetTimer()
	total := queuedDispatcher(b, events)
	b.StopTimer()
	engine := queuedEngine(b, len(events))
	b.ReportMetric(total.bytes, "B/pending")
	b.ReportMetric(engine.bytes, "B/pending-engine")
	b.ReportMetric(total.bytes-engine.bytes, "B/event")
	b.ReportMetric(float64(largest(events)), "largest-B")
	b.ReportMetric(total.allocs, "allocs/publish")
	b.ReportMetric(engine.allocs, "allocs/submit-engine")
	b.ReportMetric(total.allocs-engine.allocs, "allocs/publish-own")
}

// TestQueuedEventCostsItsOwnSize checks what the benchmark reports: beyond
// the engine's own bookkeeping, a queued event of a 30-event entity holds
// at most the largest event's size plus 64 bytes (not the sum of the 30
// sizes), and a publish allocates once (the event's box; the fraction the
// tolerance allows is the noise of the engine's amortised queue growth).
func TestQueuedEventCostsItsOwnSize(t *testing.T) {
	events := vehicleEvents(20000)
	total := queuedDispatcher(t, events)
	engine := queuedEngine(t, len(events))
	limit := float64(largest(events) + 64)
	if own := total.bytes - engine.bytes; own > limit {
		t.Errorf("a queued event holds %.0f bytes (%.0f with the engine's %.0f), want at most %.0f (the largest event's size plus 64)", own, total.bytes, engine.bytes, limit)
	}
	if own := total.allocs - engine.allocs; own > 1.05 {
		t.Errorf("%.3f allocations per publish (%.3f with the engine's %.3f), want 1", own, total.allocs, engine.allocs)
	}
}

// quiet discards the dispatchers' logs.
func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// gated holds its worker on the first event of key "gate" until release
// is closed; it implements no other event.
type gated struct {
	fleet.UnimplementedVehicleHandler
	release, started chan struct{}
}

func (g *gated) HandleTripRequested(_ context.Context, e fleet.TripRequested) error {
	if e.VehicleID == "gate" {
		close(g.started)
		<-g.release
	}
	return nil
}

// queuedDispatcher returns what publishing events costs while they are
// queued in a Vehicle dispatcher whose only worker is held.
func queuedDispatcher(tb testing.TB, events []fleet.VehicleEvent) cost {
	tb.Helper()
	ctx := context.Background()
	h := &gated{release: make(chan struct{}), started: make(chan struct{})}
	d, err := fleet.NewVehicleDispatcher(h, func(c *fleet.VehicleConfig) {
		c.MaxActive = 1
		c.Backlog = runtime.Backlog{PerKey: len(events) + 1, Total: len(events) + 1, WhenFull: runtime.Block}
		c.Logger = quiet()
	})
	if err != nil {
		tb.Fatal(err)
	}
	defer closeOrFail(tb, d.Close)
	if err := d.PublishTripRequested(ctx, fleet.TripRequested{VehicleID: "gate", Version: 1}); err != nil {
		tb.Fatal(err)
	}
	<-h.started
	per := measure(len(events), func(i int) {
		if err := d.Publish(ctx, events[i]); err != nil {
			tb.Fatal(err)
		}
	})
	close(h.release)
	if err := d.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	return per
}

// queuedEngine is queuedDispatcher for runtime.New's engine and n events
// of no size over the same keys: the engine's own bookkeeping.
func queuedEngine(tb testing.TB, n int) cost {
	tb.Helper()
	ctx := context.Background()
	release, started := make(chan struct{}), make(chan struct{})
	e, err := runtime.New(func(_ context.Context, key string, _ struct{}) error {
		if key == "gate" {
			close(started)
			<-release
		}
		return nil
	}, runtime.Config[string, struct{}]{
		MaxActive: 1,
		Backlog:   runtime.Backlog{PerKey: n + 1, Total: n + 1, WhenFull: runtime.Block},
		Logger:    quiet(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	defer closeOrFail(tb, e.Close)
	if err := e.Submit(ctx, "gate", struct{}{}); err != nil {
		tb.Fatal(err)
	}
	<-started
	keys := vehicleKeys()
	per := measure(n, func(i int) {
		if err := e.Submit(ctx, keys[i%len(keys)], struct{}{}); err != nil {
			tb.Fatal(err)
		}
	})
	close(release)
	if err := e.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	return per
}

// cost is what publishing cost per event: the live heap it added and
// the allocations it made.
type cost struct{ bytes, allocs float64 }

// measure runs publish(0..n-1) and returns its cost per event, the heap
// measured after collections on either side. Two each: what sync.Pools of
// an earlier dispatcher keep survives one collection (the pools' victim
// caches) and would be freed inside the measurement, making it too small
// (with -count=3 the engine's own cost came out negative).
func measure(n int, publish func(i int)) cost {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for i := range n {
		publish(i)
	}
	goruntime.GC()
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	return cost{
		bytes:  (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n),
		allocs: float64(after.Mallocs-before.Mallocs) / float64(n),
	}
}

func closeOrFail(tb testing.TB, close func(context.Context) error) {
	if err := close(context.Background()); err != nil {
		tb.Error(err)
	}
}

// vehicleKeys are the 1,000 vehicles of the benchmarks.
func vehicleKeys() []string {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "vehicle-" + strconv.Itoa(i)
	}
	return keys
}

// vehicleEvents returns n events over 1,000 vehicles, every event type in
// turn, versions in order per vehicle. Their strings are shared, so that
// what a queued event holds is its struct.
func vehicleEvents(n int) []fleet.VehicleEvent {
	keys := vehicleKeys()
	samples := sampleEvents()
	out := make([]fleet.VehicleEvent, n)
	for i := range out {
		v := reflect.New(reflect.TypeOf(samples[i%len(samples)])).Elem()
		v.FieldByName("VehicleID").SetString(keys[i%len(keys)])
		v.FieldByName("Driver").SetString("driver")
		v.FieldByName("Version").SetUint(uint64(i/len(keys) + 1))
		out[i] = v.Interface().(fleet.VehicleEvent)
	}
	return out
}

// largest returns the size of the largest event type among events.
func largest(events []fleet.VehicleEvent) uintptr {
	var size uintptr
	for _, e := range events {
		size = max(size, reflect.TypeOf(e).Size())
	}
	return size
}

// sampleEvents returns one zero event of each of Vehicle's 30 types.
func sampleEvents() []fleet.VehicleEvent {
	return []fleet.VehicleEvent{
		fleet.TripRequested{}, fleet.TripAccepted{}, fleet.TripStarted{}, fleet.TripPaused{}, fleet.TripResumed{},
		fleet.TripEnded{}, fleet.TripRated{}, fleet.FareQuoted{}, fleet.FareAdjusted{}, fleet.TipAdded{},
		fleet.TollCharged{}, fleet.FuelLogged{}, fleet.ServiceDue{}, fleet.ServiceDone{}, fleet.TyreChecked{},
		fleet.DoorOpened{}, fleet.DoorClosed{}, fleet.EngineStarted{}, fleet.EngineStopped{}, fleet.SpeedReported{},
		fleet.BrakeAlert{}, fleet.LaneAlert{}, fleet.DriverAssigned{}, fleet.DriverReleased{}, fleet.ShiftStarted{},
		fleet.ShiftEnded{}, fleet.ZoneEntered{}, fleet.ZoneLeft{}, fleet.InspectionPassed{}, fleet.VehicleRetired{},
	}
}

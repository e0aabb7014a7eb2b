package outbox_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/transport"
)

// TestRelayWakesOnNewRows: with a poll of an hour, a relay still ships rows
// as they commit: on PostgreSQL the trigger's notification wakes it, on
// SQLite the writer of the same process does.
func TestRelayWakesOnNewRows(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		s := b.handle(t)
		entity := entityName(t)
		log := newDeliveries()
		r := newRelay(t, s, entity, &recorder{log: log}, func(c *outbox.Config[string, event]) { c.Poll = time.Hour; c.StatsEvery = time.Hour })
		run(t, ctx, r)
		writer := s
		if b.name == "postgres" {
			writer = b.handle(t) // another handle, as another process would be
		}
		for i := range 3 {
			if _, err := write(ctx, writer, entity, event{Key: "k"}); err != nil {
				t.Fatal(err)
			}
			if err := log.waitFor(ctx, func(ds []delivery) bool { return len(ds) == i+1 }); err != nil {
				t.Fatalf("event %d not shipped without a poll: %v", i+1, err)
			}
		}
	})
}

// TestRelayPrunesSentEvents: sent events past the retention are deleted,
// unsent ones never.
func TestRelayPrunesSentEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.handle(t)
		entity := entityName(t)
		writeAll(t, s, entity, []string{"a", "b"}, 3)
		r := newRelay(t, s, entity, &recorder{log: newDeliveries(), refuse: func(_ context.Context, e event) error {
			if e.Key == "b" {
				return errors.New("no")
			}
			return nil
		}}, func(c *outbox.Config[string, event]) { c.Retention = -1 })
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		n, err := r.Prune(ctx)
		if err != nil || n != 3 {
			t.Fatalf("pruned %d, %v; want a's 3 sent events", n, err)
		}
		var rows int
		if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM ordergen_outbox WHERE entity = $1`, entity).Scan(&rows); err != nil || rows != 3 {
			t.Fatalf("%d rows left, %v; want b's 3 unsent", rows, err)
		}
		if st := r.Stats(); st.Pruned != 3 {
			t.Fatalf("stats %+v", st)
		}
		// A relay with the default retention keeps them.
		keep := newRelay(t, s, entity, &recorder{log: newDeliveries()})
		if n, err := keep.Prune(ctx); err != nil || n != 0 {
			t.Fatalf("pruned %d, %v within the retention", n, err)
		}
	})
}

// TestRelayMetrics: the backlog, oldest age, sent, retries and parked and
// retrying keys are recorded with the entity.
func TestRelayMetrics(t *testing.T) {
	ctx := t.Context()
	s := sqliteBackend(t).handle(t)
	entity := entityName(t)
	writeAll(t, s, entity, []string{"a", "b", "c"}, 2)
	mp := metricstest.New()
	r := newRelay(t, s, entity, &recorder{log: newDeliveries(), refuse: func(_ context.Context, e event) error {
		switch e.Key {
		case "b":
			return errors.New("busy")
		case "c":
			return runtime.Permanent(errors.New("forbidden"))
		}
		return nil
	}}, func(c *outbox.Config[string, event]) { c.MeterProvider = mp; c.Backoff.Initial = time.Hour })
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	m := mp.Collect()
	dest := meter.Attribute{Key: meter.AttrDestination, Value: entity}
	for name, want := range map[string]float64{
		outbox.MetricSent: 2, outbox.MetricRetries: 1, outbox.MetricBacklog: 4,
		outbox.MetricParkedKeys: 1, outbox.MetricRetryingKeys: 1, outbox.MetricPruned: 0,
	} {
		if got, ok := m.Sum(name, dest); !ok || got != want {
			t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
		}
	}
	if age, ok := m.Sum(outbox.MetricOldestAge, dest); !ok || age <= 0 {
		t.Errorf("%s = %v (%v), want the age of b's first event", outbox.MetricOldestAge, age, ok)
	}
	st := r.TransportStatus()
	if st.Kind != "outbox" || len(st.Partitions) != 2 || st.Partitions[0].Paused != "parked" || st.Partitions[1].Paused != "retrying" {
		t.Fatalf("transport status %+v, want c parked and b retrying", st)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(mp.Collect().Points(outbox.MetricSent)) != 0 {
		t.Error("the metrics are still observed after Close")
	}
}

// engineOf is an engine of events, the target of a DispatchSink.
func engineOf(t *testing.T, handle func(ctx context.Context, key string, e event) error, sink *outbox.DispatchSink[string, event], parks runtime.ParkStore[string, event]) *runtime.Engine[string, event] {
	t.Helper()
	e, err := runtime.New(handle, runtime.Config[string, event]{OnOutcome: sink.OnOutcome, Parks: parks,
		Retry: runtime.Retry{Attempts: 1}, Backlog: runtime.Backlog{WhenFull: runtime.Block}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// TestDispatchSink: through a DispatchSink an event counts as sent only
// once the dispatcher finished it, so a relay that crashes while a handler
// runs sends that event again; a parked event (in a park store) is
// finished.
func TestDispatchSink(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s := sqliteBackend(t).handle(t)
	entity := entityName(t)
	writeAll(t, s, entity, []string{"a"}, 3)

	var mu sync.Mutex
	var handled []uint64
	block := make(chan struct{})
	entered := make(chan struct{}, 10)
	sink := outbox.NewDispatchSink[string, event]()
	if err := sink.Send(ctx, "a", event{Key: "a"}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("Send before Attach: %v", err)
	}
	parks := runtime.NewMemoryParkStore[string, event]()
	e := engineOf(t, func(ctx context.Context, key string, ev event) error {
		entered <- struct{}{}
		if ev.Version == 2 {
			select {
			case <-block:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if ev.Version == 3 {
			return runtime.Permanent(errors.New("bad event"))
		}
		mu.Lock()
		handled = append(handled, ev.Version)
		mu.Unlock()
		return nil
	}, sink, parks)
	if err := sink.Attach(transport.EngineTarget(e)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Attach(transport.EngineTarget(e)); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Fatalf("a second Attach: %v", err)
	}
	cfg := outbox.Config[string, event]{Store: s, Entity: entity, Codec: codec{}, Sink: sink, Logger: quiet()}
	crashCtx, crash := context.WithCancel(ctx)
	r1, err := outbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r1.Run(crashCtx) }()
	<-entered // v1
	<-entered // v2, which blocks
	crash()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	r1.Close(ctx)
	events, err := s.OutboxEvents(ctx, entity, "a", 0, 0)
	if err != nil || len(events) != 3 {
		t.Fatalf("unsent after the crash: %d, %v; want all 3 (v1 was handled but its round did not commit)", len(events), err)
	}
	close(block)
	r2, err := outbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close(ctx)
	for {
		if _, err := r2.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if events, _ := s.OutboxEvents(ctx, entity, "a", 0, 0); len(events) == 0 {
			break
		}
	}
	keys, err := parks.Keys(ctx)
	if err != nil || len(keys) != 1 || keys[0].Events != 1 {
		t.Fatalf("parked %+v, %v; want v3 parked in the store, and so sent", keys, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(handled) < 3 || handled[0] != 1 || handled[len(handled)-1] != 2 {
		t.Fatalf("handled %v: want v1, v1 again (sent again after the crash), then v2", handled)
	}
}

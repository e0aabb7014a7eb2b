package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/transport"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newRelay returns a relay of entity over s into sink, closed when the
// test ends.
func newRelay(t *testing.T, s *sqlstore.Store, entity string, sink transport.Sink[string, event], change ...func(*outbox.Config[string, event])) *outbox.Relay[string, event] {
	t.Helper()
	cfg := outbox.Config[string, event]{Store: s, Entity: entity, Codec: codec{}, Sink: sink, Logger: quiet(),
		Backoff: outbox.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	for _, c := range change {
		c(&cfg)
	}
	r, err := outbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// run runs r until the test ends (or stop is called) and returns stop,
// which closes r and returns what Run returned.
func run(t *testing.T, ctx context.Context, r *outbox.Relay[string, event]) (stop func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			if cerr := r.Close(context.Background()); cerr != nil {
				err = cerr
			}
			if rerr := <-done; err == nil {
				err = rerr
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%02d", i)
	}
	return out
}

func wantAll(ks []string, n int) map[string]uint64 {
	out := map[string]uint64{}
	for _, k := range ks {
		out[k] = uint64(n)
	}
	return out
}

// TestRelayShipsInKeyOrder: events written by concurrent writers reach the
// sink once each, each key's in version order, and end up marked sent.
func TestRelayShipsInKeyOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		s := b.handle(t)
		entity := entityName(t)
		log := newDeliveries()
		r := newRelay(t, s, entity, &recorder{log: log}, func(c *outbox.Config[string, event]) { c.Batch = 7; c.Senders = 3 })
		stop := run(t, ctx, r)
		ks := keys(6)
		var wg sync.WaitGroup
		for w := range 3 { // writers of every key at once
			wg.Go(func() {
				for i := range 10 {
					for _, k := range ks {
						if _, err := write(ctx, s, entity, event{Key: k, N: w*100 + i}); err != nil {
							t.Error(err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		want := wantAll(ks, 30)
		if err := log.waitFor(ctx, func(ds []delivery) bool { return len(ds) >= 6*30 }); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatalf("Run after Close: %v", err)
		}
		resent, err := checkOrder(log.all(), want)
		if err != nil || resent != 0 {
			t.Fatalf("%d re-sent without a crash; order: %v", resent, err)
		}
		backlog, err := s.OutboxBacklog(ctx, entity)
		if err != nil || backlog.Unsent != 0 {
			t.Fatalf("backlog %+v, %v after every event was delivered", backlog, err)
		}
		if st := r.Stats(); st.Sent != 180 || st.Retries != 0 {
			t.Fatalf("stats %+v, want 180 sent", st)
		}
	})
}

// TestRelayCrashBetweenSendAndMark: a relay whose context ends after it
// sent part of a round marks nothing of that round; the next relay sends
// again exactly the events the crashed round had sent, and the rest once.
func TestRelayCrashBetweenSendAndMark(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		s := b.handle(t)
		entity := entityName(t)
		ks := keys(4)
		writeAll(t, s, entity, ks, 10)

		log := newDeliveries()
		crashCtx, crash := context.WithCancel(ctx)
		var sends atomic.Int64
		first := &recorder{log: log, relay: 1, refuse: func(_ context.Context, _ event) error {
			if sends.Add(1) == 25 { // the 25th send, in the round after the first: the process dies
				crash()
				return context.Canceled
			}
			return nil
		}}
		r1 := newRelay(t, s, entity, first, func(c *outbox.Config[string, event]) { c.Batch = 16; c.Senders = 1 })
		committed := map[uint64]bool{}
		var mu sync.Mutex
		outbox.OnRoundEnd(r1, func(round uint64, ok bool) {
			mu.Lock()
			committed[round] = ok
			mu.Unlock()
		})
		if err := r1.Run(crashCtx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run of the crashed relay: %v, want its context's error", err)
		}
		var lost []delivery // sent by rounds that did not commit
		for _, d := range log.all() {
			if !committed[d.round] {
				lost = append(lost, d)
			}
		}
		if len(lost) == 0 || len(lost) >= 16 {
			t.Fatalf("the crashed round had sent %d events, want 1 to 15", len(lost))
		}
		before := len(log.all())

		r2 := newRelay(t, s, entity, &recorder{log: log, relay: 2})
		stop := run(t, ctx, r2)
		if err := log.waitFor(ctx, func(ds []delivery) bool { return len(ds) >= 40+len(lost) }); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		all := log.all()
		resent, err := checkOrder(all, wantAll(ks, 10))
		if err != nil {
			t.Fatal(err)
		}
		if resent != len(lost) || len(all) != 40+len(lost) {
			t.Fatalf("%d events re-sent, %d deliveries; want the %d the crashed round sent again, and 40 in all besides", resent, len(all), len(lost))
		}
		again := map[delivery]bool{}
		for _, d := range all[before:] {
			again[delivery{key: d.key, version: d.version}] = true
		}
		for _, d := range lost {
			if !again[delivery{key: d.key, version: d.version}] {
				t.Errorf("%s v%d, sent by the crashed round, was not sent again", d.key, d.version)
			}
		}
	})
}

// TestRefusingKeyDoesNotHoldOthers: a key whose sink refuses retries, then
// parks (ParkAfter), while every other key is delivered in full; an
// operator's retry after the fix delivers it in order.
func TestRefusingKeyDoesNotHoldOthers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		s := b.handle(t)
		entity := entityName(t)
		ks := append(keys(5), "bad")
		writeAll(t, s, entity, ks, 8)
		log := newDeliveries()
		var fixed atomic.Bool
		sink := &recorder{log: log, refuse: func(_ context.Context, e event) error {
			if e.Key == "bad" && e.Version == 3 && !fixed.Load() {
				return errors.New("message too large")
			}
			return nil
		}}
		r := newRelay(t, s, entity, sink, func(c *outbox.Config[string, event]) { c.ParkAfter = 4; c.Batch = 10 })
		rounds := make(chan struct{}, 1)
		outbox.OnRoundEnd(r, func(uint64, bool) {
			select {
			case rounds <- struct{}{}:
			default:
			}
		})
		stop := run(t, ctx, r)
		good := wantAll(ks[:5], 8)
		if err := log.waitFor(ctx, func(ds []delivery) bool {
			n := perKey(ds)
			return len(n["bad"]) == 2 && len(ds) == 5*8+2
		}); err != nil {
			t.Fatal(err)
		}
		for r.Stats().Parked == 0 { // a round ends after each retry
			select {
			case <-ctx.Done():
				t.Fatalf("bad never parked: %+v", r.Stats())
			case <-rounds:
			}
		}
		parked, err := s.OutboxKeys(ctx, entity, 0)
		if err != nil {
			t.Fatal(err)
		}
		if k := parked[0]; len(parked) != 1 || k.Key != "bad" || k.Attempts != 4 || k.Unsent != 6 {
			t.Fatalf("parked keys %+v, want bad after 4 attempts with 6 events", parked)
		}
		if st := r.Stats(); st.Retries != 3 || st.Parked != 1 {
			t.Fatalf("stats %+v, want 3 retries then a park", st)
		}
		if _, err := checkOrder(log.all(), good); err != nil {
			t.Fatal(err)
		}
		fixed.Store(true)
		if err := s.RetryOutboxKey(ctx, entity, "bad"); err != nil {
			t.Fatal(err)
		}
		if err := log.waitFor(ctx, func(ds []delivery) bool { return len(ds) == 6*8 }); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if resent, err := checkOrder(log.all(), wantAll(ks, 8)); err != nil || resent != 0 {
			t.Fatalf("after the retry: %d re-sent, %v", resent, err)
		}
	})
}

// TestPermanentAndUndecodableParkAtOnce: a runtime.Permanent refusal and an
// event the codec cannot decode park their keys on the first attempt.
func TestPermanentAndUndecodableParkAtOnce(t *testing.T) {
	b := sqliteBackend(t)
	ctx := t.Context()
	s := b.handle(t)
	entity := entityName(t)
	writeAll(t, s, entity, []string{"ok", "perm"}, 2)
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendOutbox(ctx, tx, entity, "junk", func(uint64) (durable.RawEvent, error) { return durable.RawEvent{Name: "event", Data: []byte("{")}, nil }); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	log := newDeliveries()
	r := newRelay(t, s, entity, &recorder{log: log, refuse: func(_ context.Context, e event) error {
		if e.Key == "perm" {
			return runtime.Permanent(errors.New("topic authorization failed"))
		}
		return nil
	}})
	for range 3 {
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stopped, err := s.OutboxKeys(ctx, entity, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(stopped) != 2 || stopped[0].Parked.IsZero() || stopped[1].Parked.IsZero() || stopped[0].Attempts != 1 || stopped[1].Attempts != 1 {
		t.Fatalf("stopped keys %+v, want junk and perm parked after one attempt", stopped)
	}
	if got := perKey(log.all()); len(got["ok"]) != 2 || len(got) != 1 {
		t.Fatalf("delivered %v, want ok's two events only", got)
	}
}

// TestRelayLifecycle: Close before Run, Run after Close, Run twice, and a
// Close whose context ends while a send hangs.
func TestRelayLifecycle(t *testing.T) {
	b := sqliteBackend(t)
	s := b.handle(t)
	entity := entityName(t)
	r := newRelay(t, s, entity, &recorder{log: newDeliveries()})
	if err := r.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(t.Context()); !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
	if err := r.Close(t.Context()); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// A send that waits until its context ends: Close's context ends
	// first; the events sent before it in the round are marked, and the
	// one cut short is not counted against its key.
	writeAll(t, s, entity, []string{"a"}, 3)
	log := newDeliveries()
	hang := make(chan struct{})
	r = newRelay(t, s, entity, &recorder{log: log, refuse: func(ctx context.Context, e event) error {
		if e.Version == 3 {
			close(hang)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}}, func(c *outbox.Config[string, event]) { c.SendTimeout = time.Hour })
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	<-hang
	if err := r.Run(t.Context()); !errors.Is(err, runtime.ErrInvalidConfig) && !errors.Is(err, runtime.ErrClosed) {
		t.Fatalf("a second Run: %v", err)
	}
	expired, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Close(expired); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an expired context while a send hangs: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run after Close: %v", err)
	}
	events, err := s.OutboxEvents(t.Context(), entity, "a", 0, 0)
	if err != nil || len(events) != 1 || events[0].Version != 3 {
		t.Fatalf("unsent after the cut-short round: %+v, %v; want only v3", events, err)
	}
	if stopped, _ := s.OutboxKeys(t.Context(), entity, 0); len(stopped) != 0 {
		t.Fatalf("the cut-short send counted against its key: %+v", stopped)
	}
	if got := perKey(log.all())["a"]; fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("delivered %v, want [1 2]", got)
	}
}

// TestConfigErrors: a relay without its parts, or with values out of range,
// is refused with runtime.ErrInvalidConfig.
func TestConfigErrors(t *testing.T) {
	s := sqliteBackend(t).handle(t)
	ok := outbox.Config[string, event]{Store: s, Entity: "E", Codec: codec{}, Sink: &recorder{log: newDeliveries()}}
	for name, change := range map[string]func(*outbox.Config[string, event]){
		"no store":          func(c *outbox.Config[string, event]) { c.Store = nil },
		"no entity":         func(c *outbox.Config[string, event]) { c.Entity = "" },
		"no codec":          func(c *outbox.Config[string, event]) { c.Codec = nil },
		"no sink":           func(c *outbox.Config[string, event]) { c.Sink = nil },
		"batch too large":   func(c *outbox.Config[string, event]) { c.Batch = outbox.MaxBatch + 1 },
		"negative senders":  func(c *outbox.Config[string, event]) { c.Senders = -1 },
		"shrinking backoff": func(c *outbox.Config[string, event]) { c.Backoff.Multiplier = 0.5 },
	} {
		cfg := ok
		change(&cfg)
		if _, err := outbox.New(cfg); !errors.Is(err, runtime.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	type point struct{ X, Y int }
	if _, err := outbox.New(outbox.Config[point, event]{Store: s, Entity: "E", Codec: codec{}, Sink: outbox.PublisherSink[point, event](nil)}); err == nil {
		t.Error("a relay of struct keys was accepted")
	}
}

package transport_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// roomCore returns a core with MaxInFlight 1 over an engine whose handler
// does nothing; settle sees each settlement with the core.
func roomCore(t *testing.T, settle func(*transport.KeyIntake[string, ev, string], string, transport.Settlement)) *transport.KeyIntake[string, ev, string] {
	t.Helper()
	var core atomic.Pointer[transport.KeyIntake[string, ev, string]]
	c, _ := startCore(t, func(context.Context, string, ev) error { return nil }, transport.KeyConfig[ev, string]{
		MaxInFlight: 1,
		Settle:      func(id string, st transport.Settlement) { settle(core.Load(), id, st) },
		DeadLetter:  func(_ transport.Message[ev, string], done func(error)) { done(nil) },
	})
	core.Store(c)
	return c
}

// Room seen is room held: once one receiver has the last slot, another
// finds none, even before the first received its message. (Pub/Sub's
// callbacks of two keys each looked at Room, found the last slot and took
// a message: one over MaxInFlight, seen once in CI.)
func TestReserveHoldsTheRoomItGives(t *testing.T) {
	c := roomCore(t, func(*transport.KeyIntake[string, ev, string], string, transport.Settlement) {})
	if n := c.Reserve(context.Background(), nil, 5); n != 1 {
		t.Fatalf("Reserve gave %d slots with MaxInFlight 1, want 1", n)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if n := c.Reserve(ended, nil, 1); n != 0 {
		t.Fatalf("a second receiver got %d slots while the first held the only one", n)
	}
	c.Unreserve(1)
	if n := c.Reserve(ended, nil, 1); n != 1 {
		t.Fatalf("Reserve gave %d slots after the first was given back, want 1", n)
	}
}

// A message's room is free only once the broker was told it is settled:
// a message taken before would be one over MaxInFlight at the broker.
func TestRoomFreesAfterTheBrokerIsTold(t *testing.T) {
	room := make(chan int, 1)
	c := roomCore(t, func(c *transport.KeyIntake[string, ev, string], _ string, _ transport.Settlement) { room <- c.Room() })
	if c.Reserve(context.Background(), nil, 1) != 1 {
		t.Fatal("no room in an empty core")
	}
	if err := c.Receive(msg("m1", 1)); err != nil {
		t.Fatal(err)
	}
	if n := <-room; n != 0 {
		t.Errorf("Room was %d while the broker was told of the settlement, want 0", n)
	}
	if n := c.Reserve(context.Background(), nil, 1); n != 1 {
		t.Errorf("Reserve gave %d after the settlement, want 1", n)
	}
}

// Room that no settlement of the intake reports still lets a stashed key
// go on: here another publisher's event fills the key's room in the lanes,
// the intake's message waits in the stash, and that event finishes
// without any message settling. The sweep offers the stash again (before,
// only a settlement did, and the message waited for the next one).
func TestStashGoesOnWhenOtherPublishersMakeRoom(t *testing.T) {
	release, handled := make(chan struct{}), make(chan struct{})
	var core atomic.Pointer[transport.KeyIntake[string, ev, string]]
	e, err := runtime.New(func(_ context.Context, _ string, e ev) error {
		switch e.Seq {
		case 0:
			<-release // another publisher's event holds the key's room
		case 1:
			close(handled)
		}
		return nil
	}, runtime.Config[string, ev]{
		Backlog:   runtime.Backlog{PerKey: 1, WhenFull: runtime.Reject},
		OnOutcome: func(k string, tag uint64, o runtime.Outcome) { core.Load().OnOutcome(k, tag, o) },
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	offers := make(chan error, 100)
	c, err := startKeyIntake(offerWatch{transport.EngineTarget(e), offers}, transport.KeyConfig[ev, string]{
		System: "test", MaxInFlight: 4, EndTimeout: time.Second, SweepEvery: time.Millisecond,
		Settle:     func(string, transport.Settlement) {},
		DeadLetter: func(_ transport.Message[ev, string], done func(error)) { done(nil) },
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	core.Store(c)
	defer func() {
		_, _ = c.Shutdown(context.Background())
		_ = e.Close(context.Background())
	}()
	if err := e.Submit(context.Background(), "k", ev{"k", 0}); err != nil {
		t.Fatal(err)
	}
	if c.Reserve(context.Background(), nil, 1) != 1 {
		t.Fatal("no room in an empty intake")
	}
	if err := c.Receive(msg("m1", 1)); err != nil {
		t.Fatal(err)
	}
	// The message is refused, and refused again by the retry that its
	// refusal wakes (a settlement may have come in between); only then
	// does the other publisher's event finish.
	for range 2 {
		if err := <-offers; !errors.Is(err, runtime.ErrBacklogFull) {
			t.Fatalf("offered with the key's room full: %v, want a refusal", err)
		}
	}
	close(release)
	select {
	case <-handled:
	case <-time.After(30 * time.Second): // a liveness bound, not a speed one
		t.Fatal("the stashed message was never offered again after the other publisher's event finished")
	}
}

// offerWatch passes each offer's answer to offers (without blocking).
type offerWatch struct {
	transport.Target[ev]
	offers chan<- error
}

func (w offerWatch) SubmitTagged(ctx context.Context, e ev, tag uint64, from int) (int, error) {
	n, err := w.Target.SubmitTagged(ctx, e, tag, from)
	select {
	case w.offers <- err:
	default:
	}
	return n, err
}

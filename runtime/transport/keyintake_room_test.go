package transport_test

import (
	"context"
	"sync/atomic"
	"testing"

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

package kafka_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// An abrupt close of one consumer mid-stream, with events of its
// partitions in flight, and the rebalance that follows lose nothing: every
// produced event is applied, in order per key, and the version guard keeps
// re-delivered events from being applied twice.
func TestKillMidStreamLosesNothing(t *testing.T) {
	c := newCluster(t, 12, crashable)
	ks := keys(60)
	const perKey = 40
	b := newBook(len(ks) * perKey)
	var blockA atomic.Bool
	gate := make(chan struct{}) // never opened: A's blocked handlers end with the kill
	blocked := make(chan struct{}, 1)
	a := startMember(t, c, "g", memberOpts{cfg: shortSessions, handler: func(ctx context.Context, _ string, e ev) error {
		if blockA.Load() {
			select {
			case blocked <- struct{}{}:
			default:
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		b.apply("a", e)
		return nil
	}})
	produce(t, c, ks, 1, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m2 := startMember(t, c, "g", memberOpts{cfg: shortSessions, handler: b.handler("b")})
	if _, err := c.WaitGroupStable(ctx, "g", 2); err != nil {
		t.Fatal(err)
	}
	blockA.Store(true)
	produce(t, c, ks, 11, 25)
	select {
	case <-blocked:
	case <-ctx.Done():
		t.Fatal("the first consumer never got an event to block on")
	}
	inflight := a.c.Stats().InFlight
	a.kill(t)
	produce(t, c, ks, 26, perKey)
	b.Wait(t, 30*time.Second)
	m2.stop(t)

	applied, dups, skips, by := b.Snapshot()
	if len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
	if applied != len(ks)*perKey {
		t.Errorf("applied %d events, want %d", applied, len(ks)*perKey)
	}
	if inflight == 0 {
		t.Errorf("nothing was in flight in the killed consumer")
	}
	t.Logf("applied %d (a %d, b %d); %d in flight at the kill; %d re-delivered events skipped by the guard", applied, by["a"], by["b"], inflight, dups)
}

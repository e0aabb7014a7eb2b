package pubsub_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// An abrupt stop of one consumer mid-stream, with messages of its keys
// unsettled and a handler running, loses nothing and applies nothing
// backwards: every event is applied, in order per key, and the events
// delivered again are skipped by the version guard.
func TestKillMidStreamLosesNothing(t *testing.T) {
	f := newFake(t)
	ks := keys(20)
	const perKey = 20
	b := newBook(len(ks) * perKey)
	var blockA atomic.Bool
	gate := make(chan struct{}) // never opened: A's blocked handlers end with the kill
	blocked := make(chan struct{}, 1)
	a := f.start(t, memberOpts{handler: func(ctx context.Context, _ string, e ev) error {
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
	f.produce(t, ks, 1, 5)
	eventually(t, 30*time.Second, "the first consumer applies the first events", func() bool {
		applied, _, _, _ := b.snapshot()
		return applied == len(ks)*5
	})
	m2 := f.start(t, memberOpts{handler: b.handler("b")})
	blockA.Store(true)
	f.produce(t, ks, 6, 12)
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the first consumer never got an event to block on")
	}
	inflight := a.c.Stats().Unsettled
	a.kill(t)
	f.produce(t, ks, 13, perKey)
	select {
	case <-b.done:
	case <-time.After(20 * time.Second):
		applied, _, _, _ := b.snapshot()
		t.Fatalf("applied %d; b %+v", applied, m2.c.Stats())
	}
	m2.stop(t)

	applied, dups, skips, by := b.snapshot()
	if len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
	if applied != len(ks)*perKey {
		t.Errorf("applied %d events, want %d", applied, len(ks)*perKey)
	}
	if inflight == 0 {
		t.Errorf("nothing was in flight in the killed consumer")
	}
	t.Logf("applied %d (a %d, b %d); %d unsettled at the kill; %d re-delivered events skipped by the guard", applied, by["a"], by["b"], inflight, dups)
}

package pubsub_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
)

// A key parked in memory longer than MaxExtension goes back to Pub/Sub
// before the client stops extending its lease: the consumer withdraws it
// from the park, says so in a warning and its stats, and the message comes
// again. Fixed by then, it is applied, and the key's later events after
// it, in order.
func TestParkedKeyGoesBackAtMaxExtension(t *testing.T) {
	f := newFake(t)
	var fixed atomic.Bool
	logs := &logSink{}
	b := newBook(3)
	m := f.start(t, memberOpts{
		cfg: func(c *ps.Config[ev]) {
			c.MaxExtension = 2 * time.Second
			c.DrainTimeout = 500 * time.Millisecond
			c.Logger = slogTo(logs)
		},
		handler: func(_ context.Context, _ string, e ev) error {
			if !fixed.Load() {
				return runtime.Permanent(errors.New("broken until fixed"))
			}
			b.apply("m", e)
			return nil
		},
	})
	f.produce(t, []string{"k"}, 1, 3)
	eventually(t, 30*time.Second, "the parked key to go back to Pub/Sub", func() bool {
		return m.c.Stats().KeysGivenBack.MaxExtension > 0
	})
	if !logs.has("reached the end of their lease") {
		t.Errorf("no warning that the parked key went back: %q", logs.msgs)
	}
	fixed.Store(true)
	b.Wait(t, 30*time.Second)
	m.stop(t)
	if _, _, skips, _ := b.Snapshot(); len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
}

// A handler that outlives MaxExtension is cancelled before the lease ends
// and its message comes again; nothing of its key runs meanwhile, and the
// key's events are applied once each, in order.
func TestHandlerOutlivingMaxExtensionRunsAgain(t *testing.T) {
	f := newFake(t)
	var first atomic.Bool
	first.Store(true)
	b := newBook(3)
	var cancelled atomic.Int32
	m := f.start(t, memberOpts{
		cfg: func(c *ps.Config[ev]) {
			c.MaxExtension = 2 * time.Second
			c.DrainTimeout = 500 * time.Millisecond
		},
		handler: func(ctx context.Context, _ string, e ev) error {
			if e.Seq == 1 && first.CompareAndSwap(true, false) {
				<-ctx.Done() // longer than the lease: the consumer cancels it
				cancelled.Add(1)
				return ctx.Err()
			}
			b.apply("m", e)
			return nil
		},
	})
	f.produce(t, []string{"k"}, 1, 3)
	b.Wait(t, 30*time.Second)
	m.stop(t)
	if cancelled.Load() != 1 {
		t.Errorf("the slow handler was cancelled %d times, want once", cancelled.Load())
	}
	if _, dups, skips, _ := b.Snapshot(); len(skips) > 0 || dups > 0 {
		t.Errorf("skips %v, %d duplicates", skips, dups)
	}
}

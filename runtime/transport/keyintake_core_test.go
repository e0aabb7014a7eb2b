package transport_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// keySettlements records what the core settled, by message ID.
type keySettlements struct {
	mu  sync.Mutex
	got map[string]transport.Settlement
	ch  chan struct{}
}

func (s *keySettlements) settle(id string, st transport.Settlement) {
	s.mu.Lock()
	s.got[id] = st
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
}

func (s *keySettlements) wait(t *testing.T, id string) transport.Settlement {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		st, ok := s.got[id]
		s.mu.Unlock()
		if ok {
			return st
		}
		select {
		case <-s.ch:
		case <-deadline:
			t.Fatalf("message %s never settled", id)
		}
	}
}

// newCore returns a core over an engine whose handler is h, settling into
// s; deadLetter answers the dead-letter writes.
func newCore(t *testing.T, h runtime.Handler[string, ev], s *keySettlements, deadLetter error, fence bool) (*transport.KeyIntake[string, ev, string], *runtime.Engine[string, ev]) {
	t.Helper()
	return startCore(t, h, transport.KeyConfig[ev, string]{
		MaxInFlight: 16, Fence: fence, SweepEvery: 10 * time.Millisecond,
		Settle:     s.settle,
		DeadLetter: func(_ transport.Message[ev, string], done func(error)) { done(deadLetter) },
	})
}

// startCore returns a core with cfg (System, Logger and, unless set,
// EndTimeout filled in) over an engine whose handler is h; both stop when the test ends.
func startCore(t *testing.T, h runtime.Handler[string, ev], cfg transport.KeyConfig[ev, string]) (*transport.KeyIntake[string, ev, string], *runtime.Engine[string, ev]) {
	t.Helper()
	var core atomic.Pointer[transport.KeyIntake[string, ev, string]]
	e, err := runtime.New(h, runtime.Config[string, ev]{MaxActive: 4, Retry: runtime.Retry{Attempts: 1},
		OnOutcome: func(k string, tag uint64, o runtime.Outcome) { core.Load().OnOutcome(k, tag, o) }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.System, cfg.Logger = "test", slog.New(slog.DiscardHandler)
	if cfg.EndTimeout == 0 {
		cfg.EndTimeout = time.Second
	}
	c, err := startKeyIntake(transport.EngineTarget(e), cfg)
	if err != nil {
		t.Fatal(err)
	}
	core.Store(c)
	t.Cleanup(func() {
		_, _ = c.Shutdown(context.Background())
		_ = e.Close(context.Background())
	})
	return c, e
}

// startKeyIntake makes a key intake for cfg and starts it on target.
func startKeyIntake[M any](target transport.Target[ev], cfg transport.KeyConfig[ev, M]) (*transport.KeyIntake[string, ev, M], error) {
	c, err := transport.NewKeyIntake[string](cfg)
	if err != nil {
		return nil, err
	}
	return c, c.Start(target)
}

func msg(id string, seq int) transport.Message[ev, string] {
	return transport.Message[ev, string]{Key: "k", ID: id, Handle: id, Event: ev{"k", seq}}
}

// After a key's message is given back, its later messages already on their
// way are stale: they are given back too (the broker delivers them again
// after it), until the message given back comes again, which starts the
// key's next ownership. (Without the fence, the stress test applies a
// key's later events before the one given back.)
func TestFenceGivesBackStaleMessages(t *testing.T) {
	s := &keySettlements{got: map[string]transport.Settlement{}, ch: make(chan struct{}, 1)}
	var applied []int
	var mu sync.Mutex
	c, _ := newCore(t, func(_ context.Context, _ string, e ev) error {
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, e.Seq)
		return nil
	}, s, errors.New("dead letters are down"), true)
	bad := msg("m1", 1)
	bad.Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: errors.New("bad")}
	if err := c.Receive(bad); err != nil {
		t.Fatal(err)
	}
	if st := s.wait(t, "m1"); st != transport.Unfinished {
		t.Fatalf("m1 settled %v, want unfinished (its dead letter failed)", st)
	}
	// m2 was on its way before the nack: stale.
	for c.Stats().Ended.Unfinished == 0 {
		time.Sleep(time.Millisecond) // the ownership ends on a goroutine of its own
	}
	if err := c.Receive(msg("m2", 2)); err != nil {
		t.Fatal(err)
	}
	if st := s.wait(t, "m2"); st != transport.Unfinished {
		t.Fatalf("stale m2 settled %v, want unfinished", st)
	}
	// m1 comes again (fixed: a good event now), then m2.
	s.mu.Lock()
	s.got = map[string]transport.Settlement{}
	s.mu.Unlock()
	if err := c.Receive(msg("m1", 1)); err != nil {
		t.Fatal(err)
	}
	if err := c.Receive(msg("m2", 2)); err != nil {
		t.Fatal(err)
	}
	if s.wait(t, "m1") != transport.Finished || s.wait(t, "m2") != transport.Finished {
		t.Fatalf("the redelivered messages settled %v", s.got)
	}
	if st := c.Stats(); st.Fenced != 1 {
		t.Errorf("Fenced = %d, want 1", st.Fenced)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(applied) != 2 || applied[0] != 1 || applied[1] != 2 {
		t.Errorf("applied %v, want [1 2]", applied)
	}
}

// A message whose lease nears its end is withdrawn from its park and given
// back with its key; messages received after the shutdown are given back
// at once.
func TestLeaseEndGivesParkedKeyBack(t *testing.T) {
	s := &keySettlements{got: map[string]transport.Settlement{}, ch: make(chan struct{}, 1)}
	c, e := newCore(t, func(context.Context, string, ev) error { return runtime.Permanent(errors.New("broken")) }, s, nil, false)
	m := msg("m1", 1)
	m.Lease = time.Now().Add(1500 * time.Millisecond)
	if err := c.Receive(m); err != nil {
		t.Fatal(err)
	}
	if st := s.wait(t, "m1"); st != transport.Unfinished {
		t.Fatalf("m1 settled %v, want unfinished", st)
	}
	for c.Stats().Ended.Lease == 0 {
		time.Sleep(time.Millisecond) // the ownership ends on a goroutine of its own
	}
	if st := c.Stats(); st.Ended.Lease != 1 || st.Unsettled != 0 || st.Keys != 0 {
		t.Errorf("stats %+v: want one ownership ended by its lease and nothing held", st)
	}
	if keys, _ := e.ParkedKeys(context.Background()); len(keys) != 0 {
		t.Errorf("parked keys %v after the key went back", keys)
	}
	if _, err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Receive(msg("m2", 2)); err != nil {
		t.Fatal(err)
	}
	if st := s.wait(t, "m2"); st != transport.Unfinished {
		t.Errorf("a message after Shutdown settled %v, want unfinished", st)
	}
}

// A lease lost (refused) or lapsing ends the key's ownership at once: the
// running handler is cancelled without the drain of EndTimeout, with the
// transport's cause, and the key's messages go back to the broker; the
// core counts each reason apart.
func TestLeaseLostCancelsAtOnceWithItsCause(t *testing.T) {
	for _, lapsed := range []bool{false, true} {
		s := &keySettlements{got: map[string]transport.Settlement{}, ch: make(chan struct{}, 1)}
		started := make(chan struct{}, 1)
		causes := make(chan error, 1)
		var c *transport.KeyIntake[string, ev, string]
		c, _ = startCore(t, func(ctx context.Context, _ string, _ ev) error {
			started <- struct{}{}
			select {
			case <-ctx.Done():
			case <-t.Context().Done(): // the test failed: let its cleanup end
			}
			causes <- context.Cause(ctx)
			return ctx.Err()
		}, transport.KeyConfig[ev, string]{
			// Only a cancellation at once ends the handler within the test.
			EndTimeout:  time.Hour,
			MaxInFlight: 16, SweepEvery: 10 * time.Millisecond, Settle: s.settle,
			DeadLetter: func(_ transport.Message[ev, string], done func(error)) { done(nil) },
		})
		if err := c.Receive(msg("m1", 1)); err != nil {
			t.Fatal(err)
		}
		if err := c.Receive(msg("m2", 2)); err != nil {
			t.Fatal(err)
		}
		<-started
		lost := errors.New("the broker took m1 back")
		cause := error(nil)
		if lapsed {
			c.LeaseLapsed("k", "m1", lost)
		} else {
			c.LeaseLost("k", "m1", lost)
		}
		select {
		case cause = <-causes:
		case <-time.After(10 * time.Second):
			t.Fatal("the handler was not cancelled")
		}
		if cause != lost {
			t.Errorf("the handler's cause is %v, want %v", cause, lost)
		}
		for _, id := range []string{"m1", "m2"} {
			if st := s.wait(t, id); st != transport.Unfinished {
				t.Errorf("%s settled %v, want unfinished", id, st)
			}
		}
		for c.Stats().Keys != 0 {
			time.Sleep(time.Millisecond) // the ownership ends on a goroutine of its own
		}
		ended := c.Stats().Ended
		if want := (transport.KeyEnded{LeaseLost: 1}); lapsed {
			if want = (transport.KeyEnded{LeaseLapsed: 1}); ended != want {
				t.Errorf("lapsed: ended %+v, want %+v", ended, want)
			}
		} else if ended != want {
			t.Errorf("lost: ended %+v, want %+v", ended, want)
		}
	}
}

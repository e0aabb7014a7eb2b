package transporttest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// The cases of faults at the broker's edge: a consumer or a producer whose
// connections to the broker a netfault.Net cuts (resets them and refuses
// new ones) or stalls (holds every byte, connections open).

// fault is one way a network fails.
type fault struct {
	name  string
	apply func(*netfault.Net)
}

var faults = []fault{{"Cut", (*netfault.Net).Cut}, {"Stall", (*netfault.Net).Stall}}

// closeDeadline is the deadline of a Close while cut off.
const closeDeadline = 3 * time.Second

// net returns a Net that closes when the test ends.
func (s *suite) net(t *testing.T) *netfault.Net {
	n := netfault.New()
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// skipNetwork skips t when the broker is not reached over a network.
func (s *suite) skipNetwork(t *testing.T) {
	if s.h.Limits.NoNetwork {
		t.Skip("the broker is reached without a network connection to cut (Limits.NoNetwork)")
	}
}

// leaseLostWhileCutOff: a consumer is cut off from the broker (its
// connections reset, or stalled) while a handler outlives the lease. It
// cannot extend the lease and must not trust one the broker did not
// confirm: its handler is cancelled, with a cause wrapping
// transport.ErrLeaseLost, before the broker gives the message to another
// consumer, so that no handler of the key begins while one runs with a
// live context. The other consumer then applies the key's events in order.
func (s *suite) leaseLostWhileCutOff(t *testing.T) {
	switch {
	case s.h.Limits.NoLeases:
		t.Skip("the broker has no leases (Limits.NoLeases): nothing to lose")
	case s.h.Limits.UnconfirmedLeases:
		t.Skip("the broker's client does not tell whether a lease was extended (Limits.UnconfirmedLeases): a consumer cut off cannot know that it lapsed")
	}
	s.skipNetwork(t)
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			st := s.stream(t, 1)
			b := newBook()
			n := s.net(t)
			slow := Event{Key: "slow", Seq: 1}
			started := make(chan struct{})
			causes := make(chan error, 1)
			var once sync.Once
			handle := func(ctx context.Context, m *member, e Event) error {
				defer b.begin(ctx, e)()
				if e == slow && m.name == "a" {
					once.Do(func() { close(started) })
					select {
					case <-ctx.Done():
					case <-t.Context().Done(): // never cancelled: the test failed
					}
					b.sawCancel()
					causes <- context.Cause(ctx)
					return ctx.Err()
				}
				if m.dead.Load() {
					return errKilled
				}
				b.apply(m.name, e)
				return nil
			}
			a := s.start(t, st, b, memberSpec{name: "a", handle: handle, net: n})
			p := s.publisher(t, st)
			p.publish(t, []string{"slow"}, 1, 3)
			s.await(t, started, "the slow handler to start")
			f.apply(n)
			bm := s.start(t, st, b, memberSpec{name: "b", handle: handle})
			b.wait(t, 3, s.timeout+3*s.h.Lease, "the key's events, by the other consumer")
			var cause error
			select {
			case cause = <-causes:
			case <-time.After(s.timeout):
				t.Fatalf("the handler cut off from the broker was not cancelled within %v", s.timeout)
			}
			n.Resume()
			a.close(t, s.timeout)
			bm.close(t, s.timeout)
			res := b.check(t, 3, -1)
			if len(res.unfenced) > 0 {
				t.Errorf("a handler of the key began while the cut-off one ran with a live context (its lease was not given up in time): %v", first(res.unfenced))
			}
			if !errors.Is(cause, transport.ErrLeaseLost) {
				t.Errorf("the cut-off handler's context.Cause is %v, want an error wrapping transport.ErrLeaseLost", cause)
			}
			t.Logf("cause: %v; applied by consumer %v", cause, res.byMember)
		})
	}
}

// stopWhileCutOff: a consumer is cut off from the broker while a handler
// runs and more messages wait, then stopped: Close with a deadline, or the
// end of Run's context (as a crash). Close returns by its deadline and Run
// returns too while the network is still down: neither waits for a broker
// it cannot reach. What the consumer held comes again, from the broker, to
// the next consumer: every event applied, each key's in order.
func (s *suite) stopWhileCutOff(t *testing.T) {
	s.skipNetwork(t)
	for _, f := range faults {
		for _, stop := range []string{"Close", "RunContext"} {
			t.Run(f.name+"/"+stop, func(t *testing.T) { s.stopCutOff(t, f, stop) })
		}
	}
}

func (s *suite) stopCutOff(t *testing.T, f fault, stop string) {
	st := s.stream(t, 2)
	b := newBook()
	n := s.net(t)
	ks := keys("k", s.n(8, 2))
	slow := Event{Key: ks[0], Seq: 1}
	started := make(chan struct{})
	var once sync.Once
	a := s.start(t, st, b, memberSpec{name: "a", net: n, handle: func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		if e == slow && m.name == "a" {
			once.Do(func() { close(started) })
			select {
			case <-ctx.Done(): // the consumer gives up on it
			case <-t.Context().Done():
			}
			return ctx.Err()
		}
		if m.dead.Load() {
			return errKilled
		}
		b.apply(m.name, e)
		return nil
	}})
	p := s.publisher(t, st)
	p.publish(t, ks, 1, 3)
	s.await(t, started, "the slow handler to start")
	held, _, _, _ := a.target.counts()
	f.apply(n)
	begun := time.Now()
	switch stop {
	case "Close":
		a.ended.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), closeDeadline)
		defer cancel()
		closed := make(chan error, 1)
		go func() { closed <- a.c.Close(ctx) }()
		select {
		case err := <-closed:
			t.Logf("Close with a deadline of %v returned %v after %v", closeDeadline, err, time.Since(begun).Round(time.Millisecond))
		case <-time.After(closeDeadline + s.timeout):
			t.Fatalf("Close did not return within %v of its deadline while the network was %s", s.timeout, f.name)
		}
		select {
		case <-a.runDone:
			t.Logf("Run returned %v after %v, the network still %s", a.runErr, time.Since(begun).Round(time.Millisecond), f.name)
		case <-time.After(s.timeout):
			t.Fatalf("Run did not return within %v of Close while the network was %s", s.timeout, f.name)
		}
		if err := a.engine.Close(ctx); err != nil {
			t.Logf("engine Close: %v", err)
		}
	case "RunContext":
		a.kill(t, s.timeout) // fails t unless Run returns, with the network down
		t.Logf("Run returned %v after %v, the network still %s", a.runErr, time.Since(begun).Round(time.Millisecond), f.name)
	}
	// The stalled connections die too, as the keepalives of both ends
	// would end them: the broker then gives their messages to others.
	n.Cut()
	if held == 0 {
		t.Errorf("the consumer held no event when it was cut off: the case tried nothing")
	}
	bm := s.start(t, st, b, memberSpec{name: "b"})
	b.wait(t, 3*len(ks), s.timeout, "every event, by the next consumer")
	bm.close(t, s.timeout)
	res := b.check(t, 3*len(ks), -1)
	t.Logf("%d events held when cut off; applied by consumer %v, %d delivered again", held, res.byMember, res.dups)
}

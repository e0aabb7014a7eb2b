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
	state string // what the network is then, for messages
	apply func(*netfault.Net)
}

var faults = []fault{{"Cut", "cut", (*netfault.Net).Cut}, {"Stall", "stalled", (*netfault.Net).Stall}}

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
			s.parallel(t)
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
			t.Run(f.name+"/"+stop, func(t *testing.T) {
				s.parallel(t)
				s.stopCutOff(t, f, stop)
			})
		}
	}
	t.Run("StalledAtStart/Close", func(t *testing.T) {
		s.parallel(t)
		s.closeStalledAtStart(t)
	})
}

// closeStalledAtStart: a consumer whose network stalls before it reached
// the broker (its first calls, the handshake, get no answer) is closed:
// Close and Run return while the network is still stalled, and the next
// consumer gets every event.
func (s *suite) closeStalledAtStart(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	n := s.net(t)
	ks := keys("k", s.n(4, 2))
	p := s.publisher(t, st)
	p.publish(t, ks, 1, 2)
	n.Stall()
	a := s.start(t, st, b, memberSpec{name: "a", net: n})
	// The consumer is under way: it has tried to reach the broker.
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := n.Await(ctx, func(st netfault.Stats) bool { return st.Held > 0 }); err != nil {
		t.Fatalf("the consumer never tried to reach the broker: %v", err)
	}
	s.closeCutOff(t, a, "stalled")
	n.Cut()
	bm := s.start(t, st, b, memberSpec{name: "b"})
	b.wait(t, 2*len(ks), s.timeout, "every event, by the next consumer")
	bm.close(t, s.timeout)
	b.check(t, 2*len(ks), -1)
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
	// The handler may start before the submit that counts it returns.
	s.await(t, a.target.holding(1), "the consumer to count the slow event as held")
	held, _, _, _ := a.target.counts()
	f.apply(n)
	switch stop {
	case "Close":
		s.closeCutOff(t, a, f.state)
	case "RunContext":
		s.endCutOff(t, a, f.state)
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

// closeCutOff closes a, cut off from the broker, with a deadline of
// closeDeadline, and fails t unless Close returns by then and Run returns
// no later than as much again after it (what a stopping consumer does
// once its deadline passed must not wait for the broker); the network
// stays as it is.
func (s *suite) closeCutOff(t *testing.T, a *member, network string) {
	t.Helper()
	a.ended.Store(true)
	begun := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), closeDeadline)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- a.c.Close(ctx) }()
	select {
	case err := <-closed:
		t.Logf("Close with a deadline of %v returned %v after %v", closeDeadline, err, time.Since(begun).Round(time.Millisecond))
	case <-time.After(closeDeadline + s.timeout):
		t.Fatalf("Close with a deadline of %v did not return within %v of it, the network still %s", closeDeadline, s.timeout, network)
	}
	s.awaitRun(t, a, begun, 2*closeDeadline, network)
	if err := a.engine.Close(transport.DoneContext()); err != nil {
		t.Logf("engine Close: %v", err)
	}
}

// endCutOff ends the context of a's Run, a being cut off from the broker,
// and fails t unless Run returns at once (within closeDeadline); then it
// closes a's engine. Its handlers apply nothing more: the process is gone.
func (s *suite) endCutOff(t *testing.T, a *member, network string) {
	t.Helper()
	a.ended.Store(true)
	a.dead.Store(true)
	begun := time.Now()
	a.c.Kill()
	s.awaitRun(t, a, begun, closeDeadline, network)
	_ = a.engine.Close(transport.DoneContext())
}

// awaitRun waits for a's Run to return, and fails t when that takes longer
// than bound from begun (or never happens within the suite's timeout).
func (s *suite) awaitRun(t *testing.T, a *member, begun time.Time, bound time.Duration, network string) {
	t.Helper()
	select {
	case <-a.runDone:
	case <-time.After(bound + s.timeout):
		t.Fatalf("Run did not return within %v of the stop, the network still %s", bound+s.timeout, network)
	}
	took := time.Since(begun)
	t.Logf("Run returned %v after %v, the network still %s", a.runErr, took.Round(time.Millisecond), network)
	if took > bound {
		t.Errorf("Run returned %v after the stop, later than %v: it waited for a broker it cannot reach", took.Round(time.Millisecond), bound)
	}
}

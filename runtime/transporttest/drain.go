package transporttest

import (
	"context"
	"sync/atomic"
	"testing"
)

// gracefulDrain: Close lets the handlers running finish (it does not
// cancel them), settles what finished and gives back what had not started.
// The next consumer gets exactly what the first did not finish: every
// event is applied once, in order.
func (s *suite) gracefulDrain(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	gate := make(chan struct{})
	started := make(chan struct{})
	var once atomic.Bool
	a := s.start(t, st, b, memberSpec{name: "a", handle: func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		if once.CompareAndSwap(false, true) {
			close(started)
		}
		<-gate
		if ctx.Err() != nil {
			b.sawCancel() // applied anyway: the check counts it
		}
		b.apply(m.name, e)
		return nil
	}})
	p := s.publisher(t, st)
	ks := keys("k", s.n(20, 4))
	perKey := s.n(10, 2)
	p.publish(t, ks, 1, perKey)
	s.await(t, started, "a handler to start")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		a.close(t, s.timeout)
	}()
	// Close gives back what has not started (Withdraw) before it waits
	// for the running handlers.
	select {
	case <-a.target.withdrawn:
	case <-closed:
		t.Errorf("Close returned while handlers were running")
	}
	close(gate)
	<-closed
	res := b.state()
	if res.applied == 0 {
		t.Fatalf("the running handlers applied nothing")
	}
	bm := s.start(t, st, b, memberSpec{name: "b"})
	p.publish(t, ks, perKey+1, perKey+1)
	b.wait(t, len(ks)*(perKey+1), s.timeout, "every event, by the next consumer")
	bm.close(t, s.timeout)
	end := b.check(t, len(ks)*(perKey+1), s.afterClose())
	if end.cancelled > 0 {
		t.Errorf("Close cancelled %d running handlers", end.cancelled)
	}
	t.Logf("the first consumer finished %d events while closing; the next one %d", end.byMember["a"], end.byMember["b"])
}

package transporttest

import (
	"context"
	"sync/atomic"
	"testing"
)

// killMidStream: a consumer is killed while its handlers run and more of
// its events wait; the others take over. Nothing is lost (every event is
// applied) and nothing is applied backwards (each key's events in order):
// what the killed consumer had not settled is delivered again, and the
// version guard skips what it had applied.
func (s *suite) killMidStream(t *testing.T) {
	st := s.stream(t, 4)
	b := newBook()
	ks := keys("k", s.n(40, 4))
	perKey := s.n(30, 6)
	var blockA atomic.Bool
	blocked := make(chan struct{})
	var once atomic.Bool
	a := s.start(t, st, b, memberSpec{name: "a", handle: func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		if blockA.Load() {
			if once.CompareAndSwap(false, true) {
				close(blocked)
			}
			<-ctx.Done() // until the kill cancels it
			b.sawCancel()
			return ctx.Err()
		}
		if m.dead.Load() {
			return errKilled
		}
		b.apply(m.name, e)
		return nil
	}})
	p := s.publisher(t, st)
	third := perKey / 3
	p.publish(t, ks, 1, third)
	b.wait(t, len(ks)*third, s.timeout, "the first third, all by the first consumer")
	bm := s.start(t, st, b, memberSpec{name: "b"})
	blockA.Store(true)
	p.publish(t, ks, third+1, 2*third)
	s.await(t, blocked, "a handler of the first consumer to run in the second third")
	// The handler may start before the submit that counts it returns.
	s.await(t, a.target.holding(1), "the first consumer to count its running event as held")
	held, _, _, _ := a.target.counts()
	a.kill(t, s.timeout)
	p.publish(t, ks, 2*third+1, perKey)
	b.wait(t, len(ks)*perKey, s.timeout, "every event, after the kill")
	bm.close(t, s.timeout)
	res := b.check(t, len(ks)*perKey, -1)
	if held == 0 {
		t.Errorf("the killed consumer held no event when it was killed")
	}
	t.Logf("applied %d (by consumer %v); %d events held by the killed consumer; %d delivered again and skipped by the guard",
		res.applied, res.byMember, held, res.dups)
}

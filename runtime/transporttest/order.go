package transporttest

import (
	"context"
	"runtime"
	"testing"
)

// perKeyOrder: several consumers share a stream while events are
// published; one joins midway and one leaves cleanly (a rebalance, or a
// single active consumer's failover). Every event is applied, each key's
// in order, and never two handlers of one key at once, across consumers.
func (s *suite) perKeyOrder(t *testing.T) {
	st := s.stream(t, 4)
	b := newBook()
	ks := keys("k", s.n(40, 4))
	perKey := s.n(24, 4)
	handle := func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		runtime.Gosched() // let another handler of the key, if any, overlap
		if m.dead.Load() {
			return errKilled
		}
		b.apply(m.name, e)
		return nil
	}
	ms := []*member{
		s.start(t, st, b, memberSpec{name: "a", handle: handle}),
		s.start(t, st, b, memberSpec{name: "b", handle: handle}),
		s.start(t, st, b, memberSpec{name: "c", handle: handle}),
	}
	p := s.publisher(t, st)
	third := perKey / 3
	p.publish(t, ks, 1, third)
	ms = append(ms, s.start(t, st, b, memberSpec{name: "d", handle: handle}))
	p.publish(t, ks, third+1, 2*third)
	b.wait(t, len(ks)*third, s.timeout, "the first third")
	ms[0].close(t, s.timeout)
	p.publish(t, ks, 2*third+1, perKey)
	b.wait(t, len(ks)*perKey, s.timeout, "every event")
	for _, m := range ms[1:] {
		m.close(t, s.timeout)
	}
	st2 := b.check(t, len(ks)*perKey, -1)
	t.Logf("applied %d events of %d keys; by consumer %v; %d delivered again", st2.applied, len(ks), st2.byMember, st2.dups)
}

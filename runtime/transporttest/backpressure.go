package transporttest

import (
	"context"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// quiet is how long boundedIntake gives a consumer at its bound the chance
// to take more than it may. A correct transport passes however long it is;
// a wrong one is caught unless it is slower than this to overstep.
const quiet = 300 * time.Millisecond

// boundedIntake: with every handler blocked, a consumer takes no more
// messages than ConsumerOptions.MaxInFlight, however many wait on the
// broker; once the handlers go on it takes the rest, in order.
func (s *suite) boundedIntake(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	const bound = 8
	gate := make(chan struct{})
	a := s.start(t, st, b, memberSpec{name: "a", maxInFlight: bound, handle: func(ctx context.Context, m *member, e Event) error {
		select {
		case <-gate:
		case <-ctx.Done():
			b.sawCancel()
			return ctx.Err()
		}
		defer b.begin(ctx, e)()
		b.apply(m.name, e)
		return nil
	}})
	p := s.publisher(t, st)
	ks := keys("k", s.n(20, 4))
	perKey := s.n(10, 2)
	p.publish(t, ks, 1, perKey)
	s.await(t, a.target.holding(bound), "the consumer to take MaxInFlight messages")
	time.Sleep(quiet) // the chance to overstep (see quiet)
	_, atBound, _, _ := a.target.counts()
	close(gate)
	b.wait(t, len(ks)*perKey, s.timeout, "every event after the handlers went on")
	_, most, _, _ := a.target.counts()
	a.close(t, s.timeout)
	b.check(t, len(ks)*perKey, -1)
	if atBound > bound || most > bound {
		t.Errorf("the consumer held %d messages with its handlers blocked and %d at most, over MaxInFlight %d", atBound, most, bound)
	}
}

// fullLanes: when the lanes refuse messages for lack of room (the
// backlog's bound), the consumer holds them back and offers them again as
// room comes: none is lost or reordered.
func (s *suite) fullLanes(t *testing.T) {
	st := s.stream(t, 2)
	b := newBook()
	gate := make(chan struct{})
	a := s.start(t, st, b, memberSpec{
		name: "a",
		handle: func(ctx context.Context, m *member, e Event) error {
			select {
			case <-gate:
			case <-ctx.Done():
				b.sawCancel()
				return ctx.Err()
			}
			defer b.begin(ctx, e)()
			b.apply(m.name, e)
			return nil
		},
		engine: func(rc *runtime.Config[string, Event]) {
			rc.MaxActive = 2
			rc.Backlog = runtime.Backlog{PerKey: 2, Total: 4, WhenFull: runtime.Reject}
		},
	})
	p := s.publisher(t, st)
	ks := keys("k", s.n(5, 2))
	perKey := s.n(20, 4)
	p.publish(t, ks, 1, perKey)
	s.await(t, a.target.refusal, "the lanes to refuse a message for lack of room")
	close(gate)
	b.wait(t, len(ks)*perKey, s.timeout, "every event after the lanes made room")
	_, _, refused, _ := a.target.counts()
	a.close(t, s.timeout)
	b.check(t, len(ks)*perKey, -1)
	t.Logf("%d refusals for lack of room", refused)
}

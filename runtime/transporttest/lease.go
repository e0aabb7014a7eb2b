package transporttest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// leaseExtended: a handler runs for three of the broker's leases while
// another consumer stands by. The consumer extends the lease, so the
// broker never delivers the message again meanwhile: its handler runs once,
// and the key's next events follow in order.
func (s *suite) leaseExtended(t *testing.T) {
	if s.h.Limits.NoLeases {
		t.Skip("the broker has no leases (Limits.NoLeases): nothing to extend")
	}
	st := s.stream(t, 1)
	b := newBook()
	slow := Event{Key: "slow", Seq: 1}
	var mu sync.Mutex
	deliveries := 0
	started := make(chan struct{})
	handle := func(ctx context.Context, m *member, e Event) error {
		defer b.begin(ctx, e)()
		if e == slow {
			mu.Lock()
			deliveries++
			first := deliveries == 1
			mu.Unlock()
			if first {
				close(started)
				// The scenario itself, not a synchronisation: a handler
				// that outlives the lease three times.
				select {
				case <-time.After(3 * s.h.Lease):
				case <-ctx.Done():
					b.sawCancel()
					return ctx.Err()
				}
			}
		}
		if m.dead.Load() {
			return errKilled
		}
		b.apply(m.name, e)
		return nil
	}
	a := s.start(t, st, b, memberSpec{name: "a", handle: handle})
	p := s.publisher(t, st)
	p.publish(t, []string{"slow"}, 1, 3)
	s.await(t, started, "the slow handler to start")
	bm := s.start(t, st, b, memberSpec{name: "b", handle: handle})
	fast := keys("f", s.n(10, 2))
	p.publish(t, fast, 1, 3)
	b.wait(t, 3+3*len(fast), s.timeout+3*s.h.Lease, "every event")
	a.close(t, s.timeout)
	bm.close(t, s.timeout)
	res := b.check(t, 3+3*len(fast), -1)
	mu.Lock()
	defer mu.Unlock()
	if deliveries != 1 {
		t.Errorf("the slow message was handled %d times, want once: its lease lapsed while its handler ran", deliveries)
	}
	if res.cancelled > 0 {
		t.Errorf("%d handlers were cancelled", res.cancelled)
	}
}

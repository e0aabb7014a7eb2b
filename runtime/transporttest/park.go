package transporttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// durablePark: with a park store, a parked message is settled once it is
// in the store. The parked key's messages do not hold the consumer's
// intake (its MaxInFlight is below their number), a restart does not get
// them again, and a replay from the store applies them in order.
func (s *suite) durablePark(t *testing.T) {
	st := s.stream(t, 1)
	b := newBook()
	// A durable store keeps no tags (an earlier process's tags mean
	// nothing to the next one): the encoded adapter over raw events.
	parks := durable.EncodedParks[string, Event](runtime.NewMemoryParkStore[string, durable.RawEvent](), Codec{})
	var fixed atomic.Bool
	spec := func(name string) memberSpec {
		return memberSpec{
			name:        name,
			maxInFlight: 4,
			handle: func(ctx context.Context, m *member, e Event) error {
				defer b.begin(ctx, e)()
				if e.Key == "bad" && !fixed.Load() {
					return runtime.Permanent(errors.New("broken until fixed"))
				}
				b.apply(m.name, e)
				return nil
			},
			engine: func(rc *runtime.Config[string, Event]) { rc.Parks = parks },
		}
	}
	a := s.start(t, st, b, spec("a"))
	p := s.publisher(t, st)
	ks := append([]string{"bad"}, keys("k", s.n(10, 2))...)
	perKey := s.n(10, 5)
	p.events(t, []string{"all"}, func(string) []Event { return interleave(ks, 1, perKey) })
	good := (len(ks) - 1) * perKey
	b.wait(t, good, s.timeout, "every event of the good keys, past the parked ones")
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := a.engine.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A broker that holds a key's later messages back (OneInFlightPerKey)
	// delivers the parked key's next one only after the previous one was
	// settled: the park may still be filling when the good keys are done.
	var parked int
	s.eventually(t, fmt.Sprintf("the park store to hold the %d events of bad", perKey), func() bool {
		evs, err := parks.Read(ctx, "bad", 0, 10*perKey)
		if err != nil {
			t.Fatal(err)
		}
		parked = len(evs)
		return parked >= perKey
	})
	if parked != perKey {
		t.Fatalf("the park store holds %d events of bad, want %d", parked, perKey)
	}
	a.close(t, s.timeout)

	// The next process: the parked messages were settled, so it gets only
	// what is published now; the replay applies the park in order.
	fixed.Store(true)
	bm := s.start(t, st, b, spec("b"))
	p.publish(t, ks, perKey+1, perKey+1)
	b.wait(t, good+len(ks)-1, s.timeout, "the good keys' events published after the restart")
	if err := bm.engine.Replay(ctx, "bad"); err != nil {
		t.Fatalf("replay: %v", err)
	}
	b.wait(t, len(ks)*(perKey+1), s.timeout, "the parked key's events after the replay")
	bm.close(t, s.timeout)
	b.check(t, len(ks)*(perKey+1), s.afterClose())
}

// memoryPark: with the in-memory park, a parked message stays unsettled
// and holds the consumer's intake (MaxInFlight); once the parked messages
// block the unit of order for other keys, the consumer says so in its
// metrics (Harness.ParkBlocked) and logs (a record at Warn or above).
// Resolving the park (a replay) settles them and resumes the consumer:
// every event is applied, in order, and a restart gets nothing again.
func (s *suite) memoryPark(t *testing.T) {
	st := s.stream(t, 1)
	b := newBook()
	var fixed atomic.Bool
	const maxInFlight = 16
	// The failing keys: one, whose later messages fill the intake; or, on a
	// broker that holds a key's later messages back, as many as the intake.
	badKeys := []string{"bad"}
	if s.h.Limits.OneInFlightPerKey {
		badKeys = keys("bad", maxInFlight)
	}
	isBad := func(k string) bool { return strings.HasPrefix(k, "bad") }
	spec := func(name string) memberSpec {
		return memberSpec{
			name:        name,
			maxInFlight: maxInFlight,
			handle: func(ctx context.Context, m *member, e Event) error {
				defer b.begin(ctx, e)()
				if isBad(e.Key) && !fixed.Load() {
					return runtime.Permanent(errors.New("broken until fixed"))
				}
				b.apply(m.name, e)
				return nil
			},
		}
	}
	a := s.start(t, st, b, spec("a"))
	p := s.publisher(t, st)
	// One event in ten is of key bad; the others are of keys of their own.
	total := s.n(400, 200)
	// With several failing keys, their first events are kept apart (see
	// below).
	var evs, firsts []Event
	var ks []string
	bad := 0
	badSeq := map[string]int{}
	for i := range total {
		if i%10 == 0 {
			k := badKeys[bad%len(badKeys)]
			bad++
			badSeq[k]++
			if len(badKeys) > 1 && badSeq[k] == 1 {
				firsts = append(firsts, Event{k, 1})
				continue
			}
			evs = append(evs, Event{k, badSeq[k]})
			continue
		}
		k := fmt.Sprintf("k%04d", i)
		ks = append(ks, k)
		evs = append(evs, Event{k, 1})
	}
	if len(badKeys) > 1 {
		// The failing keys' first events go first, and the rest once they
		// all parked: such a broker delivers different keys' messages in
		// any order, and with the failing keys' first messages among the
		// others every good event could be applied before the last failing
		// key parks (it happened on a loaded machine). Parked first, they
		// block the consumer with every good event still to come. Each
		// key's own order is kept.
		p.events(t, []string{"firsts"}, func(string) []Event { return firsts })
		s.eventually(t, "every failing key to park", func() bool {
			parked, err := a.engine.ParkedKeys(context.Background())
			return err == nil && len(parked) == len(badKeys)
		})
	}
	p.events(t, []string{"all"}, func(string) []Event { return evs })

	// Wait for the consumer to say that it is blocked, in its logs and
	// its metrics, once every event it took has its outcome.
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	for n := 1; ; n++ {
		s.await(t, a.logs.warned(n), "the consumer to log (Warn or above) that parked messages block it")
		if err := a.engine.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if s.h.ParkBlocked(a.metrics.Collect()) {
			break
		}
	}
	held, _, _, _ := a.target.counts()
	blockedAt := b.state().applied
	if blockedAt >= total-bad {
		t.Fatalf("every good event was applied (%d) although parked messages were to block the consumer", blockedAt)
	}

	fixed.Store(true)
	// With several failing keys, some may not have parked when the
	// consumer blocked; one failing as the fix went out parks after it.
	replayed := map[string]bool{}
	s.eventually(t, "every failing key parked to be replayed", func() bool {
		for _, k := range badKeys {
			if replayed[k] {
				continue
			}
			err := a.engine.Replay(ctx, k)
			switch {
			case err == nil:
				replayed[k] = true
			case errors.Is(err, runtime.ErrNotParked) && len(badKeys) > 1:
			default:
				t.Fatalf("replay of %s: %v", k, err)
			}
		}
		return b.state().applied == total || len(replayed) == len(badKeys)
	})
	b.wait(t, total, s.timeout, "every event after the replay")
	s.eventually(t, "the metrics to say the consumer is no longer blocked", func() bool {
		return !s.h.ParkBlocked(a.metrics.Collect())
	})
	a.close(t, s.timeout)

	bm := s.start(t, st, b, spec("b"))
	// Each key's next event: one delivered again would come before it.
	p.events(t, append(append([]string(nil), badKeys...), ks...), func(k string) []Event {
		if isBad(k) {
			return []Event{{k, badSeq[k] + 1}}
		}
		return []Event{{k, 2}}
	})
	b.wait(t, total+len(badKeys)+len(ks), s.timeout, "the events published after the restart")
	bm.close(t, s.timeout)
	b.check(t, total+len(badKeys)+len(ks), s.afterClose())
	t.Logf("blocked after %d of %d events applied, %d held by the engine", blockedAt, total, held)
}

// interleave returns events from..to of every key, round robin: the first
// of each key, then the second of each, ...
func interleave(ks []string, from, to int) []Event {
	var out []Event
	for seq := from; seq <= to; seq++ {
		for _, k := range ks {
			out = append(out, Event{k, seq})
		}
	}
	return out
}

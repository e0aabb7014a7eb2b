package pubsub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	ps "github.com/ordergen/ordergen/runtime/pubsub"
	"github.com/ordergen/ordergen/runtime/transport"
)

// logSink keeps the log messages a consumer wrote.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) has(part string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

// With the in-memory park, a parked key's message stays unacknowledged.
// When parked messages fill MaxInFlight, Pub/Sub sends nothing more for any
// key: the consumer says so in its stats, logs and metrics, and a replay of
// the parked keys acknowledges them and lets every other key through.
func TestParksInMemoryBlockThenReplayResumes(t *testing.T) {
	f := newFake(t)
	const maxInFlight = 4
	poison := []string{"bad0", "bad1", "bad2", "bad3"}
	good := keys(10)
	var fixed atomic.Bool
	b := newBook(len(good)*5 + len(poison)*2)
	logs := &logSink{}
	mp := metricstest.New()
	m := f.start(t, memberOpts{
		cfg: func(c *ps.Config[ev]) {
			c.MaxInFlight = maxInFlight
			c.Logger = slogTo(logs)
			c.MeterProvider = mp
		},
		handler: func(_ context.Context, _ string, e ev) error {
			if strings.HasPrefix(e.Key, "bad") && !fixed.Load() {
				return runtime.Permanent(errors.New("poison"))
			}
			b.apply("m", e)
			return nil
		},
	})
	f.produce(t, poison, 1, 2)
	eventually(t, 30*time.Second, "every poison key parks", func() bool {
		keys, err := m.engine.ParkedKeys(context.Background())
		return err == nil && len(keys) == len(poison)
	})
	f.produce(t, good, 1, 5)
	eventually(t, 30*time.Second, "the consumer reports it is blocked by parks", func() bool {
		return m.c.Stats().Blocked == transport.BlockedParked
	})
	s := m.c.Stats()
	if s.Parked != maxInFlight || s.Unsettled != maxInFlight {
		t.Errorf("stats %+v: want %d parked and unsettled", s, maxInFlight)
	}
	if applied, _, _, _ := b.Snapshot(); applied != 0 {
		t.Errorf("%d events of other keys applied while parks filled MaxInFlight", applied)
	}
	if !logs.has("messages parked in memory hold MaxInFlight") {
		t.Errorf("no warning that parks block the consumer: %q", logs.msgs)
	}
	if v := gauge(mp, "ordergen.pubsub.blocked", "ordergen.pubsub.blocked.reason", "parked"); v != 1 {
		t.Errorf("ordergen.pubsub.blocked{parked} = %v, want 1", v)
	}
	if v := gauge(mp, "ordergen.pubsub.parked", "", ""); v != maxInFlight {
		t.Errorf("ordergen.pubsub.parked = %v, want %d", v, maxInFlight)
	}

	fixed.Store(true)
	for _, k := range poison {
		if err := m.engine.Replay(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	b.Wait(t, 60*time.Second)
	eventually(t, 10*time.Second, "the consumer takes messages again", func() bool { return m.c.Stats().Blocked == transport.NotBlocked })
	if !logs.has("takes messages again") {
		t.Errorf("no log that the consumer resumed")
	}
	m.stop(t)
	if _, _, skips, _ := b.Snapshot(); len(skips) > 0 {
		t.Errorf("events handled before their predecessor: %v", skips)
	}
}

// With a park store, a parked message is acknowledged once it is in the
// store: Pub/Sub sends the key's next messages, which join the park, and
// other keys never wait.
func TestParkStoreAcknowledgesParkedMessages(t *testing.T) {
	f := newFake(t)
	store := runtime.NewMemoryParkStore[string, ev]()
	var fixed atomic.Bool
	b := newBook(3*4 + 4)
	m := f.start(t, memberOpts{
		cfg: func(c *ps.Config[ev]) { c.MaxInFlight = 2 },
		engine: func(rc *runtime.Config[string, ev]) {
			rc.Parks = store
		},
		handler: func(_ context.Context, _ string, e ev) error {
			if e.Key == "bad" && !fixed.Load() {
				return runtime.Permanent(errors.New("poison"))
			}
			b.apply("m", e)
			return nil
		},
	})
	f.produce(t, []string{"bad"}, 1, 4)
	f.produce(t, keys(3), 1, 4)
	eventually(t, 30*time.Second, "every message of the bad key is in the park store", func() bool {
		evs, err := m.engine.ParkedEvents(context.Background(), "bad")
		return err == nil && len(evs) == 4
	})
	eventually(t, 30*time.Second, "the other keys are applied", func() bool {
		applied, _, _, _ := b.Snapshot()
		return applied == 12
	})
	if s := m.c.Stats(); s.Unsettled != 0 || s.Parked != 0 || s.Acked < 16 {
		t.Errorf("stats %+v: want every message acknowledged", s)
	}
	fixed.Store(true)
	if err := m.engine.Replay(context.Background(), "bad"); err != nil {
		t.Fatal(err)
	}
	b.Wait(t, 30*time.Second)
	m.stop(t)
}

// gauge returns the last value of a gauge with attribute key=value (or any,
// for key "").
func gauge(mp *metricstest.Provider, name, key, value string) float64 {
	var attrs []meter.Attribute
	if key != "" {
		attrs = append(attrs, meter.Attribute{Key: key, Value: value})
	}
	pts := mp.Collect().Points(name, attrs...)
	if len(pts) == 0 {
		return -1
	}
	return pts[len(pts)-1].Value
}

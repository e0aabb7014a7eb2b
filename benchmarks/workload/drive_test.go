package workload

import (
	"context"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/benchmarks/peers"
)

// TestRunSplitsKeysOverSubmitters checks the events a run with several
// submitters builds: each key belongs to one submitter, which has its
// events in sequence order, and every index of the run occurs once.
func TestRunSplitsKeysOverSubmitters(t *testing.T) {
	const n, subs = 5000, 4
	keys := Keys()
	r := NewRun(keys, Spec{Skewed: true}.Sequence(), n, Options{Submitters: subs, Ordered: true})
	if len(r.parts) != subs {
		t.Fatalf("%d submitters, want %d", len(r.parts), subs)
	}
	owner := map[uint32]int{}
	last := map[uint32]uint32{}
	seen := make([]bool, n)
	for i, part := range r.parts {
		if len(part) == 0 {
			t.Errorf("submitter %d has no events", i)
		}
		for _, ev := range part {
			if o, ok := owner[ev.Key]; ok && o != i {
				t.Fatalf("key %d submitted by %d and %d", ev.Key, o, i)
			}
			owner[ev.Key] = i
			if ev.Seq != last[ev.Key]+1 {
				t.Fatalf("key %d: event %d after %d", ev.Key, ev.Seq, last[ev.Key])
			}
			last[ev.Key] = ev.Seq
			if seen[ev.Index] {
				t.Fatalf("index %d twice", ev.Index)
			}
			seen[ev.Index] = true
		}
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("index %d missing", i)
		}
	}
	for k, s := range last {
		if r.submitted[k] != s {
			t.Errorf("key %d: %d submitted, last event %d", k, r.submitted[k], s)
		}
	}
}

// serial is a peer that handles each event at once, under a mutex, in the
// submitting goroutine.
type serial struct {
	mu sync.Mutex
	h  peers.Handler
}

func (s *serial) Submit(_ context.Context, key string, ev peers.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h(key, ev)
	return nil
}
func (s *serial) Drain(context.Context) error { return nil }
func (s *serial) Close(context.Context) error { return nil }

// TestDriveWithSubmitters drives a run with 4 submitters through a peer
// that keeps order, and checks it verifies; a run whose events were not
// all submitted does not.
func TestDriveWithSubmitters(t *testing.T) {
	r := NewRun(Keys(), Spec{}.Sequence(), 3000, Options{Submitters: 4, Ordered: true, Track: true})
	if err := r.Drive(t.Context(), &serial{h: r.Handler()}); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	short := NewRun(Keys(), Spec{}.Sequence(), 3000, Options{Submitters: 4, Ordered: true})
	short.parts[2] = short.parts[2][:len(short.parts[2])-1]
	if err := short.Drive(t.Context(), &serial{h: short.Handler()}); err != nil {
		t.Fatal(err)
	}
	if err := short.Verify(); err == nil {
		t.Error("a run with an event not submitted verified")
	}
}

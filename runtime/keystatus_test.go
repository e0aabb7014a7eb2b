package runtime_test

import (
	"context"
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// KeyStatus counts a key's pending events wherever they wait (running, in
// its lane, or in the inbox behind a busy worker), with the age of the
// oldest, and says when it is parked; OldestAge is the oldest of all.
func TestKeyStatusAndOldestAge(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	r.started = make(chan string, 16)
	e := mustNew(t, r.handle, runtime.Config[string, ev]{MaxActive: 1, Retry: fastRetry})
	if age := e.OldestAge(); age != 0 {
		t.Fatalf("an idle engine's oldest age: %v", age)
	}
	for i := 1; i <= 4; i++ {
		if err := e.Submit(context.Background(), "hot", ev{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	<-r.started // the only worker is in the handler of hot's first event
	for i := 1; i <= 2; i++ {
		if err := e.Submit(context.Background(), "other", ev{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	hot, other, idle := e.KeyStatus("hot"), e.KeyStatus("other"), e.KeyStatus("idle")
	if hot.Pending != 4 || hot.OldestAge <= 0 || hot.Parked {
		t.Errorf("hot: %+v, want 4 pending, an age, not parked", hot)
	}
	if other.Pending != 2 || other.OldestAge <= 0 {
		t.Errorf("other: %+v, want 2 pending and an age", other)
	}
	if idle != (runtime.KeyStatus[ev]{}) {
		t.Errorf("a key never seen: %+v", idle)
	}
	if oldest := e.OldestAge(); oldest < hot.OldestAge {
		t.Errorf("the oldest age %v is younger than hot's %v", oldest, hot.OldestAge)
	}
	close(r.gate)
	flush(t, e)
	if st := e.KeyStatus("hot"); st.Pending != 0 || st.OldestAge != 0 {
		t.Errorf("hot after the flush: %+v", st)
	}
	if age := e.OldestAge(); age != 0 {
		t.Errorf("the oldest age after the flush: %v", age)
	}

	// A key that parks.
	if err := e.Submit(context.Background(), "bad", ev{Seq: 1, Permanent: true}); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	if st := e.KeyStatus("bad"); !st.Parked || st.Pending != 0 {
		t.Errorf("a parked key: %+v", st)
	}
}

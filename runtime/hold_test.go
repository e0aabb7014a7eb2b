package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// versioned is a handler with a version guard like the generated one: it
// applies version stored+1, skips older ones and holds newer ones.
type versioned struct {
	mu      sync.Mutex
	stored  map[string]int
	applied map[string][]int
}

func newVersioned() *versioned {
	return &versioned{stored: map[string]int{}, applied: map[string][]int{}}
}

func (v *versioned) handle(_ context.Context, key string, x ev) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch stored := v.stored[key]; {
	case x.Seq <= stored:
		return runtime.Skip("duplicate or stale version")
	case x.Seq > stored+1:
		return runtime.Hold(fmt.Sprintf("version %d waits for %d", x.Seq, stored+1))
	}
	v.stored[key] = x.Seq
	v.applied[key] = append(v.applied[key], x.Seq)
	return nil
}

func (v *versioned) got(key string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return fmt.Sprint(v.applied[key])
}

func TestHoldResequencesAGap(t *testing.T) {
	v := newVersioned()
	e := mustNew(t, v.handle, runtime.Config[string, ev]{})
	ctx := context.Background()
	for _, seq := range []int{1, 4, 3, 3, 1, 5} {
		if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	s := e.Stats()
	if s.Held != 4 || v.got("a") != "[1]" { // 4, 3, 3 and 5 wait for 2
		t.Fatalf("before the gap fills: held %d, applied %s", s.Held, v.got("a"))
	}
	checkInvariant(t, s)
	if err := e.Submit(ctx, "a", ev{Seq: 2}); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	s = e.Stats()
	if got := v.got("a"); got != "[1 2 3 4 5]" {
		t.Fatalf("applied %s", got)
	}
	if s.Held != 0 || s.Skipped != 2 || s.Lanes != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

func TestHoldBoundParksTheKey(t *testing.T) {
	v := newVersioned()
	e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHeld: 2})
	ctx := context.Background()
	for _, seq := range []int{1, 3, 4, 5, 6} {
		if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	keys, _ := e.ParkedKeys(ctx)
	if len(keys) != 1 || !strings.Contains(keys[0].Reason, "resequencer full") || !strings.Contains(keys[0].Reason, "waits for 2") {
		t.Fatalf("parked %+v", keys)
	}
	events, _ := e.ParkedEvents(ctx, "a")
	var seqs []int
	for _, x := range events {
		seqs = append(seqs, x.Event.Seq)
	}
	if fmt.Sprint(seqs) != "[3 4 5 6]" {
		t.Fatalf("park holds %v", seqs)
	}
	// The missing version arrives and joins the park; replay resequences.
	if err := e.Submit(ctx, "a", ev{Seq: 2}); err != nil {
		t.Fatal(err)
	}
	if err := e.Replay(ctx, "a"); err != nil {
		t.Fatalf("replay: %v", err)
	}
	flush(t, e)
	if got := v.got("a"); got != "[1 2 3 4 5 6]" {
		t.Fatalf("applied %s", got)
	}
	s := e.Stats()
	if s.ParkedKeys != 0 || s.Held != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

func TestHoldTimeParksTheKey(t *testing.T) {
	v := newVersioned()
	logger, logs := newSignalLogger()
	e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHold: time.Millisecond, Logger: logger})
	ctx := context.Background()
	for _, seq := range []int{1, 3} {
		if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(logs, "ordergen: key parked")
	keys, _ := e.ParkedKeys(ctx)
	if len(keys) != 1 || !strings.Contains(keys[0].Reason, "held longer than 1ms") {
		t.Fatalf("parked %+v", keys)
	}
	checkInvariant(t, e.Stats())
}

func TestCloseParksHeldEvents(t *testing.T) {
	v := newVersioned()
	parks := runtime.NewMemoryParkStore[string, ev]()
	e, err := runtime.New(v.handle, runtime.Config[string, ev]{Parks: parks, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, seq := range []int{1, 3} {
		if err := e.Submit(ctx, "a", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.Stats()
	if s.Parked != 1 || s.Held != 0 || s.Pending != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
	// A new engine on the same store finds the key parked and restores it.
	e2, err := runtime.New(v.handle, runtime.Config[string, ev]{Parks: parks, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close(ctx)
	if err := e2.Submit(ctx, "a", ev{Seq: 2}); err != nil {
		t.Fatal(err)
	}
	flush(t, e2)
	if s := e2.Stats(); s.Restored != 1 || s.Parked != 2 {
		t.Fatalf("restored engine: %+v", s)
	}
	if err := e2.Replay(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	flush(t, e2)
	if got := v.got("a"); got != "[1 2 3]" {
		t.Fatalf("applied %s", got)
	}
	checkInvariant(t, e2.Stats())
}

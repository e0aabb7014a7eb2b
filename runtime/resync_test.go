package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
)

// source is a source of truth for the versioned handler: each key's
// current version, and how its resyncs fail.
type source struct {
	mu       sync.Mutex
	versions map[string]int
	fail     error // every call fails with it while set
	// answers, when set, are the versions the calls return in turn, 0 for
	// a failure; they override versions and fail.
	answers []int
	calls   int
	held    [][]int // the held events of each call
}

// resync is a ResyncFunc over v: like a generated one, it stores the
// source's version as the key's and counts the held events it covers.
func (s *source) resync(v *versioned) runtime.ResyncFunc[string, ev] {
	return func(_ context.Context, key string, held []ev) (int, error) {
		s.mu.Lock()
		s.calls++
		var seqs []int
		for _, x := range held {
			seqs = append(seqs, x.Seq)
		}
		s.held = append(s.held, seqs)
		fail, to := s.fail, s.versions[key]
		if s.calls <= len(s.answers) {
			if to = s.answers[s.calls-1]; to == 0 {
				fail = errors.New("source of truth down")
			}
		}
		s.mu.Unlock()
		if fail != nil {
			return 0, fail
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if to <= v.stored[key] {
			return 0, fmt.Errorf("the source is at version %d, not past the stored %d", to, v.stored[key])
		}
		v.stored[key] = to
		covered := 0
		for _, x := range held {
			if x.Seq <= to {
				covered++
			}
		}
		return covered, nil
	}
}

func (s *source) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func submitSeqs(t *testing.T, e *runtime.Engine[string, ev], key string, seqs ...int) {
	t.Helper()
	for _, seq := range seqs {
		if err := e.Submit(context.Background(), key, ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
}

// A key whose version 2 is lost holds 3, 4 and 5; past MaxHeld it is
// resynced to the source's version 4: 3 and 4 are skipped as covered, 5
// and what follows are applied, and nothing parks.
func TestResyncPastTheCountBound(t *testing.T) {
	v := newVersioned()
	src := &source{versions: map[string]int{"a": 4}}
	logger, logs := newSignalLogger()
	mp := metricstest.New()
	e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHeld: 2, Resync: src.resync(v), Logger: logger, MeterProvider: mp})
	submitSeqs(t, e, "a", 1, 3, 4, 5)
	flush(t, e)
	submitSeqs(t, e, "a", 6)
	flush(t, e)
	if got := v.got("a"); got != "[1 5 6]" {
		t.Fatalf("applied %s, want [1 5 6]", got)
	}
	if fmt.Sprint(src.held) != "[[3 4 5]]" {
		t.Fatalf("resync calls saw held %v", src.held)
	}
	s := e.Stats()
	if s.Resynced != 1 || s.Skipped != 2 || s.Handled != 3 || s.ParkedKeys != 0 || s.Held != 0 || s.Lanes != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
	waitFor(logs, "ordergen: resequencer bound hit: key resynced from the source of truth")
	if got := sum(mp.Collect(), meter.MetricResyncs); got != 1 {
		t.Errorf("%s = %d, want 1", meter.MetricResyncs, got)
	}
}

// MaxHold resyncs too: on the test clock, the held event waits exactly
// MaxHold.
func TestResyncPastMaxHoldOnTheTestClock(t *testing.T) {
	clk := new(runtime.TestClock)
	v := newVersioned()
	src := &source{versions: map[string]int{"a": 2}}
	cfg := runtime.Config[string, ev]{MaxHold: time.Second, Resync: src.resync(v)}
	runtime.UseTestClock(&cfg, clk)
	e := mustNew(t, v.handle, cfg)
	submitSeqs(t, e, "a", 1, 3)
	waitUntil(t, func() bool { return e.Stats().Held == 1 }, "3 held")
	clk.Advance(time.Second - time.Millisecond)
	if n := src.callCount(); n != 0 {
		t.Fatalf("%d resyncs before MaxHold", n)
	}
	clk.Advance(time.Millisecond)
	waitUntil(t, func() bool { return e.Stats().Handled == 2 }, "3 applied after the resync")
	flush(t, e)
	if got, s := v.got("a"), e.Stats(); got != "[1 3]" || s.Resynced != 1 || s.ParkedKeys != 0 {
		t.Fatalf("applied %s, stats %+v", got, s)
	}
}

// A resync that keeps failing is retried with the Retry policy, then the
// key parks with the reason, its held events in the park; once the gap
// fills, a replay resequences them.
func TestResyncThatFailsParks(t *testing.T) {
	v := newVersioned()
	src := &source{fail: errors.New("source of truth down")}
	e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHeld: 1, Retry: fastRetry, Resync: src.resync(v)})
	ctx := context.Background()
	submitSeqs(t, e, "a", 1, 3, 4)
	flush(t, e)
	if n := src.callCount(); n != fastRetry.Attempts {
		t.Fatalf("%d resync calls, want %d", n, fastRetry.Attempts)
	}
	keys, err := e.ParkedKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !strings.Contains(keys[0].Reason, "resync failed after 3 attempts: source of truth down") ||
		!strings.Contains(keys[0].Reason, "resequencer full") {
		t.Fatalf("parked %+v", keys)
	}
	if s := e.Stats(); s.Parked != 2 || s.Resynced != 0 || s.Held != 0 || s.Retried != 0 {
		t.Fatalf("stats %+v", s)
	}
	submitSeqs(t, e, "a", 2)
	if err := e.Replay(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	if got := v.got("a"); got != "[1 2 3 4]" {
		t.Fatalf("applied %s", got)
	}
	checkInvariant(t, e.Stats())
}

// A permanent failure, or a panic on the last attempt, parks without
// another try; a failure that clears succeeds on its retry.
func TestResyncAttempts(t *testing.T) {
	for _, c := range []struct {
		name   string
		fail   func(call int) error
		calls  int
		parked bool
	}{
		{"permanent", func(int) error { return runtime.Permanent(errors.New("no such account")) }, 1, true},
		{"panics", func(int) error { panic("source of truth client bug") }, 3, true},
		{"recovers", func(call int) error {
			if call == 1 {
				return errors.New("timeout")
			}
			return nil
		}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVersioned()
			var mu sync.Mutex
			calls := 0
			resync := func(_ context.Context, key string, held []ev) (int, error) {
				mu.Lock()
				calls++
				call := calls
				mu.Unlock()
				if err := c.fail(call); err != nil {
					return 0, err
				}
				v.mu.Lock()
				v.stored[key] = 2
				v.mu.Unlock()
				return 0, nil
			}
			e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHeld: 1, Retry: fastRetry, Resync: resync})
			submitSeqs(t, e, "a", 1, 3, 4)
			flush(t, e)
			s := e.Stats()
			mu.Lock()
			got := calls
			mu.Unlock()
			if got != c.calls || (s.ParkedKeys == 1) != c.parked {
				t.Fatalf("%d calls, stats %+v", got, s)
			}
			if !c.parked && v.got("a") != "[1 3 4]" {
				t.Fatalf("applied %s", v.got("a"))
			}
			checkInvariant(t, s)
		})
	}
}

// Events that arrive while a resync waits for its retry wait behind it,
// and a key held again after a resync (a second gap) resyncs again.
func TestResyncWaitsAndRepeats(t *testing.T) {
	clk := new(runtime.TestClock)
	v := newVersioned()
	src := &source{answers: []int{0, 3, 7}} // down, then version 3, then 7
	cfg := runtime.Config[string, ev]{MaxHeld: 1, Retry: runtime.Retry{Attempts: 5, Initial: time.Second, Max: time.Second, NoJitter: true}, Resync: src.resync(v)}
	runtime.UseTestClock(&cfg, clk)
	e := mustNew(t, v.handle, cfg)
	submitSeqs(t, e, "a", 1, 3, 4)
	waitUntil(t, func() bool { return src.callCount() == 1 }, "the first resync")
	submitSeqs(t, e, "a", 5, 7, 8) // the lane waits for the resync's backoff: they queue
	// 3 and 4 held, 5, 7 and 8 queued (Stats is exact once 1's room is
	// released, which an inline batch may do a little later).
	waitUntil(t, func() bool { s := e.Stats(); return s.Pending == 5 && s.Held == 2 }, "3 and 4 held, 5, 7 and 8 queued")
	if got := v.got("a"); got != "[1]" {
		t.Fatalf("applied %s while the resync waits", got)
	}
	// The retry resyncs to 3: 4 and 5 follow, 7 and 8 wait for 6 and hit
	// the bound: a second resync, to 7, at once.
	clk.Advance(time.Second)
	flush(t, e)
	if got, s := v.got("a"), e.Stats(); got != "[1 4 5 8]" || s.Resynced != 2 || s.ParkedKeys != 0 || s.Held != 0 || src.callCount() != 3 {
		t.Fatalf("applied %s, stats %+v, %d calls", got, s, src.callCount())
	}
	if fmt.Sprint(src.held) != "[[3 4] [3 4] [7 8]]" {
		t.Fatalf("resync calls saw held %v", src.held)
	}
	checkInvariant(t, e.Stats())
}

// A ParkNow that comes while a key's resync runs waits for the worker (a
// resync has no attempt to take); when the resync fails it is served
// before the retry's backoff, which would hold it for a whole delay (an
// hour here).
func TestParkNowDuringAFailingResyncIsServedBeforeTheBackoff(t *testing.T) {
	v := newVersioned()
	calling, release := make(chan struct{}), make(chan struct{})
	resync := func(context.Context, string, []ev) (int, error) {
		close(calling)
		<-release
		return 0, errors.New("source of truth down")
	}
	e := mustNew(t, v.handle, runtime.Config[string, ev]{MaxHeld: 1, Logger: discardLogger(), Resync: resync,
		Retry: runtime.Retry{Attempts: 5, Initial: time.Hour, Max: time.Hour, NoJitter: true}})
	defer e.Close(context.Background())
	submitSeqs(t, e, "a", 1, 3, 4)
	<-calling
	parkNowThenFail(t, e, "a", 2, release)
}

package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// tagLog records the outcomes reported per tag.
type tagLog struct {
	mu  sync.Mutex
	out map[uint64][]runtime.Outcome
}

func (l *tagLog) on(_ string, tag uint64, o runtime.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.out == nil {
		l.out = map[uint64][]runtime.Outcome{}
	}
	l.out[tag] = append(l.out[tag], o)
}

func (l *tagLog) of(tag uint64) []runtime.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.out[tag])
}

// odd selects the tags of one "partition": the odd ones.
func odd(tag uint64) bool { return tag%2 == 1 }

// Withdraw takes back the selected events wherever they wait (a lane's
// queue, a retry, the inbox, the resequencer, the park in memory); they
// never start, each reports Withdrawn, and the accounting holds. Events it
// does not select go on.
func TestWithdrawTakesBackQueuedEvents(t *testing.T) {
	var log tagLog
	r := gated()
	held := func(ctx context.Context, key string, x ev) error {
		if key == "held" && x.Seq == 2 {
			return runtime.Hold("gap")
		}
		if key == "parked" && x.Seq == 1 {
			return runtime.Permanent(errors.New("broken"))
		}
		return r.handle(ctx, key, x)
	}
	e := mustNew(t, held, runtime.Config[string, ev]{MaxActive: 1, OnOutcome: log.on, MaxHold: time.Hour})
	ctx := context.Background()
	submit := func(key string, seq int, tag uint64) {
		t.Helper()
		if err := runtime.EngineForTransport(e).SubmitTagged(ctx, key, ev{Seq: seq}, tag); err != nil {
			t.Fatal(err)
		}
	}
	// "parked" parks (memory) with two events, "held" holds its second.
	submit("parked", 1, 1)
	submit("parked", 2, 3)
	submit("held", 2, 5)
	flush(t, e)
	// The only worker is held by "gate" while the rest waits.
	submit("gate", 1, 100)
	<-r.started
	for i := 0; i < 6; i++ {
		submit(fmt.Sprintf("k%d", i%3), i, uint64(7+i)) // odd and even tags, in the inbox
	}
	n, err := runtime.EngineForTransport(e).Withdraw(ctx, odd)
	if err != nil {
		t.Fatal(err)
	}
	// Odd tags: parked 1 and 3, held 5, and 7, 9, 11 of the inbox.
	if n != 6 {
		t.Fatalf("withdrew %d, want 6", n)
	}
	r.release(1) // the gate
	go r.release(3)
	flush(t, e)
	for _, tag := range []uint64{1, 3, 5, 7, 9, 11} {
		if got := log.of(tag); len(got) == 0 || got[len(got)-1] != runtime.Withdrawn {
			t.Fatalf("tag %d reported %v, want Withdrawn last", tag, got)
		}
	}
	for _, tag := range []uint64{8, 10, 12, 100} {
		if got := log.of(tag); !slices.Equal(got, []runtime.Outcome{runtime.Handled}) {
			t.Fatalf("tag %d reported %v, want Handled", tag, got)
		}
	}
	s := e.Stats()
	if s.Withdrawn != 6 || s.Parked != 0 || s.ParkedKeys != 0 || s.Held != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

// A lane whose worker is in a handler serves the withdrawal before its next
// event starts: the events it took with the running one never start.
func TestWithdrawBeforeTheNextEventStarts(t *testing.T) {
	var log tagLog
	r := gated()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{OnOutcome: log.on, Retry: fastRetry})
	ctx := context.Background()
	// The first event fails once, so the key runs in a lane, several taken
	// at a time.
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: 0, Fail: 1}, 1); err != nil {
		t.Fatal(err)
	}
	<-r.started
	for seq := 1; seq <= 50; seq++ {
		if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: seq}, uint64(seq+1)); err != nil {
			t.Fatal(err)
		}
	}
	r.release(1) // attempt 1 fails; the retry takes the lane's events
	<-r.started  // attempt 2 of event 0 runs, with events 1..50 taken or queued
	// The worker is in the handler with the rest taken: Withdraw registers
	// the withdrawal with the lane and waits; its deadline ends the wait,
	// not the withdrawal (event 0's tag is not selected: nothing is
	// cancelled).
	wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := runtime.EngineForTransport(e).Withdraw(wctx, func(tag uint64) bool { return tag > 1 }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Withdraw while the lane's worker is in a handler: %v", err)
	}
	r.release(1)
	flush(t, e)
	if got := r.seqs("k"); !slices.Equal(got, []int{0}) {
		t.Fatalf("handled %v: only the event that was running", got)
	}
	if s := e.Stats(); s.Withdrawn != 50 {
		t.Fatalf("withdrew %d of the 50 events behind the running one", s.Withdrawn)
	}
	checkInvariant(t, e.Stats())
}

// When Withdraw's context ends first, it cancels the running attempts of
// the events it selects (their contexts are their own when a transport
// tracks outcomes), and returns the context's error.
func TestWithdrawCancelsRunningAttemptsAtItsDeadline(t *testing.T) {
	var log tagLog
	started := make(chan struct{})
	cancelled := make(chan struct{})
	h := func(ctx context.Context, key string, _ ev) error {
		if key != "slow" {
			return nil
		}
		close(started)
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}
	e := mustNew(t, h, runtime.Config[string, ev]{OnOutcome: log.on, Retry: runtime.Retry{Attempts: 1}, OnExhausted: runtime.DropEvent})
	ctx := context.Background()
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "slow", ev{}, 1); err != nil {
		t.Fatal(err)
	}
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "slow", ev{Seq: 1}, 3); err != nil {
		t.Fatal(err)
	}
	<-started
	wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	n, err := runtime.EngineForTransport(e).Withdraw(wctx, odd)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Withdraw: %d, %v", n, err)
	}
	mustHappen(t, cancelled, "the running attempt's context cancelled")
	flush(t, e)
	if got := log.of(3); !slices.Equal(got, []runtime.Outcome{runtime.Withdrawn}) {
		t.Fatalf("the event behind the running one: %v", got)
	}
	checkInvariant(t, e.Stats())
}

// Events in a park store outside the process stay there: a transport that
// commits them as finished must not lose them.
func TestWithdrawLeavesADurablePark(t *testing.T) {
	var log tagLog
	store := runtime.NewMemoryParkStore[string, ev]()
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Parks: store, OnOutcome: log.on})
	ctx := context.Background()
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "p", ev{Seq: 1, Permanent: true}, 1); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	if n, err := runtime.EngineForTransport(e).Withdraw(ctx, odd); n != 0 || err != nil {
		t.Fatalf("Withdraw: %d, %v", n, err)
	}
	if s := e.Stats(); s.Parked != 1 || s.Withdrawn != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, e.Stats())
}

// A replayed event from a durable park is not Withdraw's to take, so its
// running attempt is not cancelled either (found in review: the wait and
// the cancellation selected by tag alone, and the cancelled attempt ran
// again with a try used up).
func TestWithdrawLeavesADurableReplayRunning(t *testing.T) {
	var log tagLog
	store := runtime.NewMemoryParkStore[string, ev]()
	if err := store.Append(context.Background(), "p", "left by an earlier process",
		[]runtime.ParkedEvent[ev]{{Event: ev{Seq: 1}, Tag: 1}}); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	var attempts int
	var cancelled bool
	h := func(ctx context.Context, key string, _ ev) error {
		attempts++ // one key: its attempts never overlap
		if attempts == 1 {
			close(started)
			<-release
			cancelled = ctx.Err() != nil
		}
		return ctx.Err()
	}
	e := mustNew(t, h, runtime.Config[string, ev]{Parks: store, OnOutcome: log.on})
	ctx := context.Background()
	replayed := run(func() {
		if err := e.Replay(ctx, "p"); err != nil {
			t.Errorf("Replay: %v", err)
		}
	})
	<-started
	done, cancel := context.WithCancel(ctx)
	cancel() // Withdraw gives up at once and cancels what it takes
	_, _ = runtime.EngineForTransport(e).Withdraw(done, odd)
	close(release)
	mustHappen(t, replayed, "the replay")
	flush(t, e)
	if cancelled || attempts != 1 {
		t.Fatalf("the replayed event's attempt: cancelled %v, %d attempts; want one, not cancelled", cancelled, attempts)
	}
	if got := log.of(1); !slices.Equal(got, []runtime.Outcome{runtime.Handled}) {
		t.Fatalf("the replayed event's outcomes: %v", got)
	}
	checkInvariant(t, e.Stats())
}

// Withdraw takes held events from a lane whose worker is in a handler;
// the worker must not read the lane's held events without the lock when
// its handler returns (found by TestStress under -race; Withdraw and the
// handler's return are not ordered here, so -race sees an unlocked read).
func TestWithdrawHeldEventsOfARunningLane(t *testing.T) {
	for round := 0; round < 20; round++ {
		withdrawHeldOfRunningLane(t)
	}
}

func withdrawHeldOfRunningLane(t *testing.T) {
	var log tagLog
	started, release := make(chan struct{}), make(chan struct{})
	h := func(_ context.Context, _ string, x ev) error {
		switch x.Seq {
		case 1:
			return runtime.Hold("waits for a gap")
		case 2:
			close(started)
			<-release
		}
		return nil
	}
	e := mustNew(t, h, runtime.Config[string, ev]{OnOutcome: log.on, MaxHold: time.Hour})
	ctx := context.Background()
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: 1}, 1); err != nil {
		t.Fatal(err)
	}
	flush(t, e) // held
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: 2}, 2); err != nil {
		t.Fatal(err)
	}
	<-started
	withdrawn := make(chan int, 1)
	go func() {
		n, err := runtime.EngineForTransport(e).Withdraw(ctx, odd)
		if err != nil {
			t.Error(err)
		}
		withdrawn <- n
	}()
	close(release)
	if n := <-withdrawn; n != 1 {
		t.Fatalf("withdrew %d, want the held event", n)
	}
	flush(t, e)
	if got := log.of(1); !slices.Equal(got, []runtime.Outcome{runtime.Withdrawn}) {
		t.Fatalf("the held event: %v", got)
	}
	if got := log.of(2); !slices.Equal(got, []runtime.Outcome{runtime.Handled}) {
		t.Fatalf("the running event: %v", got)
	}
	if s := e.Stats(); s.Held != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, e.Stats())
}

// Withdrawing an event that failed and waits for its retry ends the wait:
// whether Withdraw came while it ran (its worker serves the withdrawal on
// the failure) or while it waits (the backoff is stopped), nothing waits
// for the backoff, and Flush returns.
func TestWithdrawDoesNotWaitForABackoff(t *testing.T) {
	for _, when := range []string{"running", "waiting"} {
		t.Run(when, func(t *testing.T) {
			var log tagLog
			started, release := make(chan struct{}), make(chan struct{})
			h := func(context.Context, string, ev) error {
				close(started)
				<-release
				return errors.New("fails: retried in an hour")
			}
			e := mustNew(t, h, runtime.Config[string, ev]{OnOutcome: log.on,
				Retry: runtime.Retry{Attempts: 2, Initial: time.Hour, Max: time.Hour, NoJitter: true}})
			ctx := context.Background()
			if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{}, 1); err != nil {
				t.Fatal(err)
			}
			<-started
			if when == "running" {
				// Registered with the running lane; the deadline only ends
				// Withdraw's wait (the handler ignores the cancellation).
				wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
				defer cancel()
				if _, err := runtime.EngineForTransport(e).Withdraw(wctx, odd); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Withdraw: %v", err)
				}
				close(release)
			} else {
				close(release)
				waitUntil(t, func() bool { return e.Stats().Retried == 1 }, "the event waiting for its retry")
				if n, err := runtime.EngineForTransport(e).Withdraw(ctx, odd); n != 1 || err != nil {
					t.Fatalf("Withdraw: %d, %v", n, err)
				}
			}
			flush(t, e) // hangs for an hour if the lane still waits
			if got := log.of(1); !slices.Equal(got, []runtime.Outcome{runtime.Withdrawn}) {
				t.Fatalf("the failed event: %v", got)
			}
			if s := e.Stats(); s.Lanes != 0 {
				t.Fatalf("a lane is left: %+v", s)
			}
			checkInvariant(t, e.Stats())
		})
	}
}

// An attempt Withdraw cancels is the withdrawal's, not a failure: it is
// not retried and does not park its key, so the key's events that were
// not selected go on (reported by the Kafka work: with Attempts 1 the key
// parked, taking the next ownership's event with it).
func TestWithdrawnAttemptDoesNotParkItsKey(t *testing.T) {
	var log tagLog
	started := make(chan struct{})
	h := func(ctx context.Context, _ string, x ev) error {
		if x.Seq == 1 {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	e := mustNew(t, h, runtime.Config[string, ev]{OnOutcome: log.on, Retry: runtime.Retry{Attempts: 1}})
	ctx := context.Background()
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: 1}, 1); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := runtime.EngineForTransport(e).SubmitTagged(ctx, "k", ev{Seq: 2}, 2); err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := runtime.EngineForTransport(e).Withdraw(done, func(tag uint64) bool { return tag == 1 }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Withdraw: %v", err)
	}
	flush(t, e)
	if got := log.of(1); !slices.Equal(got, []runtime.Outcome{runtime.Withdrawn}) {
		t.Fatalf("the cancelled event: %v", got)
	}
	if got := log.of(2); !slices.Equal(got, []runtime.Outcome{runtime.Handled}) {
		t.Fatalf("the next event: %v", got)
	}
	if s := e.Stats(); s.ParkedKeys != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, e.Stats())
}

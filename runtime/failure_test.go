package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

func TestRetryThenSucceedKeepsOrder(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	ctx := context.Background()
	for seq := 1; seq <= 5; seq++ {
		fail := 0
		if seq == 2 {
			fail = 2 // two transient failures, third attempt succeeds
		}
		if err := e.Submit(ctx, "a", ev{Seq: seq, Fail: fail}); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1 2 3 4 5]" {
		t.Fatalf("handled %s", got)
	}
	if s := e.Stats(); s.Retried != 2 || s.Handled != 5 {
		t.Fatalf("stats: %+v", s)
	}
}

func TestPanicIsAFailedAttempt(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1, Panic: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.Submit(ctx, "a", ev{Seq: 2}); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1 2]" {
		t.Fatalf("handled %s", got)
	}
	if s := e.Stats(); s.Retried != 1 {
		t.Fatalf("stats: %+v", s)
	}
}

func TestPermanentErrorIsNotRetried(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	if err := e.Submit(context.Background(), "a", ev{Seq: 1, Permanent: true}); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	s := e.Stats()
	if s.Retried != 0 || s.Parked != 1 {
		t.Fatalf("stats: %+v", s)
	}
	keys, err := e.ParkedKeys(context.Background())
	if err != nil || len(keys) != 1 || !strings.Contains(keys[0].Reason, "permanent") {
		t.Fatalf("parked keys %+v, %v", keys, err)
	}
}

func TestAttemptTimeoutThroughContext(t *testing.T) {
	h := func(ctx context.Context, key string, e ev) error {
		<-ctx.Done() // a handler that honours its context
		return ctx.Err()
	}
	e := mustNew(t, h, runtime.Config[string, ev]{Timeout: time.Millisecond, Retry: fastRetry})
	if err := e.Submit(context.Background(), "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	flush(t, e)
	events, err := e.ParkedEvents(context.Background(), "a")
	if err != nil || len(events) != 1 || events[0].Attempts != 3 || !strings.Contains(events[0].Err, "deadline exceeded") {
		t.Fatalf("parked events %+v, %v", events, err)
	}
}

func TestDeadLetterGivesUpOrderAndGoesOn(t *testing.T) {
	r := newRecorder()
	var mu sync.Mutex
	var letters []runtime.DeadLetterEvent[string, ev]
	sink := func(ctx context.Context, dl runtime.DeadLetterEvent[string, ev]) error {
		mu.Lock()
		defer mu.Unlock()
		letters = append(letters, dl)
		return nil
	}
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry, OnExhausted: runtime.SendToDeadLetter, DeadLetter: sink})
	ctx := context.Background()
	for _, x := range []ev{{Seq: 1}, {Seq: 2, Fail: 99}, {Seq: 3}} {
		if err := e.Submit(ctx, "a", x); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1 3]" {
		t.Fatalf("handled %s", got)
	}
	if len(letters) != 1 || letters[0].Event.Seq != 2 || letters[0].Attempts != 3 || letters[0].Err == nil {
		t.Fatalf("dead letters %+v", letters)
	}
	s := e.Stats()
	if s.DeadLettered != 1 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

func TestDeadLetterSinkFailureParks(t *testing.T) {
	r := newRecorder()
	sink := func(context.Context, runtime.DeadLetterEvent[string, ev]) error { return errors.New("sink down") }
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry, OnExhausted: runtime.SendToDeadLetter, DeadLetter: sink})
	ctx := context.Background()
	for _, x := range []ev{{Seq: 1, Permanent: true}, {Seq: 2}} {
		if err := e.Submit(ctx, "a", x); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	events, _ := e.ParkedEvents(ctx, "a")
	if len(events) != 2 || !strings.Contains(events[0].Err, "sink down") {
		t.Fatalf("parked %+v", events)
	}
	checkInvariant(t, e.Stats())
}

func TestDropPolicyIsAtMostOnce(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: runtime.Retry{Attempts: 1}, OnExhausted: runtime.DropEvent})
	ctx := context.Background()
	for _, x := range []ev{{Seq: 1, Fail: 1}, {Seq: 2}} {
		if err := e.Submit(ctx, "a", x); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[2]" {
		t.Fatalf("handled %s", got)
	}
	s := e.Stats()
	if s.Dropped != 1 || s.Retried != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

func TestParkJoinReplayAndDiscard(t *testing.T) {
	r := newRecorder()
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry})
	ctx := context.Background()
	submit := func(key string, x ev) {
		t.Helper()
		if err := e.Submit(ctx, key, x); err != nil {
			t.Fatal(err)
		}
	}
	submit("a", ev{Seq: 1})
	submit("a", ev{Seq: 2, Permanent: true})
	submit("a", ev{Seq: 3})
	submit("b", ev{Seq: 1, Permanent: true})
	flush(t, e)
	submit("a", ev{Seq: 4}) // joins the park
	submit("b", ev{Seq: 2})
	flush(t, e)
	if err := e.Replay(ctx, "nobody"); !errors.Is(err, runtime.ErrNotParked) {
		t.Fatal("replay of a key that is not parked must fail with ErrNotParked")
	}
	// Still failing: the replay parks the key again, from the failing event.
	if err := e.Replay(ctx, "a"); !errors.Is(err, runtime.ErrParkedAgain) {
		t.Fatalf("replay before the fix: %v", err)
	}
	events, _ := e.ParkedEvents(ctx, "a")
	var seqs []int
	for _, x := range events {
		seqs = append(seqs, x.Event.Seq)
	}
	if fmt.Sprint(seqs) != "[2 3 4]" {
		t.Fatalf("park after failed replay: %v", seqs)
	}
	r.fix("a")
	if err := e.Replay(ctx, "a"); err != nil {
		t.Fatalf("replay after the fix: %v", err)
	}
	submit("a", ev{Seq: 5})
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1 2 3 4 5]" {
		t.Fatalf("a handled %s", got)
	}
	n, err := e.Discard(ctx, "b")
	if err != nil || n != 2 {
		t.Fatalf("discard b: %d, %v", n, err)
	}
	submit("b", ev{Seq: 3})
	flush(t, e)
	if got := fmt.Sprint(r.seqs("b")); got != "[3]" {
		t.Fatalf("b handled %s", got)
	}
	s := e.Stats()
	if s.Discarded != 2 || s.Parked != 0 || s.ParkedKeys != 0 || s.Lanes != 0 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

func TestRetryingKeyHoldsNoWorker(t *testing.T) {
	// One worker. Key a fails and waits an hour to retry; key b must not
	// wait for it. Close then gives up on a and says so.
	r := newRecorder()
	bDone := make(chan struct{})
	h := func(ctx context.Context, key string, x ev) error {
		err := r.handle(ctx, key, x)
		if key == "b" && x.Seq == 20 {
			close(bDone)
		}
		return err
	}
	slow := runtime.Retry{Attempts: 2, Initial: time.Hour, Max: time.Hour, Multiplier: 1, NoJitter: true}
	e, err := runtime.New(h, runtime.Config[string, ev]{MaxActive: 1, Retry: slow, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1, Fail: 1}); err != nil {
		t.Fatal(err)
	}
	for seq := 1; seq <= 20; seq++ {
		if err := e.Submit(ctx, "b", ev{Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	<-bDone
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	err = e.Close(cctx)
	var ce *runtime.CloseError
	if !errors.As(err, &ce) || ce.Pending != 1 || ce.Keys != 1 || ce.Sample[0] != "a" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	if got := r.seqs("a"); len(got) != 0 {
		t.Fatalf("a handled %v during its backoff", got)
	}
	if got := r.seqs("b"); len(got) != 20 || !isSorted(got) {
		t.Fatalf("b handled %v", got)
	}
}

// gatedParks is a park store whose Append announces itself and waits for a
// token, so a test can act while a key is being parked.
type gatedParks struct {
	*runtime.MemoryParkStore[string, ev]
	appending chan struct{}
	gate      chan struct{}
}

func (p *gatedParks) Append(ctx context.Context, key string, reason string, events []runtime.ParkedEvent[ev]) error {
	p.appending <- struct{}{}
	<-p.gate
	return p.MemoryParkStore.Append(ctx, key, reason, events)
}

// TestReplayRequestedWhileParking asks for a replay while the key's first
// failure is being written to the park store: the request must be served
// once the park is written, not left on a lane that nobody runs.
func TestReplayRequestedWhileParking(t *testing.T) {
	r := newRecorder()
	parks := &gatedParks{
		MemoryParkStore: runtime.NewMemoryParkStore[string, ev](),
		appending:       make(chan struct{}),
		gate:            make(chan struct{}),
	}
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Retry: fastRetry, Parks: parks})
	ctx := context.Background()
	if err := e.Submit(ctx, "a", ev{Seq: 1, Permanent: true}); err != nil {
		t.Fatal(err)
	}
	<-parks.appending // a/1 failed and the key is being parked
	r.fix("a")
	// A cancelled context returns at once; the replay request stays.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := e.Replay(cancelled, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("replay while parking: %v", err)
	}
	parks.gate <- struct{}{}
	flush(t, e)
	if got := fmt.Sprint(r.seqs("a")); got != "[1]" {
		t.Fatalf("a handled %s after the replay, want [1]", got)
	}
	s := e.Stats()
	if s.Parked != 0 || s.ParkedKeys != 0 || s.Replayed != 1 {
		t.Fatalf("stats %+v", s)
	}
	checkInvariant(t, s)
}

// failingParks is a park store whose first Append announces itself, waits
// for release and fails; later ones store.
type failingParks struct {
	*runtime.MemoryParkStore[string, ev]
	appending, release chan struct{}
	failed             atomic.Bool
}

func (p *failingParks) Append(ctx context.Context, key string, reason string, events []runtime.ParkedEvent[ev]) error {
	if p.failed.CompareAndSwap(false, true) {
		close(p.appending)
		<-p.release
		return errors.New("park store down")
	}
	return p.MemoryParkStore.Append(ctx, key, reason, events)
}

// A ParkNow that comes while a key's park is being written waits for the
// worker; when the store fails it is served at once (its park writes
// again), not after the store's retry delay (an hour here).
func TestParkNowDuringAFailingParkStoreIsServedBeforeTheRetry(t *testing.T) {
	r := newRecorder()
	parks := &failingParks{MemoryParkStore: runtime.NewMemoryParkStore[string, ev](), appending: make(chan struct{}), release: make(chan struct{})}
	e := mustNew(t, r.handle, runtime.Config[string, ev]{Parks: parks, Logger: discardLogger(),
		Retry: runtime.Retry{Attempts: 3, Initial: time.Hour, Max: time.Hour, NoJitter: true}})
	defer e.Close(context.Background())
	for _, x := range []ev{{Seq: 1, Permanent: true}, {Seq: 2}, {Seq: 3}} {
		if err := e.Submit(t.Context(), "k", x); err != nil {
			t.Fatal(err)
		}
	}
	<-parks.appending // k/1 failed and the key is being parked
	parkNowThenFail(t, e, "k", 3, parks.release)
}

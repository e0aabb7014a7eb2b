package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// attemptSeen is what a handler saw of its context.
type attemptSeen struct {
	deadline   time.Time
	hasDL      bool
	err, cause error
	child      error // of a context derived with WithCancel
	afterFunc  bool  // context.AfterFunc ran
	leaked     context.Context
}

// A handler whose timeout passes sees its context end with the timeout's
// cause, on the engine's clock, and so does a context it derived; after
// the attempt returns, its context is done (a goroutine it left behind
// stops).
func TestAttemptContextEndsAtItsDeadline(t *testing.T) {
	clk := &runtime.TestClock{}
	started := make(chan struct{})
	seen := make(chan attemptSeen, 1)
	h := func(ctx context.Context, key string, e ev) error {
		var s attemptSeen
		s.deadline, s.hasDL = ctx.Deadline()
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		ran := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { close(ran) })
		defer stop()
		close(started)
		<-ctx.Done()
		<-child.Done()
		<-ran
		s.err, s.cause, s.child, s.afterFunc, s.leaked = ctx.Err(), context.Cause(ctx), child.Err(), true, ctx
		seen <- s
		return ctx.Err()
	}
	cfg := runtime.Config[string, ev]{Timeout: 5 * time.Second, Retry: runtime.Retry{Attempts: 1}}
	runtime.UseTestClock(&cfg, clk)
	before := time.Now()
	e := mustNew(t, h, cfg)
	if err := e.Submit(context.Background(), "a", ev{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	<-started
	clk.Advance(4 * time.Second) // not yet
	select {
	case s := <-seen:
		t.Fatalf("the context ended before its deadline: %+v", s)
	default:
	}
	clk.Advance(time.Second + 2*time.Millisecond)
	s := <-seen
	if !s.hasDL || s.deadline.Before(before.Add(5*time.Second)) || s.deadline.After(time.Now().Add(5*time.Second)) {
		t.Errorf("deadline %v (set %v), want about 5s after the submit", s.deadline, s.hasDL)
	}
	if s.err != context.DeadlineExceeded || s.cause != context.DeadlineExceeded || s.child != context.DeadlineExceeded || !s.afterFunc {
		t.Errorf("err %v, cause %v, child %v, after func %v; want the deadline exceeded, in the child too, and the after func run", s.err, s.cause, s.child, s.afterFunc)
	}
	flush(t, e)
	if st := e.Stats(); st.Parked != 1 {
		t.Errorf("the timed-out event did not park: %+v", st)
	}
	if err := s.leaked.Err(); err != context.DeadlineExceeded {
		t.Errorf("the context after its attempt: %v", err)
	}
	select {
	case <-s.leaked.Done():
	default:
		t.Error("the context of a finished attempt is not done")
	}
}

// An attempt that returns before its deadline leaves a context that is
// done, cancelled, so that a goroutine the handler started sees it.
func TestAttemptContextEndsWithItsAttempt(t *testing.T) {
	var mu sync.Mutex
	var ctxs []context.Context
	h := func(ctx context.Context, key string, e ev) error {
		mu.Lock()
		ctxs = append(ctxs, ctx)
		mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
		return nil
	}
	for _, cfg := range []runtime.Config[string, ev]{
		{Timeout: time.Hour},
		{OnOutcome: func(string, uint64, runtime.Outcome) {}},
	} {
		e := mustNew(t, h, cfg)
		for i := range 3 {
			if err := e.Submit(context.Background(), "a", ev{Seq: i}); err != nil {
				t.Fatal(err)
			}
		}
		flush(t, e)
		if s := e.Stats(); s.Handled != 3 {
			t.Fatalf("%+v", s)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[context.Context]bool{}
	for _, ctx := range ctxs {
		if seen[ctx] {
			t.Error("two attempts shared a context")
		}
		seen[ctx] = true
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("after its attempt, err %v", ctx.Err())
		}
		<-ctx.Done()
	}
}

// When Close gives up, the running attempts' contexts end, with or without
// a timeout.
func TestCloseAbortEndsAttemptContexts(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Hour} {
		started := make(chan struct{})
		h := func(ctx context.Context, key string, e ev) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}
		e, err := runtime.New(h, runtime.Config[string, ev]{Timeout: timeout, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Submit(context.Background(), "a", ev{Seq: 1}); err != nil {
			t.Fatal(err)
		}
		<-started
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var ce *runtime.CloseError
		if err := e.Close(ctx); !errors.As(err, &ce) {
			t.Fatalf("timeout %v: Close: %v", timeout, err)
		}
	}
}

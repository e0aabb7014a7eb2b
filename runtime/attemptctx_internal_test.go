package runtime

import (
	"context"
	"sync"
	"testing"
	"unsafe"
)

// An attempt's context stays small: a worker cuts one from its slab per
// attempt, and the bytes are what the garbage collector pays for.
func TestAttemptContextIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(attemptCtx{}); n > 48 {
		t.Errorf("attemptCtx is %d bytes, want at most 48", n)
	}
}

// Waiters that come while the context ends either find it ended or are
// woken by its end: a Done channel always closes, an AfterFunc always
// runs, exactly once, and Err and the cause agree.
func TestAttemptContextEndRacesWaiters(t *testing.T) {
	env := &attemptEnv{clock: &clock{}}
	for range 2000 {
		c := &attemptCtx{env: env}
		var wg sync.WaitGroup
		ran := make(chan struct{}, 2)
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			<-c.Done()
		})
		wg.Go(func() {
			<-start
			context.AfterFunc(c, func() { ran <- struct{}{} })
		})
		wg.Go(func() {
			<-start
			child, cancel := context.WithCancel(c)
			defer cancel()
			<-child.Done()
			if child.Err() != context.DeadlineExceeded {
				t.Errorf("child: %v", child.Err())
			}
		})
		close(start)
		if !c.end(endDeadline) || c.end(endCanceled) {
			t.Fatal("end did not end the context exactly once")
		}
		wg.Wait()
		<-ran
		select {
		case <-ran:
			t.Fatal("an AfterFunc ran twice")
		default:
		}
		if c.Err() != context.DeadlineExceeded || context.Cause(c) != context.DeadlineExceeded || !c.timedOut() || c.wasWithdrawn() {
			t.Fatalf("err %v, cause %v", c.Err(), context.Cause(c))
		}
	}
}

// A worker never hands out one context twice: its slab only shrinks.
func TestAttemptContextsAreNotReused(t *testing.T) {
	w := &worker[string, int]{}
	seen := map[*attemptCtx]bool{}
	for range 3 * attemptSlab {
		c := w.newAttemptCtx()
		if seen[c] {
			t.Fatal("a context was handed out twice")
		}
		seen[c] = true
	}
}

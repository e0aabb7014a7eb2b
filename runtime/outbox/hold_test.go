package outbox

import (
	"errors"
	"sync"
	"testing"
)

// TestHoldCheckShares: a caller that comes while a check is in flight
// waits for the next one (the one in flight may have begun before the
// session ended), callers that wait together share that next check, and
// once a check fails every caller gets its error without another check.
func TestHoldCheckShares(t *testing.T) {
	type call struct{ answer chan error }
	calls := make(chan call)
	h := newHoldCheck(func() error {
		c := call{answer: make(chan error)}
		calls <- c
		return <-c.answer
	})
	waiting := make(chan struct{}, 8)
	h.waiting = func() { waiting <- struct{}{} }

	results := make(chan error, 8)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { results <- h.held() })
	first := <-calls // check 1 in flight
	for range 3 {
		wg.Go(func() { results <- h.held() })
	}
	for range 3 {
		<-waiting
	}
	first.answer <- nil
	if err := <-results; err != nil {
		t.Fatalf("the first caller: %v", err)
	}
	second := <-calls // one of the three runs check 2 for all of them
	select {
	case err := <-results:
		t.Fatalf("a caller that came during check 1 returned %v before check 2 ended", err)
	default:
	}
	second.answer <- nil
	for range 3 {
		if err := <-results; err != nil {
			t.Fatalf("a caller of check 2: %v", err)
		}
	}

	lost := errors.New("session ended")
	wg.Go(func() { results <- h.held() })
	(<-calls).answer <- lost
	if err := <-results; !errors.Is(err, lost) {
		t.Fatalf("the caller of the failed check: %v", err)
	}
	if err := h.held(); !errors.Is(err, lost) || !errors.Is(h.lost(), lost) {
		t.Fatalf("after the failure: %v (lost: %v), want its error without a check", err, h.lost())
	}
}

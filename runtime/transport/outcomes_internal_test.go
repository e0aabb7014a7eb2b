package transport

import (
	"testing"

	"github.com/ordergen/ordergen/runtime"
)

// An outcome told while another goroutine holds the source's lock does not
// wait for it: OnOutcome returns at once, and the holder settles the
// message before it lets the lock go. Without the stack, OnOutcome blocks
// until the lock is free (the test then times out).
func TestOutcomeToldUnderTheLockIsAppliedByItsHolder(t *testing.T) {
	var settled []Settlement
	s := &Source[string, int, int]{settle: func(_ int, st Settlement) { settled = append(settled, st) }}
	o := s.Own()
	tags := make([]uint64, 3)
	for i := range tags {
		tag, err := s.Take(o, i)
		if err != nil {
			t.Fatal(err)
		}
		sl := s.get(tag)
		sl.handing, sl.accepted, sl.remaining = false, 1, 1 // offered to one subscriber
		tags[i] = tag
	}

	s.mu.Lock() // a feeder holds the lock
	told := make(chan struct{})
	go func() {
		s.OnOutcome("k", tags[0], runtime.Handled)
		s.OnOutcome("k", tags[1], runtime.Withdrawn)
		close(told)
	}()
	<-told
	if len(settled) != 0 || s.live != 3 {
		t.Fatalf("settled %v, live %d while the lock was held; want nothing settled yet", settled, s.live)
	}
	s.unlock()
	if want := []Settlement{Finished, Unfinished}; len(settled) != 2 || settled[0] != want[0] || settled[1] != want[1] {
		t.Fatalf("settled %v after the holder unlocked; want %v, in the order told", settled, want)
	}

	// Told while held and seen by the next holder: lock applies the stack
	// before anything else looks at the books.
	s.mu.Lock()
	told2 := make(chan struct{})
	go func() { s.OnOutcome("k", tags[2], runtime.Handled); close(told2) }()
	<-told2
	s.mu.Unlock() // a holder that does not apply (as if it let go just before the push)
	if got := s.Unsettled(); got != 0 {
		t.Fatalf("Unsettled = %d after every outcome was told; want 0", got)
	}
	if len(settled) != 3 {
		t.Fatalf("settled %v; want three settlements", settled)
	}
}

package transport

import (
	"sync"
	"sync/atomic"
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

// No outcome is left on the stack when the tellers are done: workers tell
// outcomes while a feeder keeps taking and letting go of the lock, and once
// every teller returned, every message is settled without anybody taking
// the lock again. (The count is read from the settle function, not through
// the Source, whose lock would apply what was left.) A teller that pushed
// and returned while nobody looked again would leave its message unsettled
// for good: a lost wake-up.
func TestNoToldOutcomeIsLeftBehind(t *testing.T) {
	for round := range 200 {
		var settled atomic.Int64
		s := &Source[string, int, int]{settle: func(int, Settlement) { settled.Add(1) }}
		o := s.Own()
		const n = 64
		tags := make([]uint64, n)
		for i := range tags {
			tag, err := s.Take(o, i)
			if err != nil {
				t.Fatal(err)
			}
			sl := s.get(tag)
			sl.handing, sl.accepted, sl.remaining = false, 1, 1
			tags[i] = tag
		}
		stop := make(chan struct{})
		fed := make(chan struct{})
		go func() { // a feeder that takes and lets go of the lock
			defer close(fed)
			for {
				select {
				case <-stop:
					return
				default:
					s.Unsettled()
				}
			}
		}()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					s.OnOutcome("k", tags[i], runtime.Handled)
				}
			})
		}
		wg.Wait()
		close(stop)
		<-fed
		if got := settled.Load(); got != n {
			t.Fatalf("round %d: %d of %d messages settled once the tellers and the feeder were done; the rest were left on the stack", round, got, n)
		}
	}
}

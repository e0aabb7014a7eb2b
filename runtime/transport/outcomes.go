package transport

import (
	"sync/atomic"

	"github.com/ordergen/ordergen/runtime"
)

// Outcomes told while another goroutine holds the source's lock.
//
// Every event's outcome reaches Source.OnOutcome from the worker that
// finished it, while the transport's feeder takes and offers messages under
// the same lock: with a mutex taken per outcome, the workers and the feeder
// queue on it, and a contended mutex hands over through the scheduler. So
// an outcome whose teller finds the lock taken is left to the holder
// instead: it is pushed on a lock-free stack, and whoever holds the lock
// applies the stack's outcomes, in the order they were told, when it takes
// the lock (Source.lock) and again before it lets it go (Source.unlock).
//
// Why none is left behind: a teller pushes, then tries the lock. If it
// gets it, it applies the stack itself. If not, a holder had it at that
// moment, and that holder looks at the stack after it unlocks (the push
// comes before the failed try, the try before that unlock, in the order of
// the atomic operations), and, finding outcomes, tries the lock again: it
// gets it and applies them, or another holder has it and the same holds
// for that one. And why none is seen late: whoever takes the lock applies
// the stack first, so an outcome told before a lock was taken (OnOutcome
// returned) has been applied when the holder looks at the books.

// toldOutcome is an outcome on the stack.
type toldOutcome struct {
	next *toldOutcome
	tag  uint64
	o    runtime.Outcome
}

// outcomeStack is a lock-free stack of outcomes: pushed one at a time,
// taken all at once (so no ABA: a node is never popped alone).
type outcomeStack struct{ head atomic.Pointer[toldOutcome] }

func (st *outcomeStack) push(t *toldOutcome) {
	for {
		old := st.head.Load()
		t.next = old
		if st.head.CompareAndSwap(old, t) {
			return
		}
	}
}

// takeAll empties the stack and returns its outcomes in the order they
// were pushed.
func (st *outcomeStack) takeAll() *toldOutcome {
	t := st.head.Swap(nil)
	var fifo *toldOutcome
	for t != nil {
		next := t.next
		t.next = fifo
		fifo = t
		t = next
	}
	return fifo
}

// lock takes the source's lock and applies the outcomes told meanwhile.
func (s *Source[K, E, M]) lock() {
	s.mu.Lock()
	s.applyTold()
}

// tryLock takes the source's lock if it is free, applies the outcomes told
// meanwhile, and reports whether it took it.
func (s *Source[K, E, M]) tryLock() bool {
	if !s.mu.TryLock() {
		return false
	}
	s.applyTold()
	return true
}

// unlock applies the outcomes told while the lock was held, lets it go,
// and takes it again for outcomes told in between whose tellers found it
// taken (see the top of the file).
func (s *Source[K, E, M]) unlock() {
	for {
		s.applyTold()
		s.mu.Unlock()
		if s.told.head.Load() == nil || !s.mu.TryLock() {
			return
		}
	}
}

// applyTold applies the outcomes on the stack; s.mu is held.
func (s *Source[K, E, M]) applyTold() {
	if s.told.head.Load() == nil {
		return
	}
	for t := s.told.takeAll(); t != nil; t = t.next {
		s.apply(t.tag, t.o)
	}
}

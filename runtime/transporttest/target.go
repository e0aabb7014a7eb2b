package transporttest

import (
	"context"
	"errors"
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// watched is the target a member's consumer feeds: its engine, watched.
// It counts the events the engine holds for the consumer (submitted, and
// without a final outcome yet; an event parked in memory is still held),
// the most it ever held, the refusals, and the calls to Withdraw.
type watched struct {
	transport.Target[Event]
	inMemory bool

	mu        sync.Mutex
	held      int
	maxHeld   int
	refused   int
	withdraws int
	signals   []heldSignal
	refusal   chan struct{} // closed at the first refusal
	withdrawn chan struct{} // closed at the first Withdraw
}

// heldSignal is closed once the engine holds n events.
type heldSignal struct {
	n  int
	ch chan struct{}
}

func watch(t transport.Target[Event], inMemory bool) *watched {
	return &watched{Target: t, inMemory: inMemory, refusal: make(chan struct{}), withdrawn: make(chan struct{})}
}

func (w *watched) SubmitTagged(ctx context.Context, e Event, tag uint64, from int) (int, error) {
	n, err := w.Target.SubmitTagged(ctx, e, tag, from)
	w.mu.Lock()
	defer w.mu.Unlock()
	if n > from {
		// Its outcome may have been counted already (held went below
		// zero for a moment): the most held is never overstated.
		w.held += n - from
		w.maxHeld = max(w.maxHeld, w.held)
		w.notify()
	}
	if errors.Is(err, runtime.ErrBacklogFull) {
		if w.refused == 0 {
			close(w.refusal)
		}
		w.refused++
	}
	return n, err
}

func (w *watched) Withdraw(ctx context.Context, match func(uint64) bool) (int, error) {
	w.mu.Lock()
	if w.withdraws == 0 {
		close(w.withdrawn)
	}
	w.withdraws++
	w.mu.Unlock()
	return w.Target.Withdraw(ctx, match)
}

// outcome counts an event's outcome; called before the consumer hears it,
// so that the consumer never takes a message while held is not yet down.
func (w *watched) outcome(tag uint64, o runtime.Outcome) {
	if tag == 0 || (o == runtime.Parked && w.inMemory) {
		return
	}
	w.mu.Lock()
	w.held--
	w.mu.Unlock()
}

// holding returns a channel closed once the engine holds n events.
func (w *watched) holding(n int) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.signals = append(w.signals, heldSignal{n: n, ch: ch})
	w.notify()
	return ch
}

// notify closes the signals reached; w.mu is held.
func (w *watched) notify() {
	kept := w.signals[:0]
	for _, s := range w.signals {
		if w.held >= s.n {
			close(s.ch)
		} else {
			kept = append(kept, s)
		}
	}
	w.signals = kept
}

func (w *watched) counts() (held, maxHeld, refused, withdraws int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held, w.maxHeld, w.refused, w.withdraws
}

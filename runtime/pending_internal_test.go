package runtime

import (
	"sync/atomic"
	"testing"
)

// TestPendingNowNeverTorn moves counts between a worker's unflushed count
// and Engine.pending, as flush does, while reading pendingNow: the true
// number of pending events never changes, so every reading must equal it.
// Without flush's bracketing a reading taken between its two writes counts
// the moved events twice.
func TestPendingNowNeverTorn(t *testing.T) {
	e := &Engine[string, int]{}
	w := &worker[string, int]{e: e}
	e.ws = []*worker[string, int]{w}
	const truth = 1000
	e.pending.Store(truth)

	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			// Events submitted and finished by this worker: pending and
			// unflushed grow together (bracketed like flush, so the
			// reader skips this half too), then flush moves them back.
			w.flushes.Add(1)
			e.pending.Add(7)
			w.unflushed.Add(7)
			w.flushes.Add(1)
			w.flush()
		}
	}()
	for i := 0; i < 20000; i++ {
		if got := e.pendingNow(); got != truth {
			stop.Store(true)
			<-done
			t.Fatalf("reading %d: pendingNow = %d, want %d", i, got, truth)
		}
	}
	stop.Store(true)
	<-done
}

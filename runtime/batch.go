package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/runtime/internal/gen"
)

// isVerdicts reports whether err came from a batch guard's per-event
// verdicts (runtime/genimpl's Verdicts).
func isVerdicts(err error) bool {
	_, ok := errors.AsType[*gen.Verdicts](err)
	return ok
}

// batchVerdicts returns the verdicts err carries, if it came from a batch
// guard's per-event verdicts (genimpl.Verdicts: verdicts[i] is the verdict
// on events[i], nil when it was handled, a Skip when it was skipped or a
// Hold when it waits for a gap; the events after the last verdict were not
// decided and go back to the front of their lane, in order), and an error
// that fails the batch when they are unusable: none decided, more verdicts
// than events, or a verdict that is neither nil, a Skip nor a Hold.
func batchVerdicts(err error, n int) ([]error, bool, error) {
	v, ok := errors.AsType[*gen.Verdicts](err)
	if !ok {
		return nil, false, nil
	}
	switch {
	case len(v.Verdicts) == 0:
		return nil, true, Permanent(errors.New("ordergen: a batch handler's Verdicts decided none of its events"))
	case len(v.Verdicts) > n:
		return nil, true, Permanent(fmt.Errorf("ordergen: a batch handler's Verdicts has %d verdicts for %d events", len(v.Verdicts), n))
	}
	for i, verdict := range v.Verdicts {
		if verdict == nil {
			continue
		}
		if _, ok := IsSkip(verdict); ok {
			continue
		}
		if _, ok := IsHold(verdict); ok {
			continue
		}
		return nil, true, Permanent(fmt.Errorf("ordergen: a batch handler's verdict %d is neither nil, a Skip nor a Hold: %w", i, verdict))
	}
	return v.Verdicts, true, nil
}

// judgeBatch records the verdicts of a batch handler on w.buf (see
// Verdicts): each decided event reaches its outcome or is held, and the
// undecided ones go back to the lane unattempted.
func (w *worker[K, E]) judgeBatch(l *lane[K, E], verdicts []error) result {
	e := w.e
	done, handled := 0, false
	for i, verdict := range verdicts {
		it := &w.buf[i]
		if verdict == nil {
			w.t.handled++
			w.finished(l, it, Handled, &done)
			handled = true
			continue
		}
		if reason, ok := IsSkip(verdict); ok {
			w.t.skipped++
			w.skipReason(&w.t, verdictSkipped, reason, 1)
			w.finished(l, it, Skipped, &done)
			// SkipApplied: the key moved on as after a handled event.
			handled = handled || skipApplied(verdict)
			continue
		}
		reason, _ := IsHold(verdict)
		w.held = append(w.held, heldItem[E]{item: *it, reason: reason, heldAt: e.now()})
	}
	for i := len(verdicts); i < len(w.buf); i++ {
		w.buf[i].attempts-- // the call was not theirs
	}
	res := result{kind: ranAll, stopAt: len(verdicts), done: done}
	if handled && (w.laneHeld || len(w.held) > 0) {
		// A handled event (or one skipped as applied) may have filled the
		// gap of the held ones: they are offered again first.
		res.kind = reoffer
	}
	return res
}

// linger reports whether l, a lane of a batch engine, waits for more events
// before its next batch (Config.Linger), and arms its timer if so; l is
// running and its shard locked. It waits while the lane holds fewer than
// BatchSize events and the oldest has waited less than Linger: never for
// events of a replay, while the engine closes, or when no Linger is set.
func (w *worker[K, E]) linger(l *lane[K, E]) bool {
	e := w.e
	l.lingering = false
	if e.cfg.Linger <= 0 || l.q.len() >= e.cfg.BatchSize || l.replay != nil || e.closing.Load() {
		return false
	}
	wait := l.q.front().at + int64(e.cfg.Linger) - e.now()
	if wait <= 0 {
		return false
	}
	l.lingering = true
	w.armTimer(l, time.Duration(wait))
	return true
}

// endLinger ends the wait of a lingering lane whose batch just filled, so
// that it runs now, and reports whether the caller must push it; sh.mu is
// held.
func (e *Engine[K, E]) endLinger(l *lane[K, E]) bool {
	if !l.lingering || l.state != laneWaiting || l.q.len() < e.cfg.BatchSize {
		return false
	}
	l.lingering = false
	e.stopTimer(l.timer) // if it fired, its function finds the lane not waiting
	l.state = laneQueued // still busy: waiting counted as busy
	return true
}

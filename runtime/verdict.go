package runtime

import (
	"errors"
	"fmt"

	"github.com/ordergen/ordergen/runtime/internal/gen"
)

// The outcome path. judge decides, in one place, what becomes of an
// attempt's result, for an event of a lane, a batch of a batch handler and
// an event run inline alike. A verdict that finishes events where they run
// (handled, skipped, dropped) is counted in a tally (tally.verdict, and
// skipReason for the metrics) until the events retire (retire.go), by a
// lane's turn (apply) and by the inline loop alike; the inline loop gives
// the key of an event with any other verdict a lane, whose turn then
// applies the same verdict (applyInLane).

// verdict is what becomes of one attempt of an event (or of a batch).
type verdict uint8

const (
	// verdictHandled: the handler succeeded; the event is Handled.
	verdictHandled verdict = iota
	// verdictSkipped: a guard's Skip; the event is Skipped, not retried.
	verdictSkipped
	// verdictSkippedApplied: a guard's SkipApplied: Skipped, and the key
	// moved on as after a handled event (its held events are due again).
	verdictSkippedApplied
	// verdictDropped: out of attempts under the DropEvent policy; Dropped.
	verdictDropped
	// verdictDeadLetter: out of attempts under the SendToDeadLetter policy: the
	// event goes to the sink, and parks its key when the sink fails.
	verdictDeadLetter
	// verdictPark: out of attempts under the ParkKey policy: the key parks.
	verdictPark
	// verdictHeld: a guard's Hold: the event waits in its key's resequencer.
	verdictHeld
	// verdictRetry: the attempt failed and is tried again after a backoff.
	verdictRetry
	// verdictWithdrawn: a withdrawal stopped the attempt (or kept it from
	// starting): the event goes back unjudged, for the withdrawal to take.
	verdictWithdrawn
	// verdictAbandoned: Close gave up: the event goes back unfinished.
	verdictAbandoned
)

// outcome is the outcome a finishing verdict gives an event (0 for the
// others; dead-lettering finishes only once the sink took the event).
func (v verdict) outcome() Outcome {
	switch v {
	case verdictHandled:
		return Handled
	case verdictSkipped, verdictSkippedApplied:
		return Skipped
	case verdictDropped:
		return Dropped
	}
	return 0
}

// finishesInline reports whether an event run inline can take the verdict
// without a lane: it then has its outcome, and nothing waits behind it.
// Those verdicts come first in their list, so that the inline loop asks
// once, and a test keeps it so.
func (v verdict) finishesInline() bool { return v <= verdictDropped }

// judge classifies err, the result of an attempt of it (of the batch that
// starts with it, when batch is set). It returns the verdict, the guard's
// reason for a skip or a hold, and the failure to park or dead-letter
// with. A batch handler cannot hold (its events would leave the lane out
// of order), so its Hold is a permanent failure.
func (w *worker[K, E]) judge(it *item[E], err error, batch bool) (v verdict, reason string, failure error) {
	if err == nil {
		return verdictHandled, "", nil
	}
	if reason, ok := IsSkip(err); ok {
		if skipApplied(err) {
			return verdictSkippedApplied, reason, nil
		}
		return verdictSkipped, reason, nil
	}
	e := w.e
	if e.aborted.Load() {
		return verdictAbandoned, "", nil
	}
	if err == errWithdrawing {
		return verdictWithdrawn, "", nil
	}
	if reason, ok := IsHold(err); ok {
		if !batch {
			return verdictHeld, reason, nil
		}
		err = Permanent(err)
	}
	if !IsPermanent(err) && int(it.attempts) < e.cfg.Retry.Attempts {
		return verdictRetry, "", nil
	}
	switch e.cfg.OnExhausted {
	case DropEvent:
		return verdictDropped, "", err
	case SendToDeadLetter:
		return verdictDeadLetter, "", err
	}
	return verdictPark, "", err
}

// skipReason notes n events of t skipped with v, if v is a skip: those
// skipped as unimplemented (the reason "unimplemented", which generated
// guards give) move from t's skipped to its unimplemented (Stats reports
// them apart, and adds them to Skipped), and the metrics record the reason
// (Stats counts them when they retire).
func (w *worker[K, E]) skipReason(t *tally, v verdict, reason string, n int) {
	if v != verdictSkipped && v != verdictSkippedApplied {
		return
	}
	if reason == gen.ReasonUnimplemented {
		t.skipped -= uint64(n)
		t.unimplemented += uint64(n)
	}
	if w.e.metrics != nil {
		w.skips.add(reason, uint64(n))
	}
}

// apply acts on v, the verdict of the attempt that covered w.buf[i:j] (one
// event, or a whole batch), during a lane's turn: it finishes the events
// the verdict finishes, counting them in *done and w.t and recording each
// outcome in it.out (endTake retires them), or sets the event aside as held.
// It reports whether the turn's processing stops there, and how.
func (w *worker[K, E]) apply(l *lane[K, E], i, j int, v verdict, reason string, failure error, done *int) (result, bool) {
	switch v {
	case verdictHandled, verdictSkipped, verdictSkippedApplied, verdictDropped:
		w.t.verdict(v, uint64(j-i))
		w.skipReason(&w.t, v, reason, j-i)
		for k := i; k < j; k++ {
			w.finished(l, &w.buf[k], v.outcome(), done)
		}
		if (v == verdictHandled || v == verdictSkippedApplied) && (w.laneHeld || len(w.held) > 0) {
			// The handled (or applied) event may have filled a gap: the held
			// events are offered again before the rest.
			return result{kind: reoffer, stopAt: j, done: *done}, true
		}
		return result{}, false
	case verdictHeld:
		w.held = append(w.held, heldItem[E]{item: w.buf[i], reason: reason, heldAt: w.e.now()})
		return result{}, false
	case verdictDeadLetter:
		for k := i; k < j; k++ {
			if serr := w.deadLetter(l, &w.buf[k], failure); serr != nil {
				return result{kind: parkNow, stopAt: k, done: *done, reason: parkReason(&w.buf[k], serr), err: serr}, true
			}
			w.finished(l, &w.buf[k], DeadLettered, done)
		}
		return result{}, false
	case verdictPark:
		return result{kind: parkNow, stopAt: i, done: *done, reason: parkReason(&w.buf[i], failure), err: failure}, true
	case verdictRetry:
		return result{kind: retryLater, stopAt: i, done: *done}, true
	case verdictWithdrawn:
		return result{kind: interrupted, stopAt: i, done: *done}, true
	}
	return result{kind: abandoned, stopAt: i, done: *done}, true
}

// finished records the outcome o of it and counts it in *done. A replayed
// event also leaves the park store here (without the lane's lock: the
// worker owns the event).
func (w *worker[K, E]) finished(l *lane[K, E], it *item[E], o Outcome, done *int) {
	it.out = o
	*done++
	if !it.replayed {
		return
	}
	e := w.e
	if err := e.cfg.Parks.Remove(e.base, l.key, it.seq); err != nil {
		// The event has its outcome; left in the store, a later replay
		// offers it again and the version guard skips it.
		e.cfg.Logger.Error("ordergen: park store failed to remove a replayed event",
			"engine", e.cfg.Name, "key", l.key, "error", err)
	}
}

// parkReason says why a failing event parks its key.
func parkReason[E any](it *item[E], err error) string {
	var p *PanicError
	switch {
	case errors.As(err, &p):
		return fmt.Sprintf("handler panicked on attempt %d: %v", it.attempts, p.Value)
	case IsPermanent(err):
		return fmt.Sprintf("permanent failure on attempt %d: %v", it.attempts, err)
	default:
		return fmt.Sprintf("failed %d attempts: %v", it.attempts, err)
	}
}

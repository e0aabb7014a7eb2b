package runtime

import (
	"math/rand/v2"
	"time"
)

// delay returns the backoff after the given failed attempt (from 1):
// exponential, capped at Max, with full jitter unless NoJitter.
func (r Retry) delay(attempt int) time.Duration {
	ceiling := float64(r.Initial)
	for i := 1; i < attempt && ceiling < float64(r.Max); i++ {
		ceiling *= r.Multiplier
	}
	d := time.Duration(min(ceiling, float64(r.Max)))
	if r.NoJitter || d <= 0 {
		return d
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// armTimer makes l wait for its timer (a retry's backoff, or room for a
// replay page) without holding a worker; l's shard is locked.
func (w *worker[K, E]) armTimer(l *lane[K, E], d time.Duration) {
	e := w.e
	if len(l.withdraws) > 0 {
		// The take has ended (its events put back or retired): serve a
		// Withdraw now rather than after the backoff.
		e.serveWithdrawals(l)
	}
	l.state = laneWaiting
	if e.aborted.Load() {
		return // Close gave up; the lane stays as it is
	}
	rearm(e, &l.timer, d, func() { e.timerDue(l) })
}

// rearm starts *t to run f after d, counting it in e.timers until f has
// run. A timer still pending is stopped first, and its count given back:
// Reset alone would replace its run while both stayed counted.
func rearm[K comparable, E any](e *Engine[K, E], t *timer, d time.Duration, f func()) {
	e.timers.Add(1)
	if *t == nil {
		*t = e.clock.afterFunc(d, f)
		return
	}
	e.stopTimer(*t)
	(*t).Reset(d)
}

// stopTimer stops t if it is armed and gives back its count; a timer that
// fired already runs its function, which gives the count back itself.
func (e *Engine[K, E]) stopTimer(t timer) {
	if t != nil && t.Stop() {
		e.timers.Done()
	}
}

// timerDue runs when l's timer fires: the lane is ready again.
func (e *Engine[K, E]) timerDue(l *lane[K, E]) {
	defer e.timers.Done()
	sh := l.shard
	sh.mu.Lock()
	if l.state != laneWaiting {
		sh.mu.Unlock()
		return
	}
	l.state = laneQueued // still busy: waiting counted as busy
	sh.mu.Unlock()
	e.rq.push(task[K, E]{l: l})
}

// armHoldTimer makes sure a timer checks the age of l's oldest held event;
// l's shard is locked.
func (w *worker[K, E]) armHoldTimer(l *lane[K, E]) {
	if l.holdArmed || len(l.held) == 0 {
		return
	}
	e := w.e
	if e.aborted.Load() {
		return
	}
	d := time.Duration(l.held[0].heldAt + int64(e.cfg.MaxHold) - e.now())
	l.holdArmed = true
	rearm(e, &l.holdTimer, d, func() { e.holdDue(l) })
}

// stopHoldTimer disarms l's hold timer; l's shard is locked.
func (e *Engine[K, E]) stopHoldTimer(l *lane[K, E]) {
	if !l.holdArmed {
		return
	}
	l.holdArmed = false
	e.stopTimer(l.holdTimer) // if it fired, its function finds it disarmed
}

// holdDue runs when l's oldest held event may have waited too long.
func (e *Engine[K, E]) holdDue(l *lane[K, E]) {
	defer e.timers.Done()
	sh := l.shard
	sh.mu.Lock()
	if !l.holdArmed {
		sh.mu.Unlock()
		return
	}
	l.holdArmed = false
	l.holdCheck = true
	push := e.schedule(l)
	sh.mu.Unlock()
	if push {
		e.rq.push(task[K, E]{l: l})
	}
}

// holdExpired reports whether l's oldest held event waited longer than
// MaxHold (or the engine is closing, which cannot wait for the gap); if
// not, it re-arms the timer. l's shard is locked.
func (w *worker[K, E]) holdExpired(l *lane[K, E]) bool {
	if len(l.held) == 0 {
		return false
	}
	if w.e.closing.Load() || w.e.now()-l.held[0].heldAt >= int64(w.e.cfg.MaxHold) {
		return true
	}
	w.armHoldTimer(l)
	return false
}

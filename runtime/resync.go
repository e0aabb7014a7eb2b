package runtime

import (
	"context"
	"runtime/debug"
	"strconv"
)

// ResyncFunc brings what the guards stored for key up to date from the
// source of truth, when the key's resequencer bound is hit (Config.Resync):
// the gap its held events wait on is not going to fill in time (an event
// was lost), and the owner of the data can say what the key's state is
// now. held are the key's held events, in arrival order. It returns how many
// of them the new state covers; the engine then offers every held event
// again, in order, and the guards skip the ones covered and apply the ones
// after, as for any held event. Generated dispatchers implement it over the
// handler's Resync method and their guard stores.
//
// An error is retried with the Retry policy, waiting its backoff without a
// worker (the key takes no new event meanwhile); when the attempts run out,
// or at once for a Permanent error, the key is parked as without a
// ResyncFunc, with the reason. Each call gets the per-attempt Timeout; a
// panic counts as a failure.
type ResyncFunc[K comparable, E any] func(ctx context.Context, key K, held []E) (covered int, err error)

// boundHit deals with l, whose resequencer bound was hit: why says which
// (the park reason), bound and limit how it is logged. Without
// Config.Resync, or while the engine closes (a resync could hold up Close),
// the key is parked; otherwise the worker resyncs it first (resync). l is
// running and its shard locked.
func (w *worker[K, E]) boundHit(l *lane[K, E], why, bound string, limit any) turnStep {
	e := w.e
	if e.cfg.Resync == nil || e.closing.Load() {
		if !e.closing.Load() {
			e.cfg.Logger.Warn("ordergen: resequencer bound hit: parking the key", "engine", e.cfg.Name, "key", l.key,
				"held", len(l.held), bound, limit, "reason", l.held[0].reason)
		}
		return w.park(l, why)
	}
	if !l.resync {
		l.resync, l.resyncTries, l.resyncWhy = true, 0, why
		e.stopHoldTimer(l)
	}
	return keepRunning
}

// resync runs Config.Resync for l, whose resequencer bound was hit; l is
// running and its shard locked, which resync releases around the call. On
// success the held events go back to the front of the lane, to be judged
// again against the new state; on a failure the lane waits for a retry or,
// out of attempts, parks.
func (w *worker[K, E]) resync(l *lane[K, E]) turnStep {
	e := w.e
	sh := l.shard
	if len(l.held) == 0 {
		l.resync = false // withdrawn meanwhile: nothing left to resync
		return keepRunning
	}
	held := make([]E, len(l.held))
	for i := range l.held {
		held[i] = l.held[i].ev
	}
	gap := l.held[0].reason
	l.resyncTries++
	sh.mu.Unlock()
	covered, err := w.callResync(l.key, held)
	sh.mu.Lock()
	if err == nil {
		l.resync = false
		w.c.resynced.Add(1)
		e.cfg.Logger.Warn("ordergen: resequencer bound hit: key resynced from the source of truth", "engine", e.cfg.Name, "key", l.key,
			"gap", gap, "held", len(held), "dropped", covered, "bound", l.resyncWhy)
		w.reofferHeld(l)
		return keepRunning
	}
	if e.aborted.Load() {
		return giveUp
	}
	if !IsPermanent(err) && int(l.resyncTries) < e.cfg.Retry.Attempts {
		w.armTimer(l, e.cfg.Retry.delay(int(l.resyncTries)))
		return waitForTimer
	}
	l.resync = false
	reason := "resync failed after " + strconv.Itoa(int(l.resyncTries)) + " attempts: " + err.Error() + "; " + l.resyncWhy
	e.cfg.Logger.Warn("ordergen: resync failed: parking the key", "engine", e.cfg.Name, "key", l.key,
		"gap", gap, "held", len(l.held), "attempts", l.resyncTries, "error", err)
	if len(l.held) == 0 {
		return keepRunning
	}
	return w.park(l, reason)
}

// callResync calls Config.Resync once, with the per-attempt timeout, a
// panic turned into a PanicError.
func (w *worker[K, E]) callResync(key K, held []E) (covered int, err error) {
	e := w.e
	ctx := e.base
	if e.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.cfg.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			covered, err = 0, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return e.cfg.Resync(ctx, key, held)
}

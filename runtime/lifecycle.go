package runtime

import (
	"context"
	"fmt"
	"strings"
)

// waitQuiet waits until no lane is queued, running or waiting to retry and
// no inbox waits for dispatch. A shard that is quiet when looked at has
// finished every event submitted to it before the look.
func (e *Engine[K, E]) waitQuiet(ctx context.Context) error {
	for {
		ch := e.quiet.Register()
		if e.allQuiet() {
			e.quiet.Unregister()
			return nil
		}
		select {
		case <-ch:
			e.quiet.Unregister()
		case <-ctx.Done():
			e.quiet.Unregister()
			return ctx.Err()
		}
	}
}

// allQuiet reports whether every shard is quiet.
func (e *Engine[K, E]) allQuiet() bool {
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		busy := sh.busy
		sh.mu.Unlock()
		if busy != 0 {
			return false
		}
	}
	return true
}

// Flush waits until the engine is quiescent: every accepted event has an
// outcome, or is held (waiting for a gap) or parked. Under a steady stream
// of submissions it may not return before ctx ends.
func (e *Engine[K, E]) Flush(ctx context.Context) error {
	return e.waitQuiet(ctx)
}

// CloseError is returned by Close when ctx ended before the engine drained.
// It says what was left unfinished; those events had no outcome.
type CloseError struct {
	// Pending is the number of events left without an outcome.
	Pending int64
	// Keys is the number of keys they belong to.
	Keys int
	// Sample names up to ten of those keys.
	Sample []string
	// Err is ctx's error.
	Err error
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("ordergen: close: %d events of %d keys left unfinished (keys %s): %v",
		e.Pending, e.Keys, strings.Join(e.Sample, ", "), e.Err)
}

// Unwrap returns ctx's error.
func (e *CloseError) Unwrap() error { return e.Err }

// Close stops accepting (Submit, Replay and Discard then fail with
// ErrClosed), waits until every accepted event has an outcome, parks the
// events still held for a gap (they cannot be resolved any more; a durable
// park store keeps them for the next start), and stops the workers. Parked
// keys stay parked.
//
// If ctx ends first, Close cancels the contexts of running handlers, stops
// the workers after their current event, and returns a *CloseError (which
// wraps ctx's error) saying what was left. Either way no goroutine of the
// engine survives Close; a handler that ignores its context delays Close
// until it returns. Calling Close again returns ErrClosed.
func (e *Engine[K, E]) Close(ctx context.Context) error {
	if !e.closing.CompareAndSwap(false, true) {
		return e.errClosed
	}
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		sh.closed = true
		sh.mu.Unlock()
	}
	e.room.Broadcast() // blocked submitters see the engine closed
	err := e.waitQuiet(ctx)
	if err == nil {
		e.parkHeld()
		err = e.waitQuiet(ctx)
	}
	if err != nil {
		return e.abort(err)
	}
	e.rq.stop(false)
	e.workers.Wait()
	e.timers.Wait()
	e.clock.close()
	e.stopMetrics()
	e.stop()
	return nil
}

// parkHeld asks every lane with held events to park them.
func (e *Engine[K, E]) parkHeld() {
	for i := range e.shards {
		sh := &e.shards[i]
		var push []*lane[K, E]
		sh.mu.Lock()
		for _, l := range sh.lanes {
			if len(l.held) > 0 {
				l.holdCheck = true
				if e.schedule(l) {
					push = append(push, l)
				}
			}
		}
		sh.mu.Unlock()
		for _, l := range push {
			e.rq.push(task[K, E]{l: l})
		}
	}
}

// abort stops everything at once after Close's ctx ended.
func (e *Engine[K, E]) abort(cause error) error {
	e.aborted.Store(true)
	e.stop()
	for _, w := range e.workerList() {
		w.running.cancel() // attempt contexts are not the base's children
	}
	e.rq.stop(true)
	e.eachLane(func(l *lane[K, E]) {
		if l.state == laneWaiting {
			e.stopTimer(l.timer)
		}
		e.stopHoldTimer(l)
	})
	e.workers.Wait()
	e.timers.Wait()
	e.clock.close()
	e.stopMetrics()
	ce := &CloseError{Pending: e.pendingCount(), Err: cause}
	sample := func(key K) {
		ce.Keys++
		if len(ce.Sample) < 10 {
			ce.Sample = append(ce.Sample, fmt.Sprint(key))
		}
	}
	e.eachLane(func(l *lane[K, E]) {
		if l.req != nil {
			l.req.reply(0, e.errClosed)
			l.req = nil
		}
		if l.replay != nil {
			l.replay.req.reply(l.replay.done, e.errClosed)
			l.replay = nil
		}
		for _, wd := range l.withdraws {
			wd.done <- 0
		}
		l.withdraws = nil
		if l.pending() > 0 {
			sample(l.key)
		}
	})
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		seen := make(map[K]bool)
		sh.eachUnlaned(func(key K, _ int64) {
			if !seen[key] {
				seen[key] = true
				sample(key)
			}
		})
		sh.mu.Unlock()
	}
	return ce
}

// eachLane calls fn for every lane, with the lane's shard locked.
func (e *Engine[K, E]) eachLane(fn func(*lane[K, E])) {
	for i := range e.shards {
		sh := &e.shards[i]
		sh.mu.Lock()
		for _, l := range sh.lanes {
			fn(l)
		}
		sh.mu.Unlock()
	}
}

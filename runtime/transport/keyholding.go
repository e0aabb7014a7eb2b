package transport

import (
	"context"
	"fmt"
	"time"
)

// Why an ownership ended.
const (
	// endUnfinished: one of the key's messages was settled Unfinished.
	endUnfinished = "unfinished"
	// endLease: a message's lease was about to end for good.
	endLease = "lease"
	// endLeaseLost: the broker refused to extend a lease.
	endLeaseLost = "lease-lost"
	// endLeaseLapsed: the lease the broker last confirmed was about to
	// end (its extensions failed, or got no answer).
	endLeaseLapsed = "lease-lapsed"
)

// holding is the intake's state of one key it holds messages of: one
// ownership of the key.
type holding[E any, M any] struct {
	key      string
	own      *Ownership
	live     []*entry[E, M] // taken, in take order; settled ones leave from the front
	nlive    int            // of which not settled
	stash    []pending[E, M]
	retrying bool            // the retrier offers the stash's head
	waiting  []Message[E, M] // received while the ownership ends
	ending   bool            // End was called (or is about to be)
	restart  *entry[E, M]    // the first message, in take order, settled Unfinished
	endWhy   string
	endCause error // what the running handler's context says when End cancels it
}

// entry is one message taken: the source's handle of it.
type entry[E any, M any] struct {
	h      *holding[E, M]
	handle M
	id     string
	lease  time.Time
	taken  time.Time
	seq    uint64
	tag    uint64
	st     Settlement // 0 while unsettled
}

// pending is a message taken and refused for lack of room.
type pending[E any, M any] struct {
	e *entry[E, M]
	m Message[E, M]
}

// dropSettled drops the settled entries at the front of h.live; c.mu is
// held.
func (h *holding[E, M]) dropSettled() {
	i := 0
	for i < len(h.live) && h.live[i].st != 0 {
		h.live[i] = nil
		i++
	}
	h.live = h.live[i:]
}

// startEnd ends h's ownership in a goroutine, with cause for its running
// handler (nil: one that says why); c.mu is held.
func (c *KeyIntake[K, E, M]) startEnd(h *holding[E, M], why string, cause error) {
	h.ending = true
	h.endWhy = why
	if cause == nil {
		cause = c.endCause(h.key, why)
	}
	h.endCause = cause
	var lease time.Time
	for _, e := range h.live {
		if e.st == 0 && !e.lease.IsZero() && (lease.IsZero() || e.lease.Before(lease)) {
			lease = e.lease
		}
	}
	c.enders.Add(1)
	go c.end(h, why, lease)
}

// endCause is what the running handler of key is told (context.Cause)
// when its ownership ends for why and the transport gave no cause.
func (c *KeyIntake[K, E, M]) endCause(key, why string) error {
	switch why {
	case endUnfinished:
		return fmt.Errorf("%w: %s: a message of key %q went back to the broker, which delivers the key's later messages after it", ErrOwnershipEnded, c.cfg.System, key)
	case endLease:
		return fmt.Errorf("%w: %s: a message of key %q reached the end of the longest lease the broker gives", ErrLeaseLost, c.cfg.System, key)
	}
	return fmt.Errorf("%w: %s: key %q (%s)", ErrLeaseLost, c.cfg.System, key, why)
}

// end ends h's ownership: its events that have not started are withdrawn,
// the running one gets up to EndTimeout (and no later than lease; not at
// all when the lease is lost) before it is cancelled with h.endCause, and
// its messages not finished are settled Unfinished. The messages of the
// key that arrived meanwhile are then received again.
func (c *KeyIntake[K, E, M]) end(h *holding[E, M], why string, lease time.Time) {
	defer c.enders.Done()
	deadline := time.Now().Add(c.cfg.EndTimeout)
	if !lease.IsZero() && lease.Before(deadline) {
		deadline = lease
	}
	if why == endLeaseLost || why == endLeaseLapsed {
		// The broker may give the message to another consumer any
		// moment: the handler must stop now, not drain.
		deadline = time.Now()
	}
	ctx, cancel := context.WithDeadlineCause(c.abort, deadline, h.endCause)
	start := time.Now()
	left, err := c.src.Load().End(ctx, h.own)
	cancel()
	level := c.cfg.Logger.Info
	msg := "ordergen/" + c.cfg.System + ": a key's ownership ended: a message of it goes back to the broker, and its later messages with it"
	switch why {
	case endLease:
		level = c.cfg.Logger.Warn
		msg = "ordergen/" + c.cfg.System + ": a key's messages reached the end of their lease (parked in memory, or a handler outlived it); they go back to the broker and run again"
	case endLeaseLost:
		level = c.cfg.Logger.Warn
		msg = "ordergen/" + c.cfg.System + ": the broker refused to extend a lease: the key's running handler was cancelled and its messages that had not finished go back to it"
	case endLeaseLapsed:
		level = c.cfg.Logger.Warn
		msg = "ordergen/" + c.cfg.System + ": the lease the broker last confirmed was about to end: the key's running handler was cancelled and its messages that had not finished go back to the broker"
	}
	level(msg, "key", h.key, "reason", why, "given_back", left, "waited", time.Since(start), "cause", h.endCause, "error", err)

	c.mu.Lock()
	if c.keys[h.key] == h {
		delete(c.keys, h.key)
	}
	if len(h.stash) > 0 {
		h.stash = nil
		c.stashed--
	}
	if c.cfg.Fence && h.restart != nil && !c.closing {
		c.fences[h.key] = fence{id: h.restart.id, until: time.Now().Add(c.cfg.FenceWindow)}
	}
	waiting := h.waiting
	h.waiting = nil
	// Their room stays held, as reserved, until they are received again.
	c.waiting -= len(waiting)
	c.reserved += len(waiting)
	switch why {
	case endUnfinished:
		c.stats.Ended.Unfinished++
	case endLease:
		c.stats.Ended.Lease++
	case endLeaseLost:
		c.stats.Ended.LeaseLost++
	case endLeaseLapsed:
		c.stats.Ended.LeaseLapsed++
	}
	c.mu.Unlock()
	for i, m := range waiting {
		if err := c.receive(m, true); err != nil {
			c.Unreserve(len(waiting) - i - 1)
			return // the target failed: the transport stops
		}
	}
	c.room.BroadcastIfWaiting()
}

// retryLoop offers the stashed messages again as messages settle, and at
// each sweep.
func (c *KeyIntake[K, E, M]) retryLoop() {
	defer c.loops.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		if c.stashed == 0 {
			c.mu.Unlock()
			continue
		}
		var hs []*holding[E, M]
		for _, h := range c.keys {
			if len(h.stash) > 0 && !h.ending && !h.retrying {
				h.retrying = true
				hs = append(hs, h)
			}
		}
		c.mu.Unlock()
		for _, h := range hs {
			c.retry(h)
		}
	}
}

// retry offers h's stash in order until the lanes refuse one.
func (c *KeyIntake[K, E, M]) retry(h *holding[E, M]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if h.ending || len(h.stash) == 0 {
			h.retrying = false
			return
		}
		p := h.stash[0]
		c.mu.Unlock()
		refused, err := c.offer(p.e, p.m)
		c.mu.Lock()
		if refused {
			h.retrying = false
			return
		}
		if len(h.stash) > 0 { // End may have emptied it meanwhile
			h.stash[0] = pending[E, M]{}
			h.stash = h.stash[1:]
			if len(h.stash) == 0 {
				c.stashed--
			}
		}
		if err != nil {
			h.retrying = false
			return
		}
	}
}

// sweepLoop ends the ownerships whose lease is about to end, forgets old
// fences and reports whether taking is blocked.
func (c *KeyIntake[K, E, M]) sweepLoop() {
	defer c.loops.Done()
	t := time.NewTicker(c.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.sweep(time.Now())
	}
}

func (c *KeyIntake[K, E, M]) sweep(now time.Time) {
	c.mu.Lock()
	if !c.closing {
		for _, h := range c.keys {
			if h.ending {
				continue
			}
			for _, e := range h.live {
				if e.st == 0 && !e.lease.IsZero() && !now.Before(e.lease.Add(-c.cfg.EndTimeout)) {
					c.startEnd(h, endLease, nil)
					break
				}
			}
		}
	}
	for k, f := range c.fences {
		if now.After(f.until) {
			delete(c.fences, k)
		}
	}
	if c.stashed > 0 {
		// Room that no settlement of the intake reports (events of other
		// publishers finishing) would wake nobody: the stashes are offered
		// again at each sweep too.
		c.signal()
	}
	c.mu.Unlock()
	c.reportBlocked()
}

// reportBlocked looks at whether taking stops for every key (MaxInFlight
// reached), and whether parks in memory hold it, and logs the changes.
func (c *KeyIntake[K, E, M]) reportBlocked() {
	s := c.Stats()
	c.watch.Look(s.Unsettled+s.Waiting, c.cfg.MaxInFlight, func() int { return s.Parked }, nil) // Stats reads it back (Now)
}

// Shutdown ends every ownership: the events that have not started are
// withdrawn, the running ones get until ctx ends (then they are cancelled),
// and every message not finished is settled Unfinished. Messages received
// from then on are settled Unfinished at once. The intake's goroutines are
// gone when it returns. It returns how many messages were given back so,
// and ctx's error if it ended first.
func (c *KeyIntake[K, E, M]) Shutdown(ctx context.Context) (int, error) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return 0, nil
	}
	c.closing = true
	var owners []*Ownership
	var waiting []Message[E, M]
	for _, h := range c.keys {
		h.ending = true
		owners = append(owners, h.own)
		waiting = append(waiting, h.waiting...)
		h.waiting = nil
	}
	c.mu.Unlock()
	for _, m := range waiting {
		c.cfg.Settle(m.Handle, Unfinished)
	}
	// Their room is free once the broker was told (see settled).
	c.mu.Lock()
	c.waiting -= len(waiting)
	c.mu.Unlock()
	c.room.BroadcastIfWaiting()
	var left int
	var err error
	if len(owners) > 0 {
		left, err = c.src.Load().End(ctx, owners...)
	}
	c.cancel(fmt.Errorf("%w: %s: the consumer stopped", ErrOwnershipEnded, c.cfg.System)) // enders still waiting give up now
	c.enders.Wait()
	close(c.stop)
	c.loops.Wait()
	c.metrics.stop()
	left += len(waiting)
	if err != nil {
		return left, fmt.Errorf("%s: shutdown: %w", c.cfg.System, err)
	}
	return left, nil
}

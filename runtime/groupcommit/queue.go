package groupcommit

import (
	"context"
	"time"

	"github.com/ordergen/ordergen/runtime/durable"
)

// How a key's work and the runner of its group talk. The worker (the
// goroutine blocked in Do) waits on in; the runner sends it a turn, and the
// worker runs the work and sends the reply on out. in holds two messages so
// that the runner never waits for a worker: besides the turn, which the
// worker may not have taken yet, it sends at most one message that the
// worker is not waiting for (the eviction, while the work still runs). out
// holds one reply so that the worker of an evicted turn never waits for a
// runner that has moved on.

// msgKind says what a message asks of the worker.
type msgKind uint8

const (
	// msgTurn: run the work now, in the message's transaction.
	msgTurn msgKind = iota + 1
	// msgDone: Do returns the message's error.
	msgDone
	// msgAlone: the work was evicted; run it again alone.
	msgAlone
)

// message is what a runner sends a key's worker.
type message[T any] struct {
	kind msgKind
	ctx  context.Context
	tx   T
	read durable.KeyState
	err  error
}

// reply is what a worker sends back after its turn.
type reply struct {
	res      Result
	err      error
	panicked bool // the work panicked (or called runtime.Goexit)
}

// requestState is where a request is; the Committer's mu guards it.
type requestState uint8

const (
	stateQueued requestState = iota // in the queue
	stateTaken                      // in a group
	stateLeft                       // left the queue without a group (ctx, Close)
)

// request is one Do call: a key's work waiting for, or in, a group.
type request[T any] struct {
	key    string
	events int
	ctx    context.Context
	at     time.Time // when it was queued, for Linger
	state  requestState
	in     chan message[T]
	out    chan reply

	// Kept by the runner of its group between the turn and the commit.
	read durable.KeyState
	res  Result
}

// enqueue adds r to the queue and makes sure a runner will take it.
func (c *Committer[T]) enqueue(r *request[T]) error {
	if c.cfg.Linger > 0 {
		r.at = time.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.errClosed
	}
	c.queue = append(c.queue, r)
	c.queuedEvents += r.events
	if c.onQueued != nil {
		c.onQueued(r.key)
	}
	switch {
	case c.forming:
		if c.queuedEvents >= c.cfg.MaxEvents {
			c.signalLocked()
		}
	case c.runners < c.cfg.MaxGroups:
		c.startRunnerLocked()
	}
	return nil
}

// signalLocked wakes a runner that lingers for more keys.
func (c *Committer[T]) signalLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Committer[T]) startRunnerLocked() {
	c.runners++
	c.runs.Add(1)
	go c.run()
}

// withdraw takes r out of the queue, if it is still there, and reports
// whether it was.
func (c *Committer[T]) withdraw(r *request[T]) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.state != stateQueued {
		return false
	}
	for i, q := range c.queue {
		if q == r {
			n := copy(c.queue[i:], c.queue[i+1:])
			c.queue[i+n] = nil
			c.queue = c.queue[:i+n]
			break
		}
	}
	c.queuedEvents -= r.events
	r.state = stateLeft
	return true
}

// run is a runner: it forms groups and runs them until none is waiting.
func (c *Committer[T]) run() {
	defer c.runs.Done()
	g := &runner[T]{c: c, timer: time.NewTimer(time.Hour), seen: make(map[string]struct{})}
	g.timer.Stop()
	for {
		members := g.form()
		if members == nil {
			return
		}
		g.runGroup(members)
		c.mu.Lock()
		for _, r := range members {
			delete(c.open, r.key)
		}
		c.groups--
		c.mu.Unlock()
	}
}

// runner is what a runner goroutine keeps between its groups.
type runner[T any] struct {
	c     *Committer[T]
	timer *time.Timer // the MaxWork of the turn that runs, and Linger
	seen  map[string]struct{}
	keys  []string
}

// form takes the next group from the queue: the waiting requests, in
// order, whose keys are in no open group and whose events fit MaxEvents
// (at least one, however many events it has), after lingering for more
// while they are fewer than MaxEvents. It returns nil, and the runner ends,
// when no request can be taken.
func (g *runner[T]) form() []*request[T] {
	c := g.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		n, events, full := g.pickLocked()
		if n == 0 || (c.forming && !c.closed) {
			// Nothing to take, or another runner lingers for these keys
			// and will start a runner for what it leaves.
			c.runners--
			return nil
		}
		if wait := g.lingerLocked(events, full); wait > 0 {
			c.forming = true
			c.mu.Unlock()
			g.timer.Reset(wait)
			select {
			case <-g.timer.C:
			case <-c.wake:
				g.timer.Stop()
			}
			c.mu.Lock()
			c.forming = false
			continue
		}
		members := g.takeLocked(n)
		c.groups++
		if full && c.runners < c.cfg.MaxGroups {
			c.startRunnerLocked()
		}
		return members
	}
}

// pickLocked marks (in seen) the requests of the next group and returns
// how many there are, their events, and whether the group is full: the
// next request that could join it did not fit (it starts another group).
func (g *runner[T]) pickLocked() (n, events int, full bool) {
	c := g.c
	clear(g.seen)
	for _, r := range c.queue {
		if _, busy := c.open[r.key]; busy {
			continue
		}
		if _, twice := g.seen[r.key]; twice {
			continue
		}
		if n > 0 && events+r.events > c.cfg.MaxEvents {
			return n, events, true
		}
		g.seen[r.key] = struct{}{}
		n++
		events += r.events
	}
	return n, events, false
}

// lingerLocked returns how much longer a group of events events waits for
// more: none when it is full, when the committer closes, or when its
// oldest request has waited Linger.
func (g *runner[T]) lingerLocked(events int, full bool) time.Duration {
	c := g.c
	if c.cfg.Linger <= 0 || full || events >= c.cfg.MaxEvents || c.closed {
		return 0
	}
	for _, r := range c.queue {
		if _, ok := g.seen[r.key]; ok {
			return time.Until(r.at.Add(c.cfg.Linger))
		}
	}
	return 0
}

// takeLocked moves the n requests that pickLocked marked out of the queue
// into a group, and their keys into open.
func (g *runner[T]) takeLocked(n int) []*request[T] {
	c := g.c
	members := make([]*request[T], 0, n)
	kept := c.queue[:0]
	for _, r := range c.queue {
		if _, ok := g.seen[r.key]; ok && len(members) < n && r.state == stateQueued {
			if _, busy := c.open[r.key]; !busy {
				r.state = stateTaken
				c.open[r.key] = struct{}{}
				c.queuedEvents -= r.events
				members = append(members, r)
				continue
			}
		}
		kept = append(kept, r)
	}
	clear(c.queue[len(kept):])
	c.queue = kept
	return members
}

package groupcommit

import (
	"context"
	goruntime "runtime"
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
	if c.forming {
		if c.queuedEvents >= c.cfg.MaxEvents {
			c.signalLocked()
		}
	} else {
		c.moreRunnersLocked()
	}
	return nil
}

// moreRunnersLocked wakes an idle runner for the queue, or starts one
// while fewer than MaxGroups run.
func (c *Committer[T]) moreRunnersLocked() {
	switch {
	case c.idle > 0:
		select {
		case c.work <- struct{}{}:
		default: // enough tokens wait for the idle runners
		}
	case c.runners < c.cfg.MaxGroups:
		c.startRunnerLocked()
	}
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
		// The keys leave open when the group ends, not when their Do
		// calls return, whose requests then go back to the pool.
		g.openKeys = g.openKeys[:0]
		for _, r := range members {
			g.openKeys = append(g.openKeys, r.key)
		}
		g.runGroup(members)
		clear(members)
		c.mu.Lock()
		for _, key := range g.openKeys {
			delete(c.open, key)
		}
		c.groups--
		c.mu.Unlock()
		// The group's workers were just made runnable, and handing turns
		// to a worker keeps this goroutine and that one on one processor
		// ahead of the others: yield, so that they come back with their
		// next batches before the next group forms.
		goruntime.Gosched()
	}
}

// runner is what a runner goroutine keeps between its groups.
type runner[T any] struct {
	c     *Committer[T]
	timer *time.Timer // the MaxWork of the turn that runs, and Linger
	seen  map[string]struct{}
	// keys are the keys of the group's transaction, openKeys those it
	// took into open.
	keys, openKeys []string
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
			// and will wake a runner for what it leaves.
			if c.closed || !g.idleLocked() {
				c.runners--
				return nil
			}
			continue
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
		if full {
			c.moreRunnersLocked()
		}
		return members
	}
}

// idleRunner is how long a runner without work waits for more before it
// ends: a steady flow of small groups keeps its runners, an idle Committer
// has none.
const idleRunner = time.Second

// idleLocked waits, unlocked, until work arrives (a token on work), the
// committer closes, or idleRunner passes, which it reports as false.
func (g *runner[T]) idleLocked() bool {
	c := g.c
	c.idle++
	c.mu.Unlock()
	woken := true
	g.timer.Reset(idleRunner)
	select {
	case <-c.work:
		g.timer.Stop()
	case <-c.done:
		g.timer.Stop()
	case <-g.timer.C:
		woken = false
	}
	c.mu.Lock()
	c.idle--
	// Work that came while the timer fired found this runner idle and
	// started none: it is taken now.
	return woken || len(c.queue) > 0
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

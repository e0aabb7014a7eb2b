package runtime

import (
	"sync"
	"sync/atomic"
	"time"
)

// clock gives the engine cheap timestamps. Reading the system clock costs
// tens of nanoseconds on some machines, more than the rest of a Submit, so
// events are stamped with a coarse time that a ticker refreshes every
// millisecond while the engine has work. The ticker sleeps when every worker
// sleeps; the first event after that reads the precise time itself. Ages
// (TopBacklog, stuck keys) are therefore exact to about a millisecond.
type clock struct {
	origin time.Time
	now    atomic.Int64 // coarse nanoseconds since origin
	asleep atomic.Bool
	wake   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	// onTick runs on every tick while the engine has work.
	onTick func()
}

const tick = time.Millisecond

func (c *clock) start() {
	c.origin = time.Now()
	c.wake = make(chan struct{}, 1)
	c.done = make(chan struct{})
	c.wg.Add(1)
	go c.run()
}

func (c *clock) run() {
	defer c.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		if c.asleep.Load() {
			t.Stop()
			select {
			case <-c.wake:
			case <-c.done:
				return
			}
			t.Reset(tick)
			continue
		}
		select {
		case <-t.C:
			c.now.Store(c.precise())
			if c.onTick != nil {
				c.onTick()
			}
		case <-c.done:
			return
		}
	}
}

// precise returns the exact nanoseconds since the clock started.
func (c *clock) precise() int64 { return int64(time.Since(c.origin)) }

// coarse returns the time to stamp an event with.
func (c *clock) coarse() int64 {
	if c.asleep.Load() {
		n := c.precise()
		c.now.Store(n)
		return n
	}
	return c.now.Load()
}

// sleep stops the ticker: no worker has anything to do.
func (c *clock) sleep() { c.asleep.Store(true) }

// wakeUp restarts the ticker; the run queue calls it when it wakes a worker.
func (c *clock) wakeUp() {
	if c.asleep.CompareAndSwap(true, false) {
		c.now.Store(c.precise())
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// close stops the ticker goroutine and waits for it.
func (c *clock) close() {
	close(c.done)
	c.wg.Wait()
}

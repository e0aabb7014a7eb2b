package runtime

import (
	gometrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// clock gives the engine cheap timestamps, its timers and its watchdog tick.
// Reading the system clock costs tens of nanoseconds on some machines, more
// than the rest of a Submit, so events are stamped with a coarse time that a
// ticker refreshes every millisecond while the engine has work. The ticker
// sleeps when every worker sleeps; the first event after that reads the
// precise time itself. Ages (TopBacklog, stuck keys) are therefore exact to
// about a millisecond.
//
// Tests replace the system time with a manualClock: then nothing ticks or
// fires until the test advances it.
type clock struct {
	origin time.Time
	now    atomic.Int64 // coarse nanoseconds since origin
	asleep atomic.Bool
	wake   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	// onTick runs on every tick while the engine has work.
	onTick func()
	// contended says whether, at the last tick, goroutines of the process
	// waited for a processor (see contention); only the tick writes it.
	contended atomic.Bool
	// runnable reads the runtime's count of runnable goroutines.
	runnable [1]gometrics.Sample
	// manual, when set, is the time source instead of the system's.
	manual *manualClock
}

const tick = time.Millisecond

// timer is a timer of the engine's clock (a *time.Timer, or a manual one).
type timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

func (c *clock) start() {
	c.origin = time.Now()
	if c.manual != nil {
		c.manual.tickers = append(c.manual.tickers, c)
		return
	}
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
			c.ticked()
		case <-c.done:
			return
		}
	}
}

// ticked refreshes the coarse time and runs the tick's work.
func (c *clock) ticked() {
	c.now.Store(c.precise())
	c.contended.Store(c.contention())
	if c.onTick != nil {
		c.onTick()
	}
}

// contention reports whether goroutines of the process wait for a
// processor (the runtime counts them as runnable): then a worker that made
// no progress since the last tick may only be waiting for its turn on a
// CPU, not stuck in a handler. The manual clock's engines see contention
// only when a test says so. Reading the count costs about 100ns, once a
// tick.
func (c *clock) contention() bool {
	if c.manual != nil {
		return c.manual.contended.Load()
	}
	if c.runnable[0].Name == "" {
		c.runnable[0].Name = "/sched/goroutines/runnable:goroutines"
	}
	gometrics.Read(c.runnable[:])
	v := c.runnable[0].Value
	return v.Kind() == gometrics.KindUint64 && v.Uint64() > 0
}

// precise returns the exact nanoseconds since the clock started.
func (c *clock) precise() int64 {
	if c.manual != nil {
		return c.manual.nanos()
	}
	return int64(time.Since(c.origin))
}

// wall returns the wall-clock time of t, nanoseconds on this clock.
func (c *clock) wall(t int64) time.Time { return c.origin.Add(time.Duration(t)) }

// coarse returns the time to stamp an event with.
func (c *clock) coarse() int64 {
	if c.manual != nil {
		return c.manual.nanos()
	}
	if c.asleep.Load() {
		n := c.precise()
		c.now.Store(n)
		return n
	}
	return c.now.Load()
}

// afterFunc runs f in its own goroutine after d (with the manual clock: when
// a test advances the clock past it, in the test's goroutine).
func (c *clock) afterFunc(d time.Duration, f func()) timer {
	if c.manual != nil {
		return c.manual.afterFunc(d, f)
	}
	return time.AfterFunc(d, f)
}

// sleep stops the ticker: no worker has anything to do.
func (c *clock) sleep() {
	if c.manual == nil {
		c.asleep.Store(true)
	}
}

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
	if c.manual != nil {
		c.manual.forget(c)
		return
	}
	close(c.done)
	c.wg.Wait()
}

// manualClock is a time source that moves only when a test advances it.
// Advancing runs the due timers' functions and one watchdog tick per
// millisecond passed, in the caller's goroutine.
type manualClock struct {
	// mu guards every field, and the fields of its timers.
	mu      sync.Mutex
	at      int64 // nanoseconds
	timers  []*manualTimer
	tickers []*clock
	// contended is what its engines' ticks see of contention (a test sets
	// it; no lock).
	contended atomic.Bool
}

func (m *manualClock) nanos() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at
}

// advance moves the clock by d, ticking every millisecond boundary it passes
// and running every timer that falls due, in time order.
func (m *manualClock) advance(d time.Duration) {
	m.mu.Lock()
	end := m.at + int64(d)
	m.mu.Unlock()
	for {
		m.mu.Lock()
		nextTick := (m.at/int64(tick) + 1) * int64(tick)
		var due *manualTimer
		for _, t := range m.timers {
			if t.armed && t.when <= end && (due == nil || t.when < due.when) {
				due = t
			}
		}
		switch {
		case due != nil && due.when <= nextTick:
			m.at = max(m.at, due.when)
			due.armed = false
			m.mu.Unlock()
			due.f()
		case nextTick <= end:
			m.at = nextTick
			tickers := append([]*clock(nil), m.tickers...)
			m.mu.Unlock()
			for _, c := range tickers {
				c.ticked()
			}
		default:
			m.at = end
			m.mu.Unlock()
			return
		}
	}
}

func (m *manualClock) afterFunc(d time.Duration, f func()) timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{m: m, f: f, when: m.at + int64(d), armed: true}
	m.timers = append(m.timers, t)
	return t
}

// forget stops ticking c (its engine closed).
func (m *manualClock) forget(c *clock) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range m.tickers {
		if t == c {
			m.tickers = append(m.tickers[:i], m.tickers[i+1:]...)
			return
		}
	}
}

// manualTimer is a timer of a manualClock.
type manualTimer struct {
	m     *manualClock
	f     func()
	when  int64
	armed bool
}

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

func (t *manualTimer) Reset(d time.Duration) bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	was := t.armed
	t.when, t.armed = t.m.at+int64(d), true
	return was
}

package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/sqlstore"
)

// Relay ships the events of one entity's outbox to a sink, in per-key
// order (see the package documentation). Run it, once, in a goroutine of
// its own; Close stops it. Several relays may ship one outbox, in this
// process or others: each key is shipped by one of them at a time. It is
// safe for concurrent use.
type Relay[K comparable, E any] struct {
	cfg     Config[K, E]
	resumer interface{ Resume(K) } // the sink's, when it pauses keys after a failure

	wake      chan struct{} // a value asks for a round now
	listening atomic.Bool   // the store's Listener listens
	rounds    atomic.Uint64 // rounds begun, numbering them

	sent, retries, parked, pruned atomic.Uint64

	// mu guards the fields below.
	mu        sync.Mutex
	state     relayState
	ran       bool          // Run was called (and so closes done)
	stop      chan struct{} // closed by Close
	done      chan struct{} // closed when Run returns
	abort     context.CancelFunc
	aborted   bool      // Close gave up waiting: the round in progress is cut short
	nextRetry time.Time // the earliest retry this relay set and has not reached
	backlog   sqlstore.OutboxBacklog
	stopped   []sqlstore.OutboxKey // the first keys that do not flow, as last read
	readAt    time.Time            // when backlog and stopped were read

	metrics *metrics
	log     logLimiter
	hooks   hooks
}

type relayState uint8

const (
	idle relayState = iota
	running
	closed
)

// hooks let the package's tests see the rounds.
type hooks struct {
	// claimed is called when a round has claimed events, before it sends.
	claimed func(round uint64)
	// ended is called when a round ends, with whether its marks committed.
	ended func(round uint64, committed bool)
}

// New returns a relay over cfg, checked: a missing Store, Entity, Codec or
// Sink, a value out of range, or a key type that is neither a string nor
// an integer is refused with an error wrapping runtime.ErrInvalidConfig.
// Its metrics are registered now.
func New[K comparable, E any](cfg Config[K, E]) (*Relay[K, E], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Relay[K, E]{cfg: cfg, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.resumer, _ = cfg.Sink.(interface{ Resume(K) })
	r.log = logLimiter{logger: cfg.Logger}
	if r.metrics, err = startMetrics(r); err != nil {
		return nil, err
	}
	return r, nil
}

// Wake asks the relay for a round now, as a new row's notification does:
// for a writer in a process whose store cannot notify (SQLite written by
// another process), once it committed.
func (r *Relay[K, E]) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run ships the outbox until Close is called or ctx ends. It runs rounds
// back to back while they find events, then waits for a new row's
// notification, Wake, a key's retry time or the poll. Errors of the store
// are logged and retried with a backoff; they do not stop it.
//
// After Close, Run lets the round in progress mark what it sent (within
// Close's context) and returns nil. When ctx ends instead, Run stops at
// once, as a crash would: the sends in progress are cancelled, nothing of
// the round is marked sent, its keys are released (the next relay sends
// its events again, those already sent included) and Run returns ctx's
// error. Run may be called once; after Close it returns an error wrapping
// runtime.ErrClosed at once.
func (r *Relay[K, E]) Run(ctx context.Context) error {
	r.mu.Lock()
	switch r.state {
	case running:
		r.mu.Unlock()
		return fmt.Errorf("%w: outbox relay of %s: Run called twice", runtime.ErrInvalidConfig, r.cfg.Entity)
	case closed:
		r.mu.Unlock()
		return fmt.Errorf("outbox relay of %s: %w", r.cfg.Entity, runtime.ErrClosed)
	}
	r.state, r.ran = running, true
	runCtx, abort := context.WithCancel(ctx)
	r.abort = abort
	r.mu.Unlock()
	defer close(r.done)
	defer abort()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer abort() // stops the listener before the wait
	if l := r.cfg.Store.Listener(); l != nil {
		wg.Go(func() { r.listen(runCtx, l) })
	}
	unregister := r.cfg.Store.WakeOnAppend(r.cfg.Entity, r.wake)
	defer unregister()

	h := housekeeping{}
	storeWait := time.Duration(0)
	for {
		select {
		case <-r.stop:
			return nil
		default:
		}
		res, err := r.round(runCtx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if r.isAborted() {
			return nil
		}
		r.housekeep(runCtx, &h)
		var wait time.Duration
		switch {
		case err != nil:
			storeWait = min(max(2*storeWait, 100*time.Millisecond), 5*time.Second)
			r.log.error("ordergen: outbox relay round failed", "entity", r.cfg.Entity, "error", err)
			wait = storeWait
		case res.progress():
			storeWait = 0
			continue
		case res.busy > 0:
			storeWait = 0
			wait = min(r.poll(), busyWait) // other relays hold the keys: look again soon
		default:
			storeWait = 0
			wait = r.poll()
		}
		wait = min(wait, r.untilRetry(), r.untilHousekeeping(&h))
		if !r.sleep(runCtx, wait) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil
		}
	}
}

// busyWait is how long a relay whose candidate keys other relays hold waits
// before it looks again.
const busyWait = 20 * time.Millisecond

// sleep waits up to d for a reason to run a round; false when Run must
// stop.
func (r *Relay[K, E]) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-r.stop:
		return false
	case <-r.wake:
	case <-t.C:
	}
	return true
}

// poll is how long an idle relay waits.
func (r *Relay[K, E]) poll() time.Duration {
	switch {
	case r.cfg.Poll > 0:
		return r.cfg.Poll
	case r.listening.Load():
		return DefaultListenPoll
	}
	return DefaultPoll
}

// untilRetry is how long until the earliest retry this relay set.
func (r *Relay[K, E]) untilRetry() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nextRetry.IsZero() {
		return time.Hour
	}
	d := time.Until(r.nextRetry)
	if d <= 0 {
		r.nextRetry = time.Time{}
	}
	return d
}

// retryAt notes a retry this relay set.
func (r *Relay[K, E]) retryAt(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nextRetry.IsZero() || t.Before(r.nextRetry) {
		r.nextRetry = t
	}
}

func (r *Relay[K, E]) isAborted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.aborted
}

// listen keeps the store's Listener listening while Run runs, waking a
// round on every notification of the entity, and once each time it starts
// listening (it may have missed some while it did not).
func (r *Relay[K, E]) listen(ctx context.Context, l sqlstore.Listener) {
	wait := 100 * time.Millisecond
	for {
		err := l.Listen(ctx, sqlstore.OutboxChannel, func() {
			r.listening.Store(true)
			wait = 100 * time.Millisecond
			r.Wake()
		}, func(entity string) {
			if entity == r.cfg.Entity {
				r.Wake()
			}
		})
		r.listening.Store(false)
		if ctx.Err() != nil {
			return
		}
		r.log.error("ordergen: outbox relay cannot listen for new rows; polling meanwhile", "entity", r.cfg.Entity, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// Close stops the relay: Run lets the round in progress mark what it sent
// and returns. When ctx ends first, Close cuts that round short: its sends
// in progress are cancelled (a sink that ignores its context is still
// waited for), what was sent before is marked, and Close returns ctx's
// error. Closing a relay that never ran, or closing twice, is harmless.
// The metrics are unregistered.
func (r *Relay[K, E]) Close(ctx context.Context) error {
	r.mu.Lock()
	switch r.state {
	case idle:
		r.state = closed
		close(r.stop)
		r.mu.Unlock()
		r.metrics.stop()
		return nil
	case running:
		r.state = closed
		close(r.stop)
	}
	ran := r.ran
	r.mu.Unlock()
	if !ran {
		return nil // closed before, never run
	}
	var err error
	select {
	case <-r.done:
	case <-ctx.Done():
		r.mu.Lock()
		r.aborted = true
		r.abort()
		r.mu.Unlock()
		<-r.done
		err = fmt.Errorf("close outbox relay of %s: %w", r.cfg.Entity, ctx.Err())
	}
	r.metrics.stop()
	return err
}

// errStopped marks a round cut short by a crash (Run's context) or by
// Close's context.
var errStopped = errors.New("outbox relay stopped")

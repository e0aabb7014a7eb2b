package transport

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime"
)

// Leases keeps the leases a broker lends a consumer's messages under (SQS's
// visibility timeout, NATS JetStream's AckWait): a message is the
// consumer's only as long as its lease lasts, and only the broker knows how
// long that is. Leases trusts what the broker confirmed: the lease of the
// receive, then each extension the broker answered with success, counted
// from before its request was sent (the broker counts from when it took
// the request, which is later), so that its idea of the end is never later
// than the broker's. An extension that failed (an error, no answer)
// changes nothing but the errors counted.
//
// Run extends what is due and watches the ends: every sixth of the lease
// it extends the messages whose confirmed lease ends within two thirds of
// it (a healthy consumer so keeps at least half a lease ahead of every
// message); when the confirmed lease of a message is a sixth of the lease
// from its end, Lapsed is told at once, with a cause wrapping ErrLeaseLost,
// so that the consumer gives the message's unit of order up (a KeyIntake's
// LeaseLapsed) before the broker can give the message to another consumer.
// A refused extension (the broker took the message back) is told to Lost.
// The two run apart, so that a call to the broker that hangs (a network
// that stopped answering) never delays the watch.
type Leases[M comparable] struct {
	cfg LeaseConfig[M]

	// mu guards what follows.
	mu      sync.Mutex
	held    map[M]*lease
	stats   LeaseStats
	lastErr error
}

// lease is what Leases knows of one message's lease.
type lease struct {
	received  time.Time
	confirmed time.Time // the end of the last lease the broker confirmed
	lapsed    bool      // Lapsed was told: no more extensions
}

// LeaseConfig configures Leases.
type LeaseConfig[M comparable] struct {
	// System names the broker in logs and causes ("sqs", "nats").
	System string
	// Lease is the length of the lease of a receive and of each extension.
	// Required.
	Lease time.Duration
	// MaxHold, when set, is the longest the broker lends a message after
	// its receive, however often it is extended (SQS's 12 hours):
	// extensions ask no further.
	MaxHold time.Duration
	// Granularity is the broker's unit of time (SQS counts whole seconds):
	// an extension asks for a multiple of it, at least one. Zero: exact.
	Granularity time.Duration
	// Batch bounds the messages of one Extend call. Zero: 10.
	Batch int
	// Extend asks the broker to lend ms for d from now, and returns those
	// it refused, with why, or the call's error (then the broker may or
	// may not have extended any of them). Required.
	Extend func(ctx context.Context, ms []M, d time.Duration) (refused map[M]string, err error)
	// Lost is told that the broker refused to extend m's lease: it took m
	// back. Lapsed is told that the lease it last confirmed for m is about
	// to end. cause wraps ErrLeaseLost and says why: give it to the
	// intake, for the handler to see. Required; each is told once per
	// message.
	Lost, Lapsed func(m M, cause error)
	// Name names a message in causes and logs ("message 7 of group g").
	// Nil: fmt's %v.
	Name func(M) string
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
}

// LeaseStats are the outcomes of the extensions.
type LeaseStats struct {
	// Extensions counts the messages whose extension the broker
	// confirmed.
	Extensions uint64
	// Errors counts those whose extension failed: the call failed or got
	// no answer in time, or the broker refused (Refused of them).
	Errors, Refused uint64
}

// NewLeases returns the leases of cfg; Run keeps them.
func NewLeases[M comparable](cfg LeaseConfig[M]) (*Leases[M], error) {
	if cfg.Lease <= 0 || cfg.Extend == nil || cfg.Lost == nil || cfg.Lapsed == nil {
		return nil, fmt.Errorf("%w: leases need Lease, Extend, Lost and Lapsed", runtime.ErrInvalidConfig)
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 10
	}
	if cfg.Name == nil {
		cfg.Name = func(m M) string { return fmt.Sprint(m) }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Leases[M]{cfg: cfg, held: map[M]*lease{}}, nil
}

// Hold starts keeping m's lease, which the broker lent for Lease from
// received (when its answer came: the margin covers the moment before).
func (l *Leases[M]) Hold(m M, received time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held[m] = &lease{received: received, confirmed: received.Add(l.cfg.Lease)}
}

// Release stops keeping m's lease: m was settled, or given back.
func (l *Leases[M]) Release(m M) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.held, m)
}

// ConfirmedUntil returns the end of the last lease the broker confirmed
// for m, or zero for a message not held.
func (l *Leases[M]) ConfirmedUntil(m M) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.held[m]; ls != nil {
		return ls.confirmed
	}
	return time.Time{}
}

// Stats returns the outcomes of the extensions so far.
func (l *Leases[M]) Stats() LeaseStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// margin is how long before the end of a confirmed lease its message is
// given up.
func (l *Leases[M]) margin() time.Duration { return l.cfg.Lease / 6 }

// Run extends and watches the leases until ctx ends.
func (l *Leases[M]) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { l.extendLoop(ctx) })
	wg.Go(func() { l.lapseLoop(ctx) })
	wg.Wait()
}

// extendLoop extends what is due every sixth of the lease; after a failed
// extension the next look tries again.
func (l *Leases[M]) extendLoop(ctx context.Context) {
	v := l.cfg.Lease
	t := time.NewTicker(v / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		var due []M
		l.mu.Lock()
		for m, ls := range l.held {
			left := ls.confirmed.Sub(now)
			// One within the margin is lapseLoop's to give up.
			if !ls.lapsed && left < 2*v/3 && left > l.margin() && (l.cfg.MaxHold <= 0 || now.Before(ls.received.Add(l.cfg.MaxHold))) {
				due = append(due, m)
			}
		}
		l.mu.Unlock()
		for i := 0; i < len(due) && ctx.Err() == nil; i += l.cfg.Batch {
			l.extend(ctx, due[i:min(i+l.cfg.Batch, len(due))])
		}
	}
}

// extend extends a batch, no further than MaxHold, and records what the
// broker confirmed.
func (l *Leases[M]) extend(ctx context.Context, batch []M) {
	sent := time.Now()
	d := l.cfg.Lease
	var lapse time.Time
	l.mu.Lock()
	for _, m := range batch {
		ls := l.held[m]
		if ls == nil {
			continue // released meanwhile
		}
		if l.cfg.MaxHold > 0 {
			d = min(d, ls.received.Add(l.cfg.MaxHold).Sub(sent))
		}
		if lapse.IsZero() || ls.confirmed.Before(lapse) {
			lapse = ls.confirmed
		}
	}
	l.mu.Unlock()
	if lapse.IsZero() {
		return
	}
	if g := l.cfg.Granularity; g > 0 {
		d = max(d.Truncate(g), g)
	}
	// No answer helps once the first of the batch lapsed: the call ends
	// then, so that the next look tries again with what is still due.
	cctx, cancel := context.WithDeadline(ctx, lapse.Add(-l.margin()))
	refused, err := l.cfg.Extend(cctx, batch, d)
	cancel()
	l.mu.Lock()
	if err != nil {
		l.stats.Errors += uint64(len(batch))
		l.lastErr = err
		l.mu.Unlock()
		if ctx.Err() == nil {
			l.cfg.Logger.Warn("ordergen/"+l.cfg.System+": lease extension failed; the consumer trusts only what the broker confirmed and gives a message up before that ends", "messages", len(batch), "error", err)
		}
		return
	}
	for _, m := range batch {
		if _, no := refused[m]; !no {
			if ls := l.held[m]; ls != nil {
				ls.confirmed = sent.Add(d)
			}
		}
	}
	l.stats.Extensions += uint64(len(batch) - len(refused))
	l.stats.Errors += uint64(len(refused))
	l.stats.Refused += uint64(len(refused))
	for m := range refused {
		if ls := l.held[m]; ls != nil {
			ls.lapsed = true // nothing more to extend or watch
		}
	}
	l.mu.Unlock()
	for m, why := range refused {
		l.cfg.Lost(m, fmt.Errorf("%w: %s: the broker refused to extend the lease of %s (%s): it took the message back", ErrLeaseLost, l.cfg.System, l.cfg.Name(m), why))
	}
}

// lapseLoop tells Lapsed of the messages whose confirmed lease nears its
// end. It looks at the earliest such end, and at least every sixth of the
// lease for the messages held meanwhile (whose ends are later than that).
func (l *Leases[M]) lapseLoop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		next := now.Add(l.cfg.Lease / 6)
		type lapsing struct {
			m     M
			until time.Time
		}
		var lapsed []lapsing
		l.mu.Lock()
		for m, ls := range l.held {
			if ls.lapsed {
				continue
			}
			switch at := ls.confirmed.Add(-l.margin()); {
			case !now.Before(at):
				ls.lapsed = true
				lapsed = append(lapsed, lapsing{m, ls.confirmed})
			case at.Before(next):
				next = at
			}
		}
		last := l.lastErr
		l.mu.Unlock()
		why := "no extension was confirmed in time"
		if last != nil {
			why = "the last failed extension: " + last.Error()
		}
		for _, x := range lapsed {
			l.cfg.Lapsed(x.m, fmt.Errorf("%w: %s: the lease the broker confirmed for %s ends at %s, when it may give the message to another consumer (%s)",
				ErrLeaseLost, l.cfg.System, l.cfg.Name(x.m), x.until.Format(time.RFC3339Nano), why))
		}
		timer.Reset(next.Sub(now))
	}
}

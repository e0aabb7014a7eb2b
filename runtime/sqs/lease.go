package sqs

import (
	"context"
	"fmt"
	"time"

	"github.com/ordergen/ordergen/runtime/internal/keyed"
	"github.com/ordergen/ordergen/runtime/transport"
)

// A received message is the consumer's only as long as its visibility
// lasts, and only SQS knows how long that is. The consumer trusts what SQS
// confirmed: the visibility of the receive, then each extension SQS
// answered with success, counted from before its request was sent (SQS
// counts from when it took the request, which is later), so that the
// consumer's idea of the end is never later than SQS's. An extension that
// failed (an error, no answer) changes nothing but ExtensionErrors.
//
// extendLoop extends what is due; lapseLoop watches the ends: when the
// confirmed visibility of an unsettled message is a sixth of
// VisibilityTimeout from its end, the group's ownership ends at once (its
// events that have not started are withdrawn, its running handler is
// cancelled, with a cause wrapping transport.ErrLeaseLost), before SQS can
// give the message to another consumer. The two run apart so that a call
// to SQS that hangs (a network that stopped answering) never delays the
// watch.

// lapseMargin is how long before the end of a message's confirmed
// visibility the consumer gives its group up.
func (c *Consumer[K, E]) lapseMargin() time.Duration { return c.cfg.VisibilityTimeout / 6 }

// confirmedUntil returns the end of h's confirmed visibility.
func (c *Consumer[K, E]) confirmedUntil(h *handle) time.Time {
	return c.epoch.Add(time.Duration(h.confirmed.Load()))
}

// confirm records that SQS confirmed h's visibility until t. An extension
// replaces the visibility (SQS counts it from the call), so the latest
// answer is the one to trust, even when it ends earlier (near MaxHold);
// the receive, then extendLoop alone, confirm, one call at a time.
func (c *Consumer[K, E]) confirm(h *handle, t time.Time) {
	h.confirmed.Store(int64(t.Sub(c.epoch)))
}

// extendLoop extends, every sixth of the visibility timeout, the
// visibility of the unsettled messages whose confirmed visibility ends
// within two thirds of it, up to 12 hours after their receive. A healthy
// consumer so keeps at least half of the timeout ahead of every message;
// after a failed extension the next look tries again.
func (c *Consumer[K, E]) extendLoop(ctx context.Context, core *keyed.Core[K, E, *handle]) {
	v := c.cfg.VisibilityTimeout
	t := time.NewTicker(v / 6)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		var due []*handle
		core.EachUnsettled(func(_ string, h *handle) {
			left := c.confirmedUntil(h).Sub(now)
			// One within the margin is lapseLoop's to give up.
			if !h.lapsed.Load() && left < 2*v/3 && left > c.lapseMargin() && now.Before(h.received.Add(c.cfg.maxHold)) {
				due = append(due, h)
			}
		})
		for i := 0; i < len(due) && ctx.Err() == nil; i += 10 {
			c.extend(ctx, core, due[i:min(i+10, len(due))])
		}
	}
}

// extend extends the visibility of a batch, at most to 12 hours after
// their receive, and records what SQS confirmed. A message whose
// extension SQS refused was taken back: its group's ownership ends.
func (c *Consumer[K, E]) extend(ctx context.Context, core *keyed.Core[K, E, *handle], batch []*handle) {
	sent := time.Now()
	d := c.cfg.VisibilityTimeout
	lapse := c.confirmedUntil(batch[0])
	for _, h := range batch {
		d = min(d, h.received.Add(c.cfg.maxHold).Sub(sent))
		lapse = earliest(lapse, c.confirmedUntil(h))
	}
	d = max(d.Truncate(time.Second), time.Second)
	// No answer helps once the first of the batch lapsed: the call ends
	// then, so that the next look tries again with what is still due.
	cctx, cancel := context.WithDeadline(ctx, lapse.Add(-c.lapseMargin()))
	refused, err := c.changeVisibility(cctx, batch, d)
	cancel()
	if err != nil {
		c.mu.Lock()
		c.stats.extensionErrors += uint64(len(batch))
		c.lastExtensionErr = err
		c.mu.Unlock()
		if ctx.Err() == nil {
			c.cfg.Logger.Warn("ordergen/sqs: visibility extension failed; the consumer trusts only what SQS confirmed and gives a group up before that ends", "queue", c.cfg.QueueURL, "messages", len(batch), "error", err)
		}
		return
	}
	for _, h := range batch {
		if _, no := refused[h]; !no {
			c.confirm(h, sent.Add(d))
		}
	}
	c.mu.Lock()
	c.stats.extensions += uint64(len(batch) - len(refused))
	c.stats.extensionErrors += uint64(len(refused))
	c.stats.extensionsRefused += uint64(len(refused))
	c.mu.Unlock()
	for h, why := range refused {
		core.LeaseLost(h.group, h.id, fmt.Errorf("%w: sqs: SQS refused to extend the visibility of message %s of group %q (%s): it took the message back", transport.ErrLeaseLost, h.id, h.group, why))
	}
}

// lapseLoop ends the ownership of a group whose message's confirmed
// visibility nears its end (see the top of the file). It looks at the
// earliest such end, and at least every sixth of the visibility timeout
// for the messages received meanwhile (whose ends are later than that).
func (c *Consumer[K, E]) lapseLoop(ctx context.Context, core *keyed.Core[K, E, *handle]) {
	margin := c.lapseMargin()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		now := time.Now()
		next := now.Add(c.cfg.VisibilityTimeout / 6)
		var lapsed []*handle
		core.EachUnsettled(func(_ string, h *handle) {
			if h.lapsed.Load() {
				return
			}
			switch at := c.confirmedUntil(h).Add(-margin); {
			case !now.Before(at):
				h.lapsed.Store(true)
				lapsed = append(lapsed, h)
			case at.Before(next):
				next = at
			}
		})
		for _, h := range lapsed {
			core.LeaseLapsed(h.group, h.id, c.lapseCause(h))
		}
		timer.Reset(next.Sub(now))
	}
}

// lapseCause is what the running handler of h's group is told when h's
// confirmed visibility nears its end.
func (c *Consumer[K, E]) lapseCause(h *handle) error {
	c.mu.Lock()
	last := c.lastExtensionErr
	c.mu.Unlock()
	why := "no extension was confirmed in time"
	if last != nil {
		why = "the last failed extension: " + last.Error()
	}
	return fmt.Errorf("%w: sqs: the visibility SQS confirmed for message %s of group %q ends at %s, when SQS may give it to another consumer (%s)",
		transport.ErrLeaseLost, h.id, h.group, c.confirmedUntil(h).Format(time.RFC3339Nano), why)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

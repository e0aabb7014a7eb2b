package sqs

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime/internal/keyed"
	"github.com/ordergen/ordergen/runtime/transport"
)

// settle queues a settled message: a finished one is deleted, an
// unfinished one made visible again (the group's next receive gets it
// first). It never blocks.
func (c *Consumer[K, E]) settle(h *handle, st transport.Settlement) {
	if c.abandon.Load() {
		return
	}
	c.mu.Lock()
	if st == transport.Finished {
		c.deletes = append(c.deletes, h)
	} else {
		c.returns = append(c.returns, h)
	}
	c.mu.Unlock()
	select {
	case c.settleWake <- struct{}{}:
	default:
	}
}

// settleLoop sends the queued settlements, in batches of ten, until stop
// ends. A flush under way when it does goes to its end (Run flushes once
// more after).
func (c *Consumer[K, E]) settleLoop(stop context.Context) {
	for {
		select {
		case <-stop.Done():
			return
		case <-c.settleWake:
		}
		c.flushSettlements(context.Background())
	}
}

// flushSettlements sends the settlements queued so far.
func (c *Consumer[K, E]) flushSettlements(ctx context.Context) {
	for {
		if c.abandon.Load() {
			return
		}
		c.mu.Lock()
		dels, rets := c.deletes, c.returns
		c.deletes, c.returns = nil, nil
		c.mu.Unlock()
		if len(dels) == 0 && len(rets) == 0 {
			return
		}
		for i := 0; i < len(dels); i += 10 {
			c.deleteBatch(ctx, dels[i:min(i+10, len(dels))])
		}
		for i := 0; i < len(rets); i += 10 {
			c.changeVisibility(ctx, rets[i:min(i+10, len(rets))], 0)
		}
	}
}

// deleteBatch deletes hs. A message whose delete fails comes back when its
// visibility ends: its handler then runs again (the version guard skips
// it).
func (c *Consumer[K, E]) deleteBatch(ctx context.Context, hs []*handle) {
	entries := make([]types.DeleteMessageBatchRequestEntry, len(hs))
	for i, h := range hs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h.receipt)}
	}
	out, err := c.cfg.Client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &c.cfg.QueueURL, Entries: entries})
	failed := 0
	switch {
	case err != nil:
		failed = len(hs)
	default:
		failed = len(out.Failed)
		if failed > 0 {
			err = fmt.Errorf("%s: %s", aws.ToString(out.Failed[0].Code), aws.ToString(out.Failed[0].Message))
		}
	}
	if failed > 0 {
		c.mu.Lock()
		c.stats.deleteErrors += uint64(failed)
		c.mu.Unlock()
		c.cfg.Logger.Warn("ordergen/sqs: delete failed; the messages come back when their visibility ends and run again", "queue", c.cfg.QueueURL, "messages", failed, "error", err)
	}
}

// changeVisibility sets the visibility of hs to d from now, and reports
// the ones SQS refused.
func (c *Consumer[K, E]) changeVisibility(ctx context.Context, hs []*handle, d time.Duration) []*handle {
	entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(hs))
	for i, h := range hs {
		entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h.receipt), VisibilityTimeout: int32(d / time.Second)}
	}
	out, err := c.cfg.Client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &c.cfg.QueueURL, Entries: entries})
	if err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Warn("ordergen/sqs: visibility change failed", "queue", c.cfg.QueueURL, "messages", len(hs), "error", err)
		}
		return nil // unknown: the next look tries again
	}
	var refused []*handle
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i < len(hs) {
			refused = append(refused, hs[i])
		}
	}
	if d == 0 && len(refused) > 0 {
		c.mu.Lock()
		c.stats.returnErrors += uint64(len(refused))
		c.mu.Unlock()
	}
	return refused
}

// extendLoop extends, every third of the visibility timeout, the
// visibility of the unsettled messages whose visibility ends within two
// thirds of it, up to 12 hours after their receive. A refused extension
// means SQS took the message back: its group's ownership ends.
func (c *Consumer[K, E]) extendLoop(ctx context.Context, core *keyed.Core[K, E, *handle]) {
	v := c.cfg.VisibilityTimeout
	t := time.NewTicker(v / 3)
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
			if h.visibleUntil.Sub(now) < 2*v/3 && now.Before(h.received.Add(c.cfg.maxHold)) {
				due = append(due, h)
			}
		})
		for i := 0; i < len(due); i += 10 {
			batch := due[i:min(i+10, len(due))]
			// The visibility counts from now, at most to the 12 hours.
			d := v
			for _, h := range batch {
				d = min(d, h.received.Add(c.cfg.maxHold).Sub(now))
			}
			d = max(d.Truncate(time.Second), time.Second)
			refused := c.changeVisibility(ctx, batch, d)
			for _, h := range batch {
				h.visibleUntil = now.Add(d)
			}
			c.mu.Lock()
			c.stats.extensions += uint64(len(batch) - len(refused))
			c.stats.extensionErrors += uint64(len(refused))
			c.mu.Unlock()
			for _, h := range refused {
				core.LeaseLost(h.group, h.id)
			}
		}
	}
}

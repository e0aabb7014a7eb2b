package sqs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime/transport"
)

// settle queues a settled message: a finished one is deleted, an
// unfinished one made visible again (the group's next receive gets it
// first). It never blocks.
func (c *Consumer[K, E]) settle(h *handle, st transport.Settlement) {
	c.leases.Release(h)
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
// ends; its calls run under calls. A flush under way when stop ends goes
// to its end, unless calls ends first (Run flushes once more after).
func (c *Consumer[K, E]) settleLoop(stop, calls context.Context) {
	for {
		select {
		case <-stop.Done():
			return
		case <-c.settleWake:
		}
		c.flushSettlements(calls)
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
			c.returnBatch(ctx, rets[i:min(i+10, len(rets))])
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

// changeVisibility sets the visibility of hs to d from now. It returns
// the messages SQS refused, with its reason, or the call's error (then SQS
// may or may not have changed any of them).
func (c *Consumer[K, E]) changeVisibility(ctx context.Context, hs []*handle, d time.Duration) (map[*handle]string, error) {
	entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(hs))
	for i, h := range hs {
		entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h.receipt), VisibilityTimeout: int32(d / time.Second)}
	}
	out, err := c.cfg.Client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &c.cfg.QueueURL, Entries: entries})
	if err != nil {
		return nil, err
	}
	refused := make(map[*handle]string)
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= 0 && i < len(hs) {
			refused[hs[i]] = aws.ToString(f.Code) + ": " + aws.ToString(f.Message)
		}
	}
	return refused, nil
}

// returnBatch makes hs visible again, so that their group's next receive,
// here or elsewhere, gets them first. A message SQS was not told of comes
// back when its visibility ends (counted in Stats.ReturnErrors).
func (c *Consumer[K, E]) returnBatch(ctx context.Context, hs []*handle) {
	refused, err := c.changeVisibility(ctx, hs, 0)
	failed := len(refused)
	if err != nil {
		failed = len(hs)
	}
	if failed == 0 {
		return
	}
	c.mu.Lock()
	c.stats.returnErrors += uint64(failed)
	c.mu.Unlock()
	if err == nil {
		for _, why := range refused {
			err = errors.New(why)
			break
		}
	}
	c.cfg.Logger.Warn("ordergen/sqs: making messages visible again failed; they come back when their visibility ends", "queue", c.cfg.QueueURL, "messages", failed, "error", err)
}

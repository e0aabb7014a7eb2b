package sqs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/internal/keyed"
)

// receiveLoop receives batches of messages while there is room, until ctx
// ends.
func (c *Consumer[K, E]) receiveLoop(ctx context.Context, core *keyed.Core[K, E, *handle]) {
	backoff := 100 * time.Millisecond
	for {
		take := c.reserve(ctx, core)
		if take <= 0 {
			return
		}
		var attempt [16]byte
		_, _ = rand.Read(attempt[:])
		out, err := c.cfg.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:            &c.cfg.QueueURL,
			MaxNumberOfMessages: int32(take),
			WaitTimeSeconds:     int32(c.cfg.WaitTime / time.Second),
			VisibilityTimeout:   int32(c.cfg.VisibilityTimeout / time.Second),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{
				types.MessageSystemAttributeNameMessageGroupId,
				types.MessageSystemAttributeNameApproximateReceiveCount,
			},
			MessageAttributeNames: []string{"All"},
			// A retry of the call (by the SDK) gets the same messages.
			ReceiveRequestAttemptId: aws.String(hex.EncodeToString(attempt[:])),
		})
		received := time.Now()
		if err != nil {
			c.release(take)
			if ctx.Err() != nil {
				return
			}
			c.mu.Lock()
			c.stats.receiveErrors++
			c.mu.Unlock()
			c.cfg.Logger.Warn("ordergen/sqs: receive failed", "queue", c.cfg.QueueURL, "error", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		var err2 error
		for _, m := range out.Messages {
			if err2 = core.Receive(c.decode(m, received)); err2 != nil {
				break // the target failed: Run stops
			}
		}
		c.release(take)
		if err2 != nil {
			return
		}
	}
}

// reserve waits for room for messages, then reserves up to ten of it for
// one receive call, so that receivers at once never take more than
// MaxInFlight. It returns 0 once ctx ended.
func (c *Consumer[K, E]) reserve(ctx context.Context, core *keyed.Core[K, E, *handle]) int {
	for {
		room := core.WaitRoom(ctx, nil)
		if room <= 0 {
			return 0
		}
		c.mu.Lock()
		if n := room - c.reserved; n > 0 {
			n = min(n, 10)
			c.reserved += n
			c.mu.Unlock()
			return n
		}
		if c.released == nil {
			c.released = make(chan struct{})
		}
		ch := c.released
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0
		}
	}
}

// release ends a reservation: the messages received are the core's to
// count now.
func (c *Consumer[K, E]) release(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reserved -= n
	if c.released != nil {
		close(c.released)
		c.released = nil
	}
}

// decode turns a message into an event, or into a bad message with its
// reason.
func (c *Consumer[K, E]) decode(m types.Message, received time.Time) keyed.Message[E, *handle] {
	h := &handle{
		receipt:      aws.ToString(m.ReceiptHandle),
		group:        m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		id:           aws.ToString(m.MessageId),
		received:     received,
		visibleUntil: received.Add(c.cfg.VisibilityTimeout),
		body:         aws.ToString(m.Body),
		attrs:        m.MessageAttributes,
	}
	km := keyed.Message[E, *handle]{Key: h.group, ID: h.id, Handle: h, Lease: received.Add(c.cfg.maxHold)}
	bad := func(r Reason, err error) keyed.Message[E, *handle] {
		km.Bad = &keyed.Bad{Reason: string(r), Err: err}
		return km
	}
	typ := m.MessageAttributes[AttrType].StringValue
	if typ == nil {
		return bad(ReasonMissingType, fmt.Errorf("no %s attribute", AttrType))
	}
	if h.group == "" {
		return bad(ReasonMissingKey, errors.New("the message has no message group ID"))
	}
	data := []byte(aws.ToString(m.Body))
	if enc := m.MessageAttributes[AttrEncoding].StringValue; enc != nil {
		if *enc != "base64" {
			return bad(ReasonUndecodable, fmt.Errorf("unknown %s %q", AttrEncoding, *enc))
		}
		var err error
		if data, err = base64.StdEncoding.DecodeString(aws.ToString(m.Body)); err != nil {
			return bad(ReasonUndecodable, err)
		}
	}
	ev, err := c.cfg.Codec.Decode(*typ, data)
	switch {
	case errors.Is(err, durable.ErrUnknownEventType):
		return bad(ReasonUnknownType, err)
	case err != nil:
		return bad(ReasonUndecodable, err)
	}
	want, err := MessageGroupID(ev.EventKey())
	if err != nil {
		return bad(ReasonUndecodable, err)
	}
	if want != h.group {
		return bad(ReasonKeyMismatch, fmt.Errorf("message group %q, event key's %q", h.group, want))
	}
	km.Event = ev
	return km
}

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
		take := core.Reserve(ctx, nil, 10) // up to ten a call; receivers at once never take more than MaxInFlight
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
			core.Unreserve(take)
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
		used := 0
		for _, m := range out.Messages {
			used++ // a failed Receive used its slot too
			if err2 = core.Receive(c.decode(m, received)); err2 != nil {
				break // the target failed: Run stops
			}
		}
		core.Unreserve(take - used)
		if err2 != nil {
			return
		}
	}
}

// decode turns a message into an event, or into a bad message with its
// reason.
func (c *Consumer[K, E]) decode(m types.Message, received time.Time) keyed.Message[E, *handle] {
	h := &handle{
		receipt:  aws.ToString(m.ReceiptHandle),
		group:    m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		id:       aws.ToString(m.MessageId),
		received: received,
		body:     aws.ToString(m.Body),
		attrs:    m.MessageAttributes,
	}
	// SQS started the visibility when it answered, a moment before the
	// answer came: the lapse margin (lease.go) covers that moment.
	c.confirm(h, received.Add(c.cfg.VisibilityTimeout))
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

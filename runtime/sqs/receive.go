package sqs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime/transport"
)

// receiveLoop receives batches of messages while there is room, until ctx
// ends.
func (c *Consumer[K, E]) receiveLoop(ctx context.Context, core *transport.KeyIntake[K, E, *handle]) {
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
// reason: its message group ID must be its event's (MessageGroupID), and a
// body in base64 (AttrEncoding) is decoded first. Its lease is kept from
// then on.
func (c *Consumer[K, E]) decode(m types.Message, received time.Time) transport.Message[E, *handle] {
	h := &handle{
		receipt:  aws.ToString(m.ReceiptHandle),
		group:    m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)],
		id:       aws.ToString(m.MessageId),
		received: received,
		body:     aws.ToString(m.Body),
		attrs:    m.MessageAttributes,
	}
	// SQS started the visibility when it answered, a moment before the
	// answer came: the leases' margin covers that moment.
	c.leases.Hold(h, received)
	km := transport.Message[E, *handle]{Key: h.group, ID: h.id, Handle: h, Lease: received.Add(c.cfg.maxHold), Trace: traceOf(m.MessageAttributes)}
	data := []byte(h.body)
	if enc := m.MessageAttributes[AttrEncoding].StringValue; enc != nil {
		var err error
		if *enc != "base64" {
			err = fmt.Errorf("unknown %s %q", AttrEncoding, *enc)
		} else {
			data, err = base64.StdEncoding.DecodeString(h.body)
		}
		if err != nil {
			km.Bad = &transport.Bad{Reason: transport.ReasonUndecodable, Err: err}
			return km
		}
	}
	km.Event, km.Bad = c.dec.Decode(aws.ToString(m.MessageAttributes[transport.HeaderType].StringValue), h.group, data)
	return km
}

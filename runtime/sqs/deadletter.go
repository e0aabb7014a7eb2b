package sqs

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// deadLetter sends a bad message, with the reason in attributes, to the
// dead-letter queue (into the same message group when it is a FIFO queue,
// deduplicated by the message's ID). The message is deleted once SQS took
// the copy, and made visible again if it did not.
func (c *Consumer[K, E]) deadLetter(km transport.Message[E, *handle], done func(error)) {
	h := km.Handle
	// The write runs on a goroutine: the core's callers never wait for SQS.
	c.writes.Go(func() {
		done(c.sendDeadLetter(km, h))
	})
}

func (c *Consumer[K, E]) sendDeadLetter(km transport.Message[E, *handle], h *handle) error {
	attrs := map[string]types.MessageAttributeValue{
		AttrQueue:     str(c.cfg.QueueURL),
		AttrMessageID: str(h.id),
	}
	for _, a := range transport.DeadLetterHeaders(km.Bad.Reason, km.Bad.Err, 0) {
		attrs[a.Key] = str(a.Value)
	}
	for k, v := range h.attrs {
		attrs[k] = v
	}
	in := &sqs.SendMessageInput{QueueUrl: &c.cfg.DeadLetterQueueURL, MessageBody: aws.String(h.body), MessageAttributes: attrs}
	if strings.HasSuffix(c.cfg.DeadLetterQueueURL, ".fifo") {
		group := h.group
		if group == "" {
			group = "ordergen-missing-key"
		}
		in.MessageGroupId = aws.String(group)
		in.MessageDeduplicationId = aws.String(h.id)
	}
	if _, err := c.cfg.Client.SendMessage(c.calls, in); err != nil {
		return fmt.Errorf("sqs: dead letter of message %s to %s: %w", h.id, c.cfg.DeadLetterQueueURL, err)
	}
	return nil
}

func str(s string) types.MessageAttributeValue {
	if s == "" {
		s = "-" // SQS refuses empty attribute values
	}
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(s)}
}

// DeadLetters returns a runtime.DeadLetterSink, for the runtime.SendToDeadLetter
// exhaustion policy, that sends each event a handler gave up on to the
// queue queueURL through client: as the producer would (the event's group,
// encoded by codec), with the transport's dead-letter attributes (reason
// transport.ReasonHandlerFailed, the error, the attempts). It returns once SQS took it; when the send
// fails the runtime parks the event instead, so nothing is lost.
func DeadLetters[K comparable, E any](client *sqs.Client, queueURL string, codec durable.Codec[E]) runtime.DeadLetterSink[K, E] {
	w := &writer[K, E]{client: client, url: queueURL, codec: codec}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		e, group, err := w.entry(dl.Key, dl.Event)
		if err != nil {
			return fmt.Errorf("sqs: dead letter: %w", err)
		}
		for _, a := range transport.DeadLetterHeaders(transport.ReasonHandlerFailed, dl.Err, dl.Attempts) {
			e.MessageAttributes[a.Key] = str(a.Value)
		}
		in := &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: e.MessageBody, MessageAttributes: e.MessageAttributes}
		if strings.HasSuffix(queueURL, ".fifo") {
			in.MessageGroupId, in.MessageDeduplicationId = e.MessageGroupId, e.MessageDeduplicationId
		}
		if _, err := client.SendMessage(ctx, in); err != nil {
			return fmt.Errorf("sqs: dead letter of group %s to %s: %w", group, queueURL, err)
		}
		return nil
	}
}

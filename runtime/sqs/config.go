package sqs

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// MaxHold is the longest SQS keeps a received message invisible: 12 hours
// from the receive, however often its visibility is extended.
const MaxHold = 12 * time.Hour

// Config configures a Consumer of the events E of one entity.
type Config[E any] struct {
	// Client is the SQS client. Required.
	Client *sqs.Client
	// QueueURL is the FIFO queue's URL (its name ends in ".fifo").
	// Required; Run checks that it is a FIFO queue.
	QueueURL string
	// Codec decodes a message's body, by the event type named in its
	// transport.HeaderType attribute. Required; ordergen generates one per entity
	// (AccountCodec).
	Codec durable.Codec[E]
	// DeadLetterQueueURL receives the messages that cannot be handled (see
	// transport.Reason), with the reason in attributes. Required: a bad message never
	// stops its group. (It may be the queue's redrive dead-letter queue.)
	DeadLetterQueueURL string
	// MaxInFlight bounds the messages received and not settled, parked
	// ones included. Zero: 1000.
	MaxInFlight int
	// VisibilityTimeout is the visibility the consumer receives messages
	// with, and extends it by while they are unsettled (running, waiting
	// in their lane, or parked in memory), up to SQS's limit of 12 hours
	// (MaxHold). A crashed consumer's messages come back after it; a
	// consumer cut off from SQS gives a group up a sixth of it before the
	// visibility SQS confirmed ends. Zero: 30s.
	VisibilityTimeout time.Duration
	// WaitTime is the long-polling wait of a receive. Zero: 20s.
	WaitTime time.Duration
	// Receivers is the number of receive calls at once. Zero: 2.
	Receivers int
	// DrainTimeout bounds how long Close, and a group's ownership that
	// ends, wait for the handlers running their messages before they
	// cancel them (a lease lost or lapsing cancels them at once), and then
	// how long Close's last calls to SQS may take. Zero: 10s.
	DrainTimeout time.Duration
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the consumer's metrics (see the
	// package documentation). Nil: nothing is recorded.
	MeterProvider meter.Provider

	sweepEvery time.Duration // tests: how often leases are looked at
	maxHold    time.Duration // tests: MaxHold
}

func (c Config[E]) withDefaults() (Config[E], error) {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 1000
	}
	if c.VisibilityTimeout == 0 {
		c.VisibilityTimeout = 30 * time.Second
	}
	if c.WaitTime == 0 {
		c.WaitTime = 20 * time.Second
	}
	if c.Receivers == 0 {
		c.Receivers = 2
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 10 * time.Second
	}
	if c.maxHold == 0 {
		c.maxHold = MaxHold
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Client == nil:
		return c, fmt.Errorf("sqs: %w: no Client", runtime.ErrInvalidConfig)
	case c.QueueURL == "":
		return c, fmt.Errorf("sqs: %w: no QueueURL", runtime.ErrInvalidConfig)
	case !strings.HasSuffix(c.QueueURL, ".fifo"):
		return c, fmt.Errorf("sqs: %w: queue %s is not a FIFO queue (its name must end in .fifo): a standard queue does not order", runtime.ErrInvalidConfig, c.QueueURL)
	case c.Codec == nil:
		return c, fmt.Errorf("sqs: %w: no Codec", runtime.ErrInvalidConfig)
	case c.DeadLetterQueueURL == "":
		return c, fmt.Errorf("sqs: %w: no DeadLetterQueueURL: bad messages must go somewhere", runtime.ErrInvalidConfig)
	case c.MaxInFlight < 0 || c.Receivers < 0 || c.DrainTimeout < 0:
		return c, fmt.Errorf("sqs: %w: MaxInFlight, Receivers and DrainTimeout must not be negative", runtime.ErrInvalidConfig)
	case c.VisibilityTimeout < time.Second || c.VisibilityTimeout > MaxHold:
		return c, fmt.Errorf("sqs: %w: VisibilityTimeout %v is not between 1s and 12h", runtime.ErrInvalidConfig, c.VisibilityTimeout)
	case c.WaitTime < 0 || c.WaitTime > 20*time.Second:
		return c, fmt.Errorf("sqs: %w: WaitTime %v is not between 0 and 20s", runtime.ErrInvalidConfig, c.WaitTime)
	case c.maxHold <= c.DrainTimeout:
		return c, fmt.Errorf("sqs: %w: DrainTimeout %v must be shorter than 12 hours", runtime.ErrInvalidConfig, c.DrainTimeout)
	}
	return c, nil
}

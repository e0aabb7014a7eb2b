package pubsub

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// Config configures a Consumer of the events E of one entity.
type Config[E any] struct {
	// Client is the Pub/Sub client. Required.
	Client *pubsub.Client
	// Subscription is the subscription's ID or full name
	// ("projects/P/subscriptions/S"). Required; Run checks that it has
	// message ordering enabled.
	Subscription string
	// Codec decodes a message's data, by the event type named in its
	// transport.HeaderType attribute. Required; ordergen generates one per entity
	// (AccountCodec).
	Codec durable.Codec[E]
	// DeadLetterTopic is the topic (ID or full name) that receives the
	// messages that cannot be handled (see transport.Reason), with the reason in
	// attributes. Required: a bad message never stops its key. (It may be
	// the subscription's own dead-letter topic.)
	DeadLetterTopic string
	// MaxInFlight bounds the messages received and not settled, parked
	// ones included: the subscriber's MaxOutstandingMessages. Zero: 1000.
	MaxInFlight int
	// MaxExtension is how long a message may stay unsettled (running,
	// waiting in its lane, or parked in memory) while the client extends
	// its lease: the subscriber's MaxExtension. Before it passes, the
	// consumer gives the message's key back to Pub/Sub, which delivers its
	// unsettled messages again. Zero: 60 minutes.
	MaxExtension time.Duration
	// DrainTimeout bounds how long Close, and a key's ownership that ends,
	// wait for the handlers running their messages before they cancel
	// them. Zero: 10s.
	DrainTimeout time.Duration
	// ReceiveSettings are the subscriber's other settings (NumGoroutines,
	// MaxOutstandingBytes, MaxDurationPerAckExtension, ...). The consumer
	// sets MaxOutstandingMessages, MaxExtension and ShutdownOptions itself.
	ReceiveSettings pubsub.ReceiveSettings
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the consumer's metrics (see the
	// package documentation). Nil: nothing is recorded.
	MeterProvider meter.Provider

	sweepEvery time.Duration // tests: how often leases are looked at
}

func (c Config[E]) withDefaults() (Config[E], error) {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 1000
	}
	if c.MaxExtension == 0 {
		c.MaxExtension = 60 * time.Minute
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Client == nil:
		return c, fmt.Errorf("pubsub: %w: no Client", runtime.ErrInvalidConfig)
	case c.Subscription == "":
		return c, fmt.Errorf("pubsub: %w: no Subscription", runtime.ErrInvalidConfig)
	case c.Codec == nil:
		return c, fmt.Errorf("pubsub: %w: no Codec", runtime.ErrInvalidConfig)
	case c.DeadLetterTopic == "":
		return c, fmt.Errorf("pubsub: %w: no DeadLetterTopic: bad messages must go somewhere", runtime.ErrInvalidConfig)
	case c.MaxInFlight < 0:
		return c, fmt.Errorf("pubsub: %w: MaxInFlight must not be negative", runtime.ErrInvalidConfig)
	case c.DrainTimeout < 0:
		return c, fmt.Errorf("pubsub: %w: DrainTimeout must not be negative", runtime.ErrInvalidConfig)
	case c.MaxExtension <= c.DrainTimeout:
		return c, fmt.Errorf("pubsub: %w: MaxExtension %v must be longer than DrainTimeout %v", runtime.ErrInvalidConfig, c.MaxExtension, c.DrainTimeout)
	}
	return c, nil
}

// fullName returns the full resource name of a subscription or topic given
// by ID or full name.
func fullName(project, kind, nameOrID string) string {
	if strings.HasPrefix(nameOrID, "projects/") {
		return nameOrID
	}
	return "projects/" + project + "/" + kind + "/" + nameOrID
}

package rabbitmq

import (
	"fmt"
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// Config configures a Consumer of the events E of one entity.
type Config[E any] struct {
	// URL is the broker's amqp:// or amqps:// URL. Required.
	URL string
	// AMQP configures the connections the consumer dials (TLS, SASL,
	// Heartbeat, Dial, Properties). Its Recovery must be nil: the
	// consumer reconnects itself, so that no message is acknowledged on a
	// channel other than the one that delivered it.
	AMQP amqp.Config
	// Topology names the queues to consume. The consumer declares it.
	// Required.
	Topology Topology
	// Queues, when set, are the indexes of the topology's queues this
	// consumer subscribes to (a placement of queues over processes); nil:
	// all of them.
	Queues []int
	// Codec decodes a message's body by the event type in its Type
	// property. Required; ordergen generates one per entity.
	Codec durable.Codec[E]
	// Prefetch bounds the messages delivered from one queue and not
	// settled yet (basic.qos per queue), parked ones included: the most a
	// consumer holds is Prefetch times its queues. Zero: 256.
	Prefetch int
	// DrainTimeout bounds the wait, when the consumer closes, for the
	// handlers running to finish before the last acknowledgements. Their
	// messages that had not started are returned at once. At the timeout
	// the running handlers' contexts are cancelled and their messages are
	// returned to the queue. Zero: 10s.
	DrainTimeout time.Duration
	// ReconnectDelay is the first wait before dialling again after the
	// connection or a queue's channel was lost; it doubles up to
	// MaxReconnectDelay. Zero: 100ms and 10s.
	ReconnectDelay, MaxReconnectDelay time.Duration
	// Name identifies the consumer in consumer tags, logs and metrics.
	// Zero: "ordergen".
	Name string
	// Logger receives what an operator must see (queues subscribed and
	// lost, reconnections, dead letters, prefetch held by parks). Nil:
	// slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the consumer's metrics (see the
	// Metric constants) through the runtime's metrics interface. Nil:
	// nothing is recorded.
	MeterProvider meter.Provider
}

// Defaults of Config.
const (
	DefaultPrefetch          = 256
	DefaultDrainTimeout      = 10 * time.Second
	DefaultReconnectDelay    = 100 * time.Millisecond
	DefaultMaxReconnectDelay = 10 * time.Second
)

func (c Config[E]) withDefaults() (Config[E], error) {
	if c.Prefetch == 0 {
		c.Prefetch = DefaultPrefetch
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.ReconnectDelay == 0 {
		c.ReconnectDelay = DefaultReconnectDelay
	}
	if c.MaxReconnectDelay == 0 {
		c.MaxReconnectDelay = DefaultMaxReconnectDelay
	}
	if c.Name == "" {
		c.Name = "ordergen"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	topo, err := c.Topology.withDefaults()
	if err != nil {
		return c, err
	}
	c.Topology = topo
	switch {
	case c.URL == "":
		return c, fmt.Errorf("rabbitmq: %w: no URL", runtime.ErrInvalidConfig)
	case c.Codec == nil:
		return c, fmt.Errorf("rabbitmq: %w: no Codec", runtime.ErrInvalidConfig)
	case c.AMQP.Recovery != nil:
		return c, fmt.Errorf("rabbitmq: %w: AMQP.Recovery is set: the consumer reconnects itself (a recovered channel would renumber deliveries under its acknowledgements)", runtime.ErrInvalidConfig)
	case c.Prefetch < 0 || c.Prefetch > 65535:
		return c, fmt.Errorf("rabbitmq: %w: Prefetch %d is not within 1..65535", runtime.ErrInvalidConfig, c.Prefetch)
	case c.DrainTimeout < 0 || c.ReconnectDelay < 0 || c.MaxReconnectDelay < c.ReconnectDelay:
		return c, fmt.Errorf("rabbitmq: %w: DrainTimeout and ReconnectDelay must not be negative, nor MaxReconnectDelay below ReconnectDelay", runtime.ErrInvalidConfig)
	}
	seen := map[int]bool{}
	for _, q := range c.Queues {
		if q < 0 || q >= c.Topology.Queues || seen[q] {
			return c, fmt.Errorf("rabbitmq: %w: Queues lists %d: not a queue of the topology (0..%d) or listed twice", runtime.ErrInvalidConfig, q, c.Topology.Queues-1)
		}
		seen[q] = true
	}
	if c.Queues != nil && len(c.Queues) == 0 {
		return c, fmt.Errorf("rabbitmq: %w: Queues is empty: nothing to consume", runtime.ErrInvalidConfig)
	}
	if c.Queues == nil {
		for i := range c.Topology.Queues {
			c.Queues = append(c.Queues, i)
		}
	}
	return c, nil
}

package kafka

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// Config configures a Consumer of the events E of one entity.
type Config[E any] struct {
	// ClientOpts are the franz-go options to reach the cluster (SeedBrokers,
	// TLS, SASL, WithLogger, SessionTimeout, HeartbeatInterval, Balancers,
	// ...). The consumer adds WithContext (a context it ends when it gives
	// up leaving the group, so that a broker that stopped answering does
	// not hold Run), ConsumerGroup, ConsumeTopics, DisableAutoCommit and
	// its own OnPartitionsAssigned, OnPartitionsRevoked, OnPartitionsLost
	// and OnOffsetsFetched after them, which replace any given here.
	ClientOpts []kgo.Opt
	// Group is the consumer group. Required.
	Group string
	// Topics are the topics to consume. Required.
	Topics []string
	// Codec decodes a record's value, by the event type named in its
	// HeaderType header. Required; ordergen generates one per entity
	// (AccountCodec). The consumer decodes the records of a large poll on
	// several goroutines at once.
	Codec durable.Codec[E]
	// DeadLetterTopic receives the records that cannot be handled (see
	// Reason), with the reason in headers. Required: a bad record never
	// stops its partition.
	DeadLetterTopic string
	// MaxInFlight bounds the records taken from Kafka and not finished yet,
	// over all partitions, records parked in memory included. When it is
	// reached the consumer stops polling until records finish. Zero: 10000.
	MaxInFlight int
	// MaxPollRecords bounds the records taken in one poll. Zero: 1000.
	MaxPollRecords int
	// MaxMetadataBytes bounds the commit metadata of one partition (the
	// finished offsets above the committed one), in bytes of its text. A
	// partition whose metadata could pass it, however its unfinished
	// records finish, is paused until it shrinks. It must stay below the
	// brokers' offset.metadata.max.bytes. Zero: DefaultMaxMetadataBytes.
	MaxMetadataBytes int
	// CommitInterval is the time between periodic commits. Zero: 1s.
	CommitInterval time.Duration
	// RevokeTimeout bounds the wait, when partitions are revoked or the
	// consumer closes, for the handlers running their records to finish
	// before the final commit. Their records that had not started are
	// withdrawn at once and never start here. At the timeout the running
	// handlers' contexts are cancelled, their records are not committed and
	// they run again on the next owner. Zero: 10s.
	RevokeTimeout time.Duration
	// AcceptKeyless accepts a record without a key, ordered by the key of
	// its decoded event. Its order is then kept only against records of the
	// same partition: the producer did not choose the partition by key. By
	// default such a record goes to the dead-letter topic (ReasonMissingKey).
	AcceptKeyless bool
	// Logger receives what an operator must see (partitions assigned,
	// revoked, lost, paused and resumed; dead letters; failed commits).
	// Nil: slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the consumer's metrics (see the
	// Metric constants) through the runtime's metrics interface;
	// runtime/otelmetrics adapts OpenTelemetry to it. Nil: nothing is
	// recorded.
	MeterProvider meter.Provider
}

func (c Config[E]) withDefaults() (Config[E], error) {
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 10000
	}
	if c.MaxPollRecords == 0 {
		c.MaxPollRecords = 1000
	}
	if c.MaxMetadataBytes == 0 {
		c.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = time.Second
	}
	if c.RevokeTimeout == 0 {
		c.RevokeTimeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Group == "":
		return c, fmt.Errorf("kafka: %w: no Group", runtime.ErrInvalidConfig)
	case len(c.Topics) == 0:
		return c, fmt.Errorf("kafka: %w: no Topics", runtime.ErrInvalidConfig)
	case c.Codec == nil:
		return c, fmt.Errorf("kafka: %w: no Codec", runtime.ErrInvalidConfig)
	case c.DeadLetterTopic == "":
		return c, fmt.Errorf("kafka: %w: no DeadLetterTopic: bad records must go somewhere", runtime.ErrInvalidConfig)
	case c.MaxInFlight < 0 || c.MaxPollRecords < 0:
		return c, fmt.Errorf("kafka: %w: MaxInFlight and MaxPollRecords must not be negative", runtime.ErrInvalidConfig)
	case c.MaxMetadataBytes < minMetadataBytes:
		return c, fmt.Errorf("kafka: %w: MaxMetadataBytes %d is below %d", runtime.ErrInvalidConfig, c.MaxMetadataBytes, minMetadataBytes)
	case c.CommitInterval < 0 || c.RevokeTimeout < 0:
		return c, fmt.Errorf("kafka: %w: CommitInterval and RevokeTimeout must not be negative", runtime.ErrInvalidConfig)
	}
	for _, t := range c.Topics {
		if t == c.DeadLetterTopic {
			return c, fmt.Errorf("kafka: %w: topic %q is also the DeadLetterTopic", runtime.ErrInvalidConfig, t)
		}
	}
	return c, nil
}

// DefaultMaxMetadataBytes is the default bound of the commit metadata of one
// partition, in bytes of its base64 text: 75% of offset.metadata.max.bytes,
// whose default on Kafka brokers is 4096.
const DefaultMaxMetadataBytes = 3072

// minMetadataBytes is the smallest bound a Config may set: room for the
// header and a few runs.
const minMetadataBytes = 64

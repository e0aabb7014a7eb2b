package nats

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
)

// Topology names the JetStream streams of one entity's events: a stream
// Name on the subjects Subject.<key>, which the server maps to
// Subject.<partition>.<key> with its partition() function on the key's
// token, and a dead-letter stream Name-dead on Subject-dead.<key>.
type Topology struct {
	// Name names the stream and prefixes its consumers. Required.
	Name string
	// Subject prefixes the subjects. Zero: Name.
	Subject string
	// Partitions is the number of partitions, each pulled by one consumer
	// at a time. Changing it remaps keys. Zero: 8.
	Partitions int
	// Replicas is the streams' number of replicas (file storage). Zero: 1.
	Replicas int
}

// group is the priority group every consumer pulls in.
const group = "ordergen"

func (t Topology) withDefaults() (Topology, error) {
	t.Subject, t.Partitions = cmp.Or(t.Subject, t.Name), cmp.Or(t.Partitions, 8)
	if t.Name == "" || strings.ContainsAny(t.Name, ". *>/\\\t") || strings.ContainsAny(t.Subject, " *>\t") || t.Partitions < 0 || t.Partitions > 1024 {
		return t, fmt.Errorf("nats: %w: Topology needs a Name without '.', ' ', '*', '>' or slashes, a Subject without wildcards, and Partitions in 1..1024", runtime.ErrInvalidConfig)
	}
	return t, nil
}

// token is key's subject token: "k" and the key in unpadded base64url, so
// that any key is one token of the subjects' alphabet.
func token(key string) string { return "k" + base64.RawURLEncoding.EncodeToString([]byte(key)) }

// SubjectOf returns the subject a key's events are published to.
func (t Topology) SubjectOf(key string) string { return cmp.Or(t.Subject, t.Name) + "." + token(key) }

// DeadLetterSubject returns the subject of a key's dead letters.
func (t Topology) DeadLetterSubject(key string) string {
	return cmp.Or(t.Subject, t.Name) + "-dead." + token(key)
}

// DeadLetterStream names the dead-letter stream.
func (t Topology) DeadLetterStream() string { return t.Name + "-dead" }

// ConsumerName names the durable consumer of partition p.
func (t Topology) ConsumerName(p int) string { return t.Name + "-" + strconv.Itoa(p) }

// declare creates the streams (or finds them as they are) and returns
// the events' stream.
func declare(ctx context.Context, js jetstream.JetStream, t Topology) (jetstream.Stream, error) {
	dead := jetstream.StreamConfig{Name: t.DeadLetterStream(), Subjects: []string{t.Subject + "-dead.*"}, Replicas: t.Replicas}
	if _, err := js.CreateStream(ctx, dead); err != nil {
		return nil, fmt.Errorf("nats: declare stream %s: %w", dead.Name, err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: t.Name, Subjects: []string{t.Subject + ".*"}, Replicas: t.Replicas,
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: t.Subject + ".*",
			Destination: fmt.Sprintf("%s.{{partition(%d,1)}}.{{wildcard(1)}}", t.Subject, t.Partitions)},
	})
	if err != nil {
		return nil, fmt.Errorf("nats: declare stream %s: %w", t.Name, err)
	}
	return st, nil
}

// Config configures a Consumer of the events E of one entity.
type Config[E any] struct {
	// URL is the server's nats:// URL (several, comma-separated). Required.
	URL string
	// Options configure the connections the consumer dials (credentials,
	// TLS, a dialer); the consumer adds nats.NoReconnect and reconnects
	// itself.
	Options []nats.Option
	// Topology names the streams; the consumer declares them and a
	// durable consumer per partition. Required.
	Topology Topology
	// Partitions, when set, are the partitions this consumer pulls; nil:
	// all.
	Partitions []int
	// Codec decodes a message's payload by its event type. Required.
	Codec durable.Codec[E]
	// AckWait is a delivery's lease: the consumer extends it (an
	// in-progress ack) while a handler runs, and gives a partition up
	// when a lease it could not extend ends. Zero: 30s.
	AckWait time.Duration
	// MaxDeliver, when set, bounds a message's deliveries: one delivered
	// more often goes to the dead-letter stream instead of a handler (its
	// key goes on without it). Deliveries count across crashes and changes
	// of hands, a message parked in memory's included. The server's own
	// MaxDeliver stays unbounded: it never gives a message up unseen.
	// Zero: unbounded (the engine's retries and parks deal with failing
	// events; nothing is set aside behind their back).
	MaxDeliver int
	// MaxAckPending bounds a partition's messages delivered and not
	// acknowledged, parked ones included (backpressure). Zero: 256.
	MaxAckPending int
	// PinnedTTL is how long the server keeps a partition pinned to a
	// consumer that stopped pulling (a crash) before it pins another.
	// Zero: 20s; at least 2s.
	PinnedTTL time.Duration
	// DrainTimeout bounds the wait, on Close, for the running handlers.
	// Zero: 10s.
	DrainTimeout time.Duration
	// ReconnectDelay is the first wait before connecting or subscribing
	// again after a loss; it doubles up to MaxReconnectDelay. Zero: 100ms
	// and 10s.
	ReconnectDelay, MaxReconnectDelay time.Duration
	// Name identifies the consumer in logs and metrics. Zero: "ordergen".
	Name string
	// Logger receives what an operator must see. Nil: slog.Default().
	Logger *slog.Logger
	// MeterProvider, when set, receives the metrics (ordergen.nats.*).
	MeterProvider meter.Provider
}

func (c Config[E]) withDefaults() (Config[E], error) {
	c.AckWait = cmp.Or(c.AckWait, 30*time.Second)
	c.PinnedTTL = cmp.Or(c.PinnedTTL, 20*time.Second)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, 10*time.Second)
	c.MaxAckPending = cmp.Or(c.MaxAckPending, 256)
	c.Name = cmp.Or(c.Name, "ordergen")
	c.Logger = cmp.Or(c.Logger, slog.Default())
	var err error
	if c.Topology, err = c.Topology.withDefaults(); err != nil {
		return c, err
	}
	switch {
	case c.URL == "" || c.Codec == nil:
		return c, fmt.Errorf("nats: %w: a consumer needs a URL and a Codec", runtime.ErrInvalidConfig)
	case c.AckWait < 600*time.Millisecond || c.PinnedTTL < 2*time.Second || c.MaxAckPending < 0 || c.MaxDeliver < 0 || c.DrainTimeout < 0:
		return c, fmt.Errorf("nats: %w: AckWait must be at least 600ms, PinnedTTL 2s; MaxAckPending, MaxDeliver and DrainTimeout not negative", runtime.ErrInvalidConfig)
	case c.Partitions != nil && len(c.Partitions) == 0:
		return c, fmt.Errorf("nats: %w: Partitions is empty: nothing to consume", runtime.ErrInvalidConfig)
	}
	seen := map[int]bool{}
	for _, p := range c.Partitions {
		if p < 0 || p >= c.Topology.Partitions || seen[p] {
			return c, fmt.Errorf("nats: %w: Partitions lists %d: not a partition (0..%d) or listed twice", runtime.ErrInvalidConfig, p, c.Topology.Partitions-1)
		}
		seen[p] = true
	}
	if c.Partitions == nil {
		for i := range c.Topology.Partitions {
			c.Partitions = append(c.Partitions, i)
		}
	}
	return c, nil
}

// consumerConfig is partition p's durable consumer: explicit acks, pinned
// to one client of the priority group at a time.
func (c Config[E]) consumerConfig(p int) jetstream.ConsumerConfig {
	t := c.Topology
	return jetstream.ConsumerConfig{
		Durable: t.ConsumerName(p), FilterSubject: t.Subject + "." + strconv.Itoa(p) + ".*",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: c.AckWait, MaxDeliver: -1, MaxAckPending: c.MaxAckPending,
		PriorityPolicy: jetstream.PriorityPolicyPinned, PriorityGroups: []string{group}, PinnedTTL: c.PinnedTTL,
	}
}

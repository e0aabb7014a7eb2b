package transporttest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/metricstest"
	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transporttest/netfault"
)

// Harness is how a transport plugs into the suite: a factory of streams on
// the broker under test, what the broker cannot do, and how its consumer's
// metrics say that parked messages block it.
type Harness struct {
	// NewStream creates, on the broker under test, a stream for one test,
	// unique to it (the suite passes a fresh spec.Name each time): where
	// producers publish and consumers take from. Kafka: a topic of
	// spec.Units partitions, a dead-letter topic and a group; RabbitMQ:
	// spec.Units queues behind an exchange and a dead-letter queue. It
	// removes what it created when the test ends (t.Cleanup) and fails t
	// when the broker refuses.
	NewStream func(t *testing.T, spec StreamSpec) Stream
	// Limits lists what the broker cannot do; the suite skips, saying
	// why, the checks that need it.
	Limits Limits
	// Lease is the time a stream's broker lends a message to a consumer
	// before it delivers it again (SQS's visibility timeout, Pub/Sub's ack
	// deadline), as NewStream configures it: the lease test runs a handler
	// for three leases. Required unless Limits.NoLeases.
	Lease time.Duration
	// ParkBlocked reads, in the metrics a consumer recorded (into the
	// provider of ConsumerOptions.MeterProvider), whether messages parked
	// in memory block its unit of order for other keys: Kafka's
	// MetricPaused, RabbitMQ's prefetch held by parks. Required.
	ParkBlocked func(m metricstest.Metrics) bool
	// Timeout bounds every wait of the suite for something that must
	// happen (a message applied, a dead letter arriving). Zero: 60s.
	Timeout time.Duration
	// Scale multiplies the number of keys and messages of each test.
	// Zero: 1.
	Scale float64
	// Parallel runs the suite's tests, and the variants within a test, at
	// the same time (t.Parallel). For a broker whose streams share nothing
	// (each on a server of its own, as pstest's are), where the tests
	// spend their time waiting for leases and deadlines to pass rather
	// than on the CPU. Each test's checks are the same either way.
	Parallel bool
}

// Limits are what a broker cannot do. The zero value claims everything;
// each true field skips the checks that need it, with its reason.
type Limits struct {
	// NoLeases: the broker does not lend a message for a time, so there is
	// no lease to extend (Kafka owns partitions; RabbitMQ holds unacked
	// messages for as long as the channel lives). The lease test is
	// skipped.
	NoLeases bool
	// OneInFlightPerKey: the broker holds a key's later messages back
	// while one of its messages is unsettled (SQS FIFO message groups;
	// Pub/Sub ordering keys as pstest serves them), so a parked key holds
	// one message of the consumer's intake, not all its later ones. The
	// in-memory park test then parks as many keys as MaxInFlight to block
	// the consumer, instead of one.
	OneInFlightPerKey bool
	// RedeliversAfterClose: the broker may deliver again, after a clean
	// close, messages the consumer acknowledged just before it (RabbitMQ's
	// quorum queues: rabbitmq-server issue 10327). The checks that a
	// restart gets nothing again (drain, dead letters, parks) then allow
	// such duplicates, which the version guard skips, instead of failing.
	RedeliversAfterClose bool
	// UnconfirmedLeases: the broker lends messages, but its client extends
	// the leases by itself and does not tell the consumer whether the
	// broker confirmed an extension (Google Pub/Sub's client, without
	// exactly-once delivery), so a consumer cut off from the broker cannot
	// know that a lease lapsed. The case of a lease lost while cut off is
	// skipped.
	UnconfirmedLeases bool
	// NoNetwork: the consumers and producers reach the broker without a
	// TCP connection the suite could put a netfault.Net in (a broker in
	// the test's process, called directly). The cases that cut and stall
	// connections are skipped.
	NoNetwork bool
}

// StreamSpec is what the suite asks of a stream.
type StreamSpec struct {
	// Name is unique to one test of one run: letters, digits, '.', '-'
	// and '_', at most 100 bytes. Use it (or a prefix of it) for the
	// broker's names so that runs on a shared server do not meet.
	Name string
	// Units is the number of units of order to spread keys over (Kafka
	// partitions, RabbitMQ queues). Brokers that order per key natively
	// (Pub/Sub ordering keys, SQS message groups) ignore it.
	Units int
}

// Stream is one stream of a broker, for one test.
type Stream interface {
	// Producer returns a sink that publishes events to the stream, keyed
	// by their Key: the transport's producer (an AsyncSink if it is one;
	// the suite then publishes with transport.SendKeyed and flushes), with
	// connections of its own to the broker when o.Net is set. The stream
	// closes it when the test ends.
	Producer(t *testing.T, o ProducerOptions) transport.Sink[string, Event]
	// PublishPoison publishes, keyed by key, a message whose payload is
	// body (not a valid encoding of any event) under the event type name
	// of Codec, as a broken producer would. The suite expects a consumer
	// to send it to the broker's dead-letter mechanism and go on.
	PublishPoison(ctx context.Context, key string, body []byte) error
	// DeadLetterSink returns the transport's runtime.DeadLetterSink for
	// the stream: where an engine under the runtime.SendToDeadLetter policy
	// sends an event whose handler failed for good (the broker's
	// dead-letter mechanism).
	DeadLetterSink(t *testing.T) runtime.DeadLetterSink[string, Event]
	// DeadLetters returns the messages that reached the stream's
	// dead-letter destination since the previous call (each is returned
	// once), waiting at most until ctx ends for more when there are none.
	DeadLetters(ctx context.Context) ([]DeadLetter, error)
	// Consumer returns a new consumer of the stream, one more member of
	// its group: with several at once, the broker shares the units among
	// them (or keeps them standing by, as RabbitMQ's single active
	// consumer does). The suite runs, closes or kills it.
	Consumer(t *testing.T, o ConsumerOptions) Consumer
}

// DeadLetter is a message found in a stream's dead-letter destination.
type DeadLetter struct {
	// Key is the message's ordering key.
	Key string
	// Body is its payload as published.
	Body []byte
	// Reason is the transport's reason for dead-lettering it, if it
	// records one (informative only).
	Reason string
}

// ProducerOptions configure one producer of a stream.
type ProducerOptions struct {
	// Net, when set, is the network between the producer and the broker:
	// the producer must reach the broker only through it, on connections
	// of its own (a client made for it, whose dialer or address is
	// Net.DialContext or Net.Proxy), so that the suite can cut them.
	// Nil: as the stream likes (a client it shares, say).
	Net *netfault.Net
}

// ConsumerOptions configure one consumer of a stream.
type ConsumerOptions struct {
	// Name identifies the consumer in logs and errors.
	Name string
	// MaxInFlight bounds the messages the consumer has taken and not
	// settled, parked ones included (Kafka's MaxInFlight, RabbitMQ's
	// prefetch, the flow control of Pub/Sub and SQS). Zero: the
	// transport's default.
	MaxInFlight int
	// Logger receives the consumer's logs.
	Logger *slog.Logger
	// MeterProvider receives the consumer's metrics.
	MeterProvider meter.Provider
	// Net, when set, is the network between the consumer and the broker,
	// as ProducerOptions.Net: the consumer must reach the broker only
	// through it, on connections of its own.
	Net *netfault.Net
}

// Consumer is a transport's consumer of Events, as the suite drives it.
// runtime/kafka's Consumer has these methods but Kill; KillOnCancel adds
// it to a consumer whose Run stops as a crash would when its ctx ends.
type Consumer interface {
	// OnOutcome is given to every subscriber of the target
	// (runtime.Config.OnOutcome).
	OnOutcome(key string, tag uint64, o runtime.Outcome)
	// Run feeds target until Close or Kill, or until ctx ends.
	Run(ctx context.Context, target transport.Target[Event]) error
	// Close stops the consumer cleanly: it stops taking messages, waits
	// for the handlers running, settles what finished, and makes Run
	// return nil.
	Close(ctx context.Context) error
	// Kill stops the consumer as the crash of its process would, at once:
	// it settles nothing more (no acknowledgement, no commit), cuts its
	// connections so that the broker delivers what it had taken to the
	// next consumer, and makes Run return. Kill is called after the
	// suite's engine stopped running handlers and reporting outcomes.
	Kill()
}

// Runner is a consumer without Kill whose Run stops as a crash of its
// process would when its ctx ends (runtime/kafka's Consumer).
type Runner interface {
	OnOutcome(key string, tag uint64, o runtime.Outcome)
	Run(ctx context.Context, target transport.Target[Event]) error
	Close(ctx context.Context) error
}

// KillOnCancel returns r as a Consumer whose Kill ends the context of Run.
func KillOnCancel(r Runner) Consumer {
	ctx, cancel := context.WithCancel(context.Background())
	return &cancelKill{Runner: r, ctx: ctx, cancel: cancel}
}

type cancelKill struct {
	Runner
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelKill) Run(ctx context.Context, target transport.Target[Event]) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unhook := context.AfterFunc(c.ctx, cancel)
	defer unhook()
	return c.Runner.Run(rctx, target)
}

func (c *cancelKill) Kill() { c.once.Do(c.cancel) }

package outbox

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/meter"
	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Config configures a Relay. Store, Entity, Codec and Sink are required;
// every other field's zero value means its documented default.
type Config[K comparable, E any] struct {
	// Store holds the outbox: the store the generated outbox (AccountOutbox)
	// writes to.
	Store *sqlstore.Store
	// Entity is the entity whose outbox the relay ships, as the schema
	// names it ("Account"): the generated outbox writes under that name.
	Entity string
	// Codec decodes the events: the entity's generated codec
	// (AccountCodec{}), the one the outbox encoded them with.
	Codec durable.Codec[E]
	// Sink receives the events, keyed: runtime/kafka's Producer, another
	// broker's, an in-process dispatcher through DispatchSink, or anything
	// of the transport contract. A key's events are sent one at a time, in
	// version order, each once the one before was taken: the relay never
	// relies on a sink's behaviour after a failure.
	Sink transport.Sink[K, E]

	// Batch is the most events one round claims and sends before it marks
	// them sent: the bound of what a crash between send and mark sends
	// again, and of how long a round holds its keys. Zero: 256.
	Batch int
	// Senders is how many keys a round sends at once (each key's events one
	// after another). Zero: 16.
	Senders int
	// SendTimeout bounds each send. Zero: 30 seconds.
	SendTimeout time.Duration
	// Backoff paces the retries of a key whose send failed. Its zero fields
	// mean 100ms, 30s, 2 and jitter.
	Backoff Backoff
	// ParkAfter is how many sends of a key's event may fail before the key
	// parks in the outbox, for an operator to retry or discard
	// (ordergen-parked outbox). Zero: a key retries until its sink takes
	// the event (a broker's outage parks nothing). A send whose error is
	// runtime.Permanent, and an event the codec cannot decode, park the key
	// at once.
	ParkAfter int

	// Poll is how long an idle relay waits before it looks for new events
	// when nothing wakes it. Zero: 5 seconds while the store's Listener
	// listens (PostgreSQL: a trigger notifies every relay of new rows, and
	// the poll only catches what a lost connection missed), 250ms otherwise
	// (SQLite; writers of this process wake the relay at once).
	Poll time.Duration
	// Retention is how long sent events stay in the outbox before the relay
	// prunes them. Zero: one hour; negative: pruned as soon as the relay
	// prunes (every second).
	Retention time.Duration
	// StatsEvery is how often the relay reads the outbox's backlog (its
	// unsent events, the oldest one, the parked keys) for Stats, the
	// metrics and TransportStatus: a count that takes time in proportion
	// to the backlog. Zero: 2 seconds.
	StatsEvery time.Duration

	// MeterProvider records the relay's metrics (see MetricBacklog and the
	// others). Nil records nothing.
	MeterProvider meter.Provider
	// Logger receives parked keys, failing sends (at most one line a second
	// with a count) and store errors. Nil: slog.Default().
	Logger *slog.Logger
}

// Backoff is an exponential backoff with full jitter: after a key's n-th
// failed send, the relay waits a random time up to Initial x Multiplier^(n-1),
// capped at Max, before it sends the key again.
type Backoff struct {
	// Initial is the ceiling after the first failure. Zero: 100ms.
	Initial time.Duration
	// Max caps the ceiling. Zero: 30 seconds.
	Max time.Duration
	// Multiplier grows the ceiling after each failure. Zero: 2.
	Multiplier float64
	// NoJitter waits the full ceiling (tests).
	NoJitter bool
}

// The defaults of Config.
const (
	// DefaultBatch is Config.Batch's default.
	DefaultBatch = 256
	// DefaultSenders is Config.Senders's default.
	DefaultSenders = 16
	// DefaultSendTimeout is Config.SendTimeout's default.
	DefaultSendTimeout = 30 * time.Second
	// DefaultPoll is Config.Poll's default while the store's Listener does
	// not listen (SQLite, or a lost connection).
	DefaultPoll = 250 * time.Millisecond
	// DefaultListenPoll is Config.Poll's default while it listens.
	DefaultListenPoll = 5 * time.Second
	// DefaultRetention is Config.Retention's default.
	DefaultRetention = time.Hour
	// DefaultStatsEvery is Config.StatsEvery's default.
	DefaultStatsEvery = 2 * time.Second
	// DefaultInitial is Backoff.Initial's default.
	DefaultInitial = 100 * time.Millisecond
	// DefaultMaxBackoff is Backoff.Max's default.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultMultiplier is Backoff.Multiplier's default.
	DefaultMultiplier = 2.0
)

// MaxBatch bounds Config.Batch.
const MaxBatch = 10000

// withDefaults refuses a config that cannot work and fills in the
// defaults.
func (c Config[K, E]) withDefaults() (Config[K, E], error) {
	switch {
	case c.Store == nil:
		return c, fmt.Errorf("%w: outbox relay: no Store", runtime.ErrInvalidConfig)
	case c.Entity == "":
		return c, fmt.Errorf("%w: outbox relay: no Entity", runtime.ErrInvalidConfig)
	case c.Codec == nil:
		return c, fmt.Errorf("%w: outbox relay of %s: no Codec", runtime.ErrInvalidConfig, c.Entity)
	case c.Sink == nil:
		return c, fmt.Errorf("%w: outbox relay of %s: no Sink", runtime.ErrInvalidConfig, c.Entity)
	case c.Batch < 0 || c.Batch > MaxBatch:
		return c, fmt.Errorf("%w: outbox relay of %s: Batch %d is not between 1 and %d", runtime.ErrInvalidConfig, c.Entity, c.Batch, MaxBatch)
	case c.Senders < 0 || c.SendTimeout < 0 || c.ParkAfter < 0 || c.Poll < 0 || c.StatsEvery < 0:
		return c, fmt.Errorf("%w: outbox relay of %s: a negative Senders, SendTimeout, ParkAfter, Poll or StatsEvery", runtime.ErrInvalidConfig, c.Entity)
	case c.Backoff.Initial < 0 || c.Backoff.Max < 0 || c.Backoff.Multiplier < 0 || (c.Backoff.Multiplier > 0 && c.Backoff.Multiplier < 1):
		return c, fmt.Errorf("%w: outbox relay of %s: Backoff %+v: durations must not be negative, the multiplier must be 1 or more", runtime.ErrInvalidConfig, c.Entity, c.Backoff)
	}
	var zero K
	if _, err := durable.EncodeKey(zero); err != nil {
		return c, fmt.Errorf("outbox relay of %s: %w", c.Entity, err)
	}
	c.Batch = or(c.Batch, DefaultBatch)
	c.Senders = or(c.Senders, DefaultSenders)
	c.SendTimeout = or(c.SendTimeout, DefaultSendTimeout)
	c.Retention = or(c.Retention, DefaultRetention)
	c.StatsEvery = or(c.StatsEvery, DefaultStatsEvery)
	c.Backoff.Initial = or(c.Backoff.Initial, DefaultInitial)
	c.Backoff.Max = or(c.Backoff.Max, DefaultMaxBackoff)
	c.Backoff.Multiplier = or(c.Backoff.Multiplier, DefaultMultiplier)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// delay returns the wait after a key's attempt-th failed send (from 1).
func (b Backoff) delay(attempt int) time.Duration {
	ceiling := float64(b.Initial)
	for i := 1; i < attempt && ceiling < float64(b.Max); i++ {
		ceiling *= b.Multiplier
	}
	d := time.Duration(min(ceiling, float64(b.Max)))
	if b.NoJitter || d <= 0 {
		return d
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

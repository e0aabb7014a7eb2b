package runtime

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ordergen/ordergen/runtime/meter"
)

// FullPolicy says what Submit does when a backlog limit is reached.
type FullPolicy uint8

const (
	// Reject returns an error wrapping ErrBacklogFull at once. The default.
	Reject FullPolicy = iota
	// Block waits until there is room or the submitter's context ends.
	Block
	// DropOldest accepts the new event and drops the key's oldest pending
	// event (counted as dropped). When the key has nothing pending to give
	// up (the total limit was hit by other keys), the new event is dropped.
	DropOldest
	// DropNewest accepts and at once drops the new event (counted as dropped).
	DropNewest
	// BlockThenReject waits up to Backlog.Wait for room, then rejects with
	// ErrBacklogFull.
	BlockThenReject
)

var (
	fullPolicyNames  = [...]string{Reject: "reject", Block: "block", DropOldest: "drop-oldest", DropNewest: "drop-newest", BlockThenReject: "timeout"}
	fullPolicyConsts = [...]string{Reject: "Reject", Block: "Block", DropOldest: "DropOldest", DropNewest: "DropNewest", BlockThenReject: "BlockThenReject"}
)

// String returns the policy's name as written in a schema.
func (p FullPolicy) String() string {
	if int(p) < len(fullPolicyNames) {
		return fullPolicyNames[p]
	}
	return fmt.Sprintf("FullPolicy(%d)", p)
}

// GoString returns the policy's constant as Go code names it
// (runtime.Block): generated code writes it so.
func (p FullPolicy) GoString() string {
	if int(p) < len(fullPolicyConsts) {
		return "runtime." + fullPolicyConsts[p]
	}
	return fmt.Sprintf("runtime.FullPolicy(%d)", p)
}

// ExhaustedPolicy says what happens to an event whose attempts are used up
// or whose error is permanent.
type ExhaustedPolicy uint8

const (
	// ParkKey sets the event and every later event of its key aside, in order,
	// until Replay or Discard. Other keys go on. The default.
	ParkKey ExhaustedPolicy = iota
	// SendToDeadLetter hands the event to Config.DeadLetter and goes on with the
	// key's next event. This gives up order for that key: a later event runs
	// although an earlier one did not succeed.
	SendToDeadLetter
	// DropEvent counts the event as dropped and goes on (at-most-once delivery).
	DropEvent
)

var (
	exhaustedNames  = [...]string{ParkKey: "park", SendToDeadLetter: "dead-letter", DropEvent: "drop"}
	exhaustedConsts = [...]string{ParkKey: "ParkKey", SendToDeadLetter: "SendToDeadLetter", DropEvent: "DropEvent"}
)

// String returns the policy's name as written in a schema.
func (p ExhaustedPolicy) String() string {
	if int(p) < len(exhaustedNames) {
		return exhaustedNames[p]
	}
	return fmt.Sprintf("ExhaustedPolicy(%d)", p)
}

// GoString returns the policy's constant as Go code names it
// (runtime.ParkKey): generated code writes it so.
func (p ExhaustedPolicy) GoString() string {
	if int(p) < len(exhaustedConsts) {
		return "runtime." + exhaustedConsts[p]
	}
	return fmt.Sprintf("runtime.ExhaustedPolicy(%d)", p)
}

// Retry is the in-lane retry policy: exponential backoff with full jitter.
// Attempt n (from 1) that fails waits a random duration in
// [0, min(Max, Initial*Multiplier^(n-1))) before attempt n+1. While a key
// waits it holds no worker: other keys run.
type Retry struct {
	// Attempts is the total number of attempts, the first included.
	// 1 means no retry. Zero means the default, 5.
	Attempts int
	// Initial is the backoff ceiling after the first failure. Zero: 10ms.
	Initial time.Duration
	// Max caps the backoff ceiling. Zero: 2s.
	Max time.Duration
	// Multiplier grows the ceiling after each failure. Zero: 2.
	Multiplier float64
	// NoJitter waits the full ceiling instead of a random part of it. Tests
	// and deterministic harnesses use it; production wants jitter.
	NoJitter bool
}

// Backlog bounds the events accepted but not yet finished.
type Backlog struct {
	// PerKey limits one key's pending events (the one running included).
	// Zero: 1000.
	PerKey int
	// Total limits pending events over all keys. Zero: 100000.
	Total int
	// WhenFull is the policy when either limit is reached.
	WhenFull FullPolicy
	// Wait is how long the BlockThenReject policy waits for room.
	Wait time.Duration
}

// Config configures an Engine. The zero value of every field means its
// documented default, so Config{} is a working configuration.
type Config[K comparable, E any] struct {
	// Name identifies the engine (the entity and subscriber) in errors, logs
	// and metrics.
	Name string
	// MaxActive is the number of keys in progress at once, which is also the
	// most worker goroutines the engine starts. Zero: 256.
	MaxActive int
	// Backlog bounds pending events.
	Backlog Backlog
	// Retry is the policy for failed attempts.
	Retry Retry
	// Timeout bounds each attempt through its context: the context's
	// deadline, and its end with context.DeadlineExceeded, about a
	// millisecond after it at most (the engine's clock checks deadlines on
	// its tick instead of arming a timer per attempt). Zero: no timeout.
	Timeout time.Duration
	// OnExhausted is the policy for events that exhausted their attempts or
	// failed permanently.
	OnExhausted ExhaustedPolicy
	// Conflate keeps only the newest pending event of a key: an event
	// submitted while an older one of its key is still pending (not yet
	// running) replaces it. The replaced event is counted as conflated.
	Conflate bool
	// BatchSize is the most events a batch handler (NewBatch) receives at
	// once. Zero: 64. Ignored by New.
	BatchSize int
	// Linger is how long a batch engine (NewBatch) waits for more events of
	// a key before it calls the handler with fewer than BatchSize: a batch
	// is handed over once it is full or its oldest event has waited
	// Linger. It trades latency for larger batches. Zero: no wait (a batch
	// is what is pending). Ignored by New, and while the engine closes.
	Linger time.Duration
	// MaxHeld bounds the events of one key held back by Hold. When a key
	// would hold more, it is parked. Zero: 64.
	MaxHeld int
	// MaxHold bounds how long an event may be held. When the oldest held
	// event of a key is older, the key is parked. Zero: 30s.
	MaxHold time.Duration
	// Resync, when set, is called for a key whose resequencer bound
	// (MaxHeld, MaxHold) is hit, before the key is parked: it brings the
	// key's guards up to date from the source of truth, and the held events
	// are judged again (see ResyncFunc). The key is parked only when the
	// resync fails its Retry attempts. Nil: the key is parked at once.
	Resync ResyncFunc[K, E]
	// Parks stores parked events. Nil: the engine keeps them in memory,
	// where they count against the Backlog limits (a key's park and pending
	// events together never pass PerKey) and are lost with the process. A
	// store (a durable one, such as runtime/sqlstore's) keeps them outside
	// the backlog; a replay loads them back a page at a time, as the
	// backlog has room.
	Parks ParkStore[K, E]
	// DeadLetter receives events under the SendToDeadLetter policy. Required with
	// that policy. When it returns an error the event is parked instead, so
	// nothing is lost.
	DeadLetter DeadLetterSink[K, E]
	// MeterProvider, when set, receives the engine's metrics (see the Metric
	// constants) through the runtime's own metrics interface;
	// runtime/otelmetrics adapts OpenTelemetry to it. Nil: nothing is
	// recorded, and the hot path pays one nil check.
	MeterProvider meter.Provider
	// MetricAttributes are added to every measurement; generated
	// dispatchers add the entity (meter.AttrDestination) and the subscriber
	// (meter.AttrConsumerGroup).
	MetricAttributes []meter.Attribute
	// TopKeys is how many keys with the largest backlog the per-key backlog
	// gauges report. Zero: 10.
	TopKeys int
	// OnOutcome, when set, is told the outcome of every accepted event; see
	// OutcomeFunc.
	OnOutcome OutcomeFunc[K]
	// Tracer, when set, is told of each attempt and outcome, and gives the
	// handler's context (runtime/oteltrace: OpenTelemetry spans). Nil: no
	// tracing, and the hot path pays one nil check.
	Tracer Tracer
	// Logger receives the events an operator must see (a key parked, a
	// replay, a discard). Nil: slog.Default().
	Logger *slog.Logger

	// clock, set by the runtime's own tests, replaces the system time.
	clock *manualClock
	// onReportWait, set by the runtime's own tests, is called while
	// Withdraw waits for an outcome a worker has not reported yet.
	onReportWait func()
	// onSpillLook, set by the runtime's own tests, is called when a spill
	// has read the batch's position and is about to claim it.
	onSpillLook func()
}

// withDefaults returns c with every zero field set to its default, or an
// error wrapping ErrInvalidConfig for values that make no sense.
func (c Config[K, E]) withDefaults() (Config[K, E], error) {
	if c.MaxActive == 0 {
		c.MaxActive = DefaultMaxActive
	}
	if c.Backlog.PerKey == 0 {
		c.Backlog.PerKey = DefaultPerKey
	}
	if c.Backlog.Total == 0 {
		c.Backlog.Total = DefaultTotal
	}
	r := &c.Retry
	if r.Attempts == 0 {
		r.Attempts = DefaultAttempts
	}
	if r.Initial == 0 {
		r.Initial = DefaultInitial
	}
	if r.Max == 0 {
		r.Max = DefaultMaxBackoff
	}
	if r.Multiplier == 0 {
		r.Multiplier = DefaultMultiplier
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxHeld == 0 {
		c.MaxHeld = DefaultMaxHeld
	}
	if c.MaxHold == 0 {
		c.MaxHold = DefaultMaxHold
	}
	if c.TopKeys == 0 {
		c.TopKeys = DefaultTopKeys
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.MaxActive < 0:
		return c, fmt.Errorf("%w: MaxActive %d is negative", ErrInvalidConfig, c.MaxActive)
	case c.Backlog.PerKey < 0 || c.Backlog.Total < 0:
		return c, fmt.Errorf("%w: backlog limits must not be negative", ErrInvalidConfig)
	case c.Backlog.PerKey > c.Backlog.Total:
		return c, fmt.Errorf("%w: per-key backlog %d exceeds total %d", ErrInvalidConfig, c.Backlog.PerKey, c.Backlog.Total)
	case int(c.Backlog.WhenFull) >= len(fullPolicyNames):
		return c, fmt.Errorf("%w: unknown backlog policy %v", ErrInvalidConfig, c.Backlog.WhenFull)
	case c.Backlog.WhenFull == BlockThenReject && c.Backlog.Wait <= 0:
		return c, fmt.Errorf("%w: the timeout backlog policy needs a positive Wait", ErrInvalidConfig)
	case r.Attempts < 0:
		return c, fmt.Errorf("%w: Retry.Attempts %d is negative", ErrInvalidConfig, r.Attempts)
	case r.Initial < 0 || r.Max < 0 || r.Initial > r.Max:
		return c, fmt.Errorf("%w: Retry needs 0 <= Initial <= Max (got %v, %v)", ErrInvalidConfig, r.Initial, r.Max)
	case r.Multiplier < 1:
		return c, fmt.Errorf("%w: Retry.Multiplier %v is below 1", ErrInvalidConfig, r.Multiplier)
	case c.Timeout < 0:
		return c, fmt.Errorf("%w: Timeout %v is negative", ErrInvalidConfig, c.Timeout)
	case int(c.OnExhausted) >= len(exhaustedNames):
		return c, fmt.Errorf("%w: unknown exhaustion policy %v", ErrInvalidConfig, c.OnExhausted)
	case c.OnExhausted == SendToDeadLetter && c.DeadLetter == nil:
		return c, fmt.Errorf("%w: the dead-letter policy needs a DeadLetter sink", ErrInvalidConfig)
	case c.BatchSize < 0 || c.Linger < 0 || c.MaxHeld < 0 || c.MaxHold < 0 || c.TopKeys < 0:
		return c, fmt.Errorf("%w: BatchSize, Linger, MaxHeld, MaxHold and TopKeys must not be negative", ErrInvalidConfig)
	}
	return c, nil
}

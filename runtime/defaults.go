package runtime

import "time"

// The defaults of the policies, kept here only: Config.withDefaults gives
// them to a zero field, and the generator (ordergen) gives them to what a
// schema leaves out, so that generated dispatchers and Config{} agree.
const (
	// DefaultMaxActive is Config.MaxActive's default (schema:
	// lanes.max_active).
	DefaultMaxActive = 256
	// DefaultPerKey is Backlog.PerKey's default (schema: backlog.per_key).
	DefaultPerKey = 1000
	// DefaultTotal is Backlog.Total's default (schema: backlog.total).
	DefaultTotal = 100000
	// DefaultWhenFull is Backlog.WhenFull's default, its zero value
	// (schema: backlog.when_full).
	DefaultWhenFull = Reject
	// DefaultAttempts is Retry.Attempts's default (schema: retry.attempts).
	DefaultAttempts = 5
	// DefaultInitial is Retry.Initial's default (schema: retry.initial).
	DefaultInitial = 10 * time.Millisecond
	// DefaultMaxBackoff is Retry.Max's default (schema: retry.max).
	DefaultMaxBackoff = 2 * time.Second
	// DefaultMultiplier is Retry.Multiplier's default (schema:
	// retry.multiplier).
	DefaultMultiplier = 2.0
	// DefaultOnExhausted is Config.OnExhausted's default, its zero value
	// (schema: on_exhausted).
	DefaultOnExhausted = ParkKey
	// DefaultMaxHeld is Config.MaxHeld's default (schema:
	// resequencer.max_events).
	DefaultMaxHeld = 64
	// DefaultMaxHold is Config.MaxHold's default (schema:
	// resequencer.max_wait).
	DefaultMaxHold = 30 * time.Second
	// DefaultTimeout is the per-attempt timeout of a generated dispatcher
	// whose schema sets none (schema: timeout). A Config's zero Timeout
	// means no timeout: only generated code uses this default.
	DefaultTimeout = 5 * time.Second
	// DefaultBatchSize is Config.BatchSize's default.
	DefaultBatchSize = 64
	// DefaultTopKeys is Config.TopKeys's default.
	DefaultTopKeys = 10
)

// FullPolicies returns every FullPolicy, in the order of their values. The
// String of each is its name in a schema (backlog.when_full), so the
// generator accepts exactly these names.
func FullPolicies() []FullPolicy {
	out := make([]FullPolicy, len(fullPolicyNames))
	for i := range out {
		out[i] = FullPolicy(i)
	}
	return out
}

// ExhaustedPolicies returns every ExhaustedPolicy, in the order of their
// values. The String of each is its name in a schema (on_exhausted), but
// for DropEvent, which a schema chooses with delivery: at-most-once.
func ExhaustedPolicies() []ExhaustedPolicy {
	out := make([]ExhaustedPolicy, len(exhaustedNames))
	for i := range out {
		out[i] = ExhaustedPolicy(i)
	}
	return out
}

package meter

// Instrument names. Durations follow OpenTelemetry's semantic conventions
// for messaging (messaging.process.duration); the rest are ordergen's own.
const (
	// MetricProcessDuration is a histogram of handler attempts, in seconds.
	MetricProcessDuration = "messaging.process.duration"
	// MetricEvents counts events by outcome (attribute ordergen.outcome):
	// accepted, handled, skipped (with ordergen.skip.reason), parked,
	// dead_lettered, dropped, conflated, withdrawn, rejected, retried,
	// replayed.
	MetricEvents = "ordergen.events"
	// MetricBacklog is the number of pending events.
	MetricBacklog = "ordergen.backlog"
	// MetricBacklogKey is the pending events of the keys with the largest
	// backlog (attribute ordergen.key; at most Config.TopKeys keys).
	MetricBacklogKey = "ordergen.backlog.key"
	// MetricOldestAge is the age of the oldest pending event, in seconds;
	// with attribute ordergen.key, of each of the top keys.
	MetricOldestAge = "ordergen.backlog.oldest_age"
	// MetricHeld is the number of events held back on a version gap.
	MetricHeld = "ordergen.held"
	// MetricResyncs counts the keys resynced from the source of truth when
	// their resequencer bound was hit (Config.Resync), instead of parked.
	MetricResyncs = "ordergen.resyncs"
	// MetricParkedKeys is the number of parked keys.
	MetricParkedKeys = "ordergen.parked.keys"
	// MetricParkedEvents is the number of parked events.
	MetricParkedEvents = "ordergen.parked.events"
	// MetricLanes is the number of keys with a lane.
	MetricLanes = "ordergen.lanes.active"
)

// Attribute keys of the engine's measurements.
const (
	// AttrOutcome is an event's outcome on MetricEvents.
	AttrOutcome = "ordergen.outcome"
	// AttrSkipReason is why an event was skipped, on MetricEvents.
	AttrSkipReason = "ordergen.skip.reason"
	// AttrKey is the key of the per-key backlog gauges.
	AttrKey = "ordergen.key"
	// AttrErrorType is the kind of failure of a handler attempt (error,
	// permanent, panic, timeout) on MetricProcessDuration.
	AttrErrorType = "error.type"
	// AttrSystem is on every measurement, as "ordergen".
	AttrSystem = "messaging.system"
	// AttrDestination names the entity; generated dispatchers set it
	// through Config.MetricAttributes.
	AttrDestination = "messaging.destination.name"
	// AttrConsumerGroup names the subscriber; generated dispatchers set it
	// through Config.MetricAttributes.
	AttrConsumerGroup = "messaging.consumer.group.name"
)

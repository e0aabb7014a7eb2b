package rabbitmq

// The consumer's instruments, recorded through Config.MeterProvider (by
// its transport.UnitConsumer). Every measurement carries messaging.system
// ("rabbitmq") and messaging.consumer.group.name (Config.Name); the
// per-queue ones add messaging.destination.name (the queue).
const (
	// MetricConsumed counts the messages delivered, per queue.
	MetricConsumed = "messaging.client.consumed.messages"
	// MetricUnsettled is, per queue, the messages delivered and not
	// settled: what its prefetch counts.
	MetricUnsettled = "ordergen.rabbitmq.unsettled"
	// MetricParked is, per queue, the unsettled messages parked in memory:
	// they hold their room in the prefetch until their parks are resolved.
	MetricParked = "ordergen.rabbitmq.parked"
	// MetricBlocked is, per queue, 1 while it is blocked, by
	// AttrBlockReason: "in_flight" while its prefetch is full, or "parked"
	// from the moment its prefetch fills with messages parked in memory
	// holding half of it or more until they hold less than half (the
	// queue waits for an operator); 0 otherwise.
	MetricBlocked = "ordergen.rabbitmq.blocked"
	// MetricDeadLettered counts the bad messages rejected to the
	// dead-letter exchange, by AttrDeadLetterReason (a transport.Reason).
	MetricDeadLettered = "ordergen.rabbitmq.dead_lettered"
	// MetricReconnects counts the losses of the connection ("connection")
	// and of a queue's channel ("queue"), by AttrLost.
	MetricReconnects = "ordergen.rabbitmq.reconnects"

	// AttrBlockReason is why a queue is blocked, on MetricBlocked.
	AttrBlockReason = "ordergen.rabbitmq.blocked.reason"
	// AttrDeadLetterReason is the reason of MetricDeadLettered.
	AttrDeadLetterReason = "ordergen.rabbitmq.dead_letter.reason"
	// AttrLost is what was lost, on MetricReconnects.
	AttrLost = "ordergen.rabbitmq.lost"
)

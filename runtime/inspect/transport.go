package inspect

import (
	"context"
	"time"
)

// Transport is implemented by transports that can show their state to an
// operator: runtime/kafka's Consumer (its lag and paused partitions); others
// may follow. It must be safe to call at any time, also before the
// transport runs and after it stopped.
type Transport interface {
	TransportStatus() TransportStatus
}

// TransportStatus is a transport's state now.
type TransportStatus struct {
	// Kind names the transport ("kafka").
	Kind string
	// Name says which one it is ("group ledger, topics accounts").
	Name string
	// Counters are its counters and gauges, in the order to show them.
	Counters []Counter
	// Partitions are the units of ordered delivery it holds now: Kafka
	// partitions, queues, message groups.
	Partitions []Partition
}

// Counter is one named number.
type Counter struct {
	Name  string
	Value int64
}

// Partition is the state of one unit of ordered delivery a transport holds.
type Partition struct {
	// Name names it ("accounts/3").
	Name string
	// Lag is how far its consumer is behind the newest message; -1 when
	// unknown.
	Lag int64
	// Unfinished is the number of messages taken and not finished, and
	// Parked how many of them are parked.
	Unfinished, Parked int
	// OldestUnfinished is how long ago the oldest unfinished message was
	// taken.
	OldestUnfinished time.Duration
	// Paused says why taking messages is paused; "" when it is not.
	Paused string
	// Detail is anything else worth showing ("committed 120, high
	// watermark 130").
	Detail string
	// Entity and Key name the outbox key that the partition is, when the
	// transport lets an operator act on it (OutboxOperator); both are
	// empty otherwise.
	Entity, Key string
}

// OutboxOperator is implemented by a Transport whose stopped keys an
// operator can act on: the transactional outbox's (runtime/outbox's Relay,
// and ordergen-parked's view of a store's outboxes), whose partitions with
// a Key are the keys that do not flow, parked or retrying after failed
// sends. Both methods act in the store at once: an outbox key needs no
// handler to resume. A key that flows is refused with an error wrapping
// runtime.ErrNotParked.
type OutboxOperator interface {
	// RetryKey lets entity's key flow again from its first unsent event.
	RetryKey(ctx context.Context, entity, key string) (Result, error)
	// DiscardKey drops the key's unsent events and lets it flow again:
	// its consumers never see those versions, and their guards find a gap.
	DiscardKey(ctx context.Context, entity, key string) (Result, error)
}

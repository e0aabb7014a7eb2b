package kafka

import (
	"time"

	"github.com/ordergen/ordergen/runtime/transport"
)

// Stats are a Consumer's counters since it started, and its state now.
type Stats struct {
	// StreamStats are the intake's counters: Submitted (handed to every
	// subscriber), Finished (every subscriber reported an outcome that lets
	// the commit move past them), Unfinished (given up without finishing,
	// to run again on the next owner: withdrawn or still running when
	// their partition was revoked or lost, or whose dead letter could not
	// be written), DeadLettered and DeadLetterErrors (dead-letter writes).
	transport.StreamStats
	// Polled is the number of records polled for partitions the consumer
	// held.
	Polled uint64
	// SkippedFinished is the number of records skipped because the
	// previous owner's commit metadata listed them as finished.
	SkippedFinished uint64
	// Commits is the number of commit requests that got an answer.
	Commits uint64
	// CommitErrors is the number of failed commit requests and partitions.
	CommitErrors uint64
	// MetadataTruncated is the number of partition commits whose metadata
	// was cut to its bound (the offsets left out run again on a restart).
	MetadataTruncated uint64
	// Pauses is the number of times a partition's fetching was paused.
	Pauses uint64
	// Assigned, Revoked and Lost count partitions.
	Assigned, Revoked, Lost uint64
	// Rebalances counts the rebalance callbacks.
	Rebalances Rebalances
	// InFlight is the number of records taken and not finished now,
	// parked ones included.
	InFlight int
	// Parked is the number of those parked in memory: they finish when
	// their parks are resolved (Replay or Discard).
	Parked int
	// Partitions is the number of partitions held now.
	Partitions int
	// Paused is the number of partitions paused now; PausedMetadata of
	// them for their commit metadata (see PauseReason).
	Paused, PausedMetadata int
	// Intake says why the consumer takes no records now: MaxInFlight is
	// reached (transport.BlockedInFlight), and parked records hold half of
	// it or more (transport.BlockedParked: every partition waits until
	// their parks are resolved); zero while it takes them.
	Intake transport.Blocked
}

// Rebalances counts the rebalance events a consumer saw.
type Rebalances struct {
	// Assigned, Revoked and Lost count the callbacks that assigned,
	// revoked and lost partitions.
	Assigned, Revoked, Lost uint64
}

// PartitionStatus is the state of one partition the consumer holds: what
// an operator looks at when a partition does not move.
type PartitionStatus struct {
	// Topic and Partition name it.
	Topic     string
	Partition int32
	// Committed is the last committed offset the consumer knows (its own
	// commit, or the one it started from); -1 when there is none.
	Committed int64
	// HighWatermark is the high watermark of its last fetch; -1 before one.
	HighWatermark int64
	// Lag is HighWatermark minus Committed; -1 when either is unknown.
	Lag int64
	// Unfinished is the number of records taken and not finished.
	Unfinished int
	// Parked is the number of those parked in memory.
	Parked int
	// OldestUnfinishedAge is how long ago the oldest unfinished record was
	// taken: the commit waits for it.
	OldestUnfinishedAge time.Duration
	// Paused says why fetching is paused; zero when it is not.
	Paused PauseReason
	// MetadataBytes is the size of its last committed metadata.
	MetadataBytes int
}

// Stats returns a snapshot of the consumer's counters.
func (c *Consumer[K, E]) Stats() Stats {
	parts := c.Partitions()
	in := c.in.Stats()
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	s.Intake = c.watch.Now()
	s.StreamStats = in
	s.InFlight = c.in.Unsettled()
	s.Partitions = len(parts)
	for _, p := range parts {
		s.Parked += p.Parked
		if p.Paused != notPaused {
			s.Paused++
		}
		if p.Paused == PausedMetadata {
			s.PausedMetadata++
		}
	}
	return s
}

// Partitions returns the state of the partitions the consumer holds.
func (c *Consumer[K, E]) Partitions() []PartitionStatus {
	c.mu.Lock()
	out := make([]PartitionStatus, 0, len(c.parts))
	var ps []*partition[K, E]
	for _, p := range c.parts {
		st := PartitionStatus{Topic: p.topic, Partition: p.partition, Committed: -1, HighWatermark: p.highWatermark, Lag: -1,
			Paused: p.pause, MetadataBytes: len(p.lastMeta)}
		if p.committed {
			st.Committed = p.lastOffset
		}
		if st.Committed >= 0 && st.HighWatermark >= 0 {
			st.Lag = max(st.HighWatermark-st.Committed, 0)
		}
		var oldest int64
		st.Unfinished, oldest = p.trk.Unfinished()
		st.OldestUnfinishedAge = ageOf(oldest)
		out = append(out, st)
		ps = append(ps, p)
	}
	c.mu.Unlock()
	// The intake's locks come before c.mu: asked without it.
	for i, p := range ps {
		_, out[i].Parked = p.stream.Unsettled()
	}
	return out
}

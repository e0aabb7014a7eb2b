package kafka

// Stats are a Consumer's counters since it started.
type Stats struct {
	// Polled is the number of records polled for partitions the consumer
	// held.
	Polled uint64
	// Submitted is the number of records handed to every subscriber.
	Submitted uint64
	// Finished is the number of records finished: every subscriber
	// reported an outcome that lets the commit move past them.
	Finished uint64
	// SkippedFinished is the number of records skipped because the
	// previous owner's commit metadata listed them as finished.
	SkippedFinished uint64
	// Stuck is the number of records that will not finish in this
	// process: parked without Config.CommitParked, or whose dead letter
	// could not be written. Their partition's commit stays before them.
	Stuck uint64
	// DeadLettered is the number of bad records written to the
	// dead-letter topic.
	DeadLettered uint64
	// DeadLetterErrors is the number of failed dead-letter writes.
	DeadLetterErrors uint64
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
	// InFlight is the number of records taken and not finished now.
	InFlight int
	// Partitions is the number of partitions held now.
	Partitions int
	// Paused is the number of partitions paused now.
	Paused int
}

// Stats returns a snapshot of the consumer's counters.
func (c *Consumer[K, E]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.InFlight = c.inflight
	s.Partitions = len(c.parts)
	for _, p := range c.parts {
		if p.paused {
			s.Paused++
		}
	}
	return s
}

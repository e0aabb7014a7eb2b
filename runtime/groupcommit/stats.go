package groupcommit

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/meter"
)

// meterName is the instrumentation scope of the committer's instruments.
const meterName = "github.com/ordergen/ordergen/runtime/groupcommit"

// The committer's instruments, recorded through Config.MeterProvider as
// things happen. Every measurement carries messaging.system ("ordergen")
// and Config.MetricAttributes.
const (
	// MetricCommitted counts the groups committed.
	MetricCommitted = "ordergen.group.committed"
	// MetricSize is a histogram of the events of each committed group
	// (those of the keys that stayed in it).
	MetricSize = "ordergen.group.size"
	// MetricRollbacks counts the rollbacks of a group's whole transaction
	// after which the group runs again (with the keys left in it), by
	// reason (attribute AttrReason): failure, eviction, conflict. A
	// failure that a savepoint undoes is not one, nor the last conflict of
	// a group that gives up.
	MetricRollbacks = "ordergen.group.rollbacks"
	// MetricEvictions counts the works evicted from their groups for
	// running past Config.MaxWork.
	MetricEvictions = "ordergen.group.evictions"
)

// AttrReason is why a group was rolled back, on MetricRollbacks: one of
// "failure" (a key's work failed), "eviction" (a key's work ran past
// MaxWork) and "conflict" (another writer).
const AttrReason = "ordergen.group.rollback.reason"

// The values of AttrReason.
const (
	reasonFailure  = "failure"
	reasonEviction = "eviction"
	reasonConflict = "conflict"
)

// Stats are a committer's counts since it was made.
type Stats struct {
	// Committed counts the groups committed (MetricCommitted).
	Committed uint64
	// Events counts the events of the committed groups.
	Events uint64
	// Keys counts the keys' works committed in groups.
	Keys uint64
	// FailureRollbacks, EvictionRollbacks and ConflictRollbacks count the
	// rollbacks of a group's transaction by reason (MetricRollbacks).
	FailureRollbacks, EvictionRollbacks, ConflictRollbacks uint64
	// SavepointRollbacks counts the failures that only rolled back to the
	// failing key's savepoint.
	SavepointRollbacks uint64
	// Failed counts the works that failed (an error or a panic).
	Failed uint64
	// Evictions counts the works evicted (MetricEvictions).
	Evictions uint64
	// Alone counts the evicted works that then committed alone.
	Alone uint64
	// Queued is the number of Do calls waiting for a group now.
	Queued int
	// Open is the number of groups in a transaction now.
	Open int
}

// Stats returns the committer's counts.
func (c *Committer[T]) Stats() Stats {
	n := &c.counts
	s := Stats{
		Committed:          n.committed.Load(),
		Events:             n.events.Load(),
		Keys:               n.keys.Load(),
		FailureRollbacks:   n.rollbacks[0].Load(),
		EvictionRollbacks:  n.rollbacks[1].Load(),
		ConflictRollbacks:  n.rollbacks[2].Load(),
		SavepointRollbacks: n.savepointRollbacks.Load(),
		Failed:             n.failed.Load(),
		Evictions:          n.evictions.Load(),
		Alone:              n.alone.Load(),
	}
	c.mu.Lock()
	s.Queued, s.Open = len(c.queue), c.groups
	c.mu.Unlock()
	return s
}

// counts are what Stats reports.
type counts struct {
	committed, events, keys    atomic.Uint64
	rollbacks                  [3]atomic.Uint64 // by reasonIndex
	savepointRollbacks, failed atomic.Uint64
	evictions, alone           atomic.Uint64
}

func reasonIndex(reason string) int {
	switch reason {
	case reasonFailure:
		return 0
	case reasonEviction:
		return 1
	}
	return 2
}

func (c *Committer[T]) countCommit(keys, events int) {
	c.counts.committed.Add(1)
	c.counts.keys.Add(uint64(keys))
	c.counts.events.Add(uint64(events))
	if m := c.metrics; m != nil {
		m.committed.Add(1, m.all)
		m.size.Record(float64(events), m.all)
	}
}

func (c *Committer[T]) countRollback(reason string) {
	i := reasonIndex(reason)
	c.counts.rollbacks[i].Add(1)
	if m := c.metrics; m != nil {
		m.rollbacks.Add(1, m.byReason[i])
	}
}

func (c *Committer[T]) countEviction() {
	c.counts.evictions.Add(1)
	if m := c.metrics; m != nil {
		m.evictions.Add(1, m.all)
	}
}

// metrics are a committer's instruments; nil records nothing.
type metrics struct {
	committed, rollbacks, evictions meter.Counter
	size                            meter.Histogram
	all                             meter.AttributeSet
	byReason                        [3]meter.AttributeSet
}

func startMetrics(cfg Config) (*metrics, error) {
	mp := cfg.MeterProvider
	if mp == nil {
		return nil, nil
	}
	m := mp.Meter(meterName)
	if m == nil {
		return nil, fmt.Errorf("%w: groupcommit: %s: metrics: the MeterProvider gave no meter", runtime.ErrInvalidConfig, cfg.Name)
	}
	base := append([]meter.Attribute{{Key: meter.AttrSystem, Value: "ordergen"}}, cfg.MetricAttributes...)
	ms := &metrics{all: m.Attributes(base...)}
	for i, reason := range [...]string{reasonFailure, reasonEviction, reasonConflict} {
		ms.byReason[i] = m.Attributes(append(slices.Clip(base), meter.Attribute{Key: AttrReason, Value: reason})...)
	}
	ins := instruments()
	var err error
	if ms.committed, err = m.Counter(ins.committed); err == nil {
		if ms.rollbacks, err = m.Counter(ins.rollbacks); err == nil {
			if ms.evictions, err = m.Counter(ins.evictions); err == nil {
				ms.size, err = m.Histogram(ins.size)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: groupcommit: %s: metrics: %w", runtime.ErrInvalidConfig, cfg.Name, err)
	}
	return ms, nil
}

// catalogue is the committer's instruments.
type catalogue struct {
	committed, size, rollbacks, evictions meter.Instrument
}

func instruments() catalogue {
	return catalogue{
		committed: meter.Instrument{Name: MetricCommitted, Kind: meter.KindCounter, Unit: "{group}", Description: "Groups committed."},
		size:      meter.Instrument{Name: MetricSize, Kind: meter.KindHistogram, Unit: "{event}", Description: "Events of each committed group."},
		rollbacks: meter.Instrument{Name: MetricRollbacks, Kind: meter.KindCounter, Unit: "{rollback}", Description: "Rollbacks of a group's transaction, by reason."},
		evictions: meter.Instrument{Name: MetricEvictions, Kind: meter.KindCounter, Unit: "{work}", Description: "Works evicted from their groups for running past MaxWork."},
	}
}

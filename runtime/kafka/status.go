package kafka

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// TransportStatus reports the consumer's state for an operator's console
// (runtime/console, through inspect.Transport): its counters, and each
// partition it holds with its lag, its unfinished and parked records, and
// why it is paused.
func (c *Consumer[K, E]) TransportStatus() inspect.TransportStatus {
	st := c.Stats()
	out := inspect.TransportStatus{
		Kind: "kafka",
		Name: fmt.Sprintf("group %s, topics %s", c.cfg.Group, strings.Join(c.cfg.Topics, ", ")),
		Counters: []inspect.Counter{
			{Name: "partitions", Value: int64(st.Partitions)},
			{Name: "paused", Value: int64(st.Paused)},
			{Name: "in flight", Value: int64(st.InFlight)},
			{Name: "parked", Value: int64(st.Parked)},
			{Name: "polled", Value: int64(st.Polled)},
			{Name: "finished", Value: int64(st.Finished)},
			{Name: "dead-lettered", Value: int64(st.DeadLettered)},
			{Name: "commits", Value: int64(st.Commits)},
			{Name: "commit errors", Value: int64(st.CommitErrors)},
			{Name: "pauses", Value: int64(st.Pauses)},
			{Name: "rebalances", Value: int64(st.Rebalances.Assigned + st.Rebalances.Revoked + st.Rebalances.Lost)},
		},
	}
	parts := c.Partitions()
	slices.SortFunc(parts, func(a, b PartitionStatus) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, p := range parts {
		detail := fmt.Sprintf("committed %s, high watermark %s", offset(p.Committed), offset(p.HighWatermark))
		if p.MetadataBytes > 0 {
			detail += fmt.Sprintf(", commit metadata %d B", p.MetadataBytes)
		}
		out.Partitions = append(out.Partitions, inspect.Partition{
			Name:             fmt.Sprintf("%s/%d", p.Topic, p.Partition),
			Lag:              p.Lag,
			Unfinished:       p.Unfinished,
			Parked:           p.Parked,
			OldestUnfinished: p.OldestUnfinishedAge,
			Paused:           p.Paused.String(),
			Detail:           detail,
		})
	}
	return out
}

// offset writes an offset, "none" for -1.
func offset(o int64) string {
	if o < 0 {
		return "none"
	}
	return fmt.Sprint(o)
}

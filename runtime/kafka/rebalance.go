package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/runtime/transport"
	"github.com/ordergen/ordergen/runtime/transport/offsets"
)

// onAssigned starts an ownership for each new partition. franz-go calls it
// before it fetches the partitions' committed offsets and records. A
// partition that a cooperative rebalance lets the consumer keep is not
// assigned again: its ownership goes on.
func (c *Consumer[K, E]) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	var ps []*partition[K, E]
	for topic, ids := range assigned {
		for _, id := range ids {
			t := tp{topic, id}
			p := &partition[K, E]{tp: t, highWatermark: -1}
			p.stream = c.in.Open(fmt.Sprintf("%s[%d]", topic, id), c.hooks(p))
			if c.metrics != nil {
				p.attrs = c.metrics.partitionAttrs(t)
			}
			ps = append(ps, p)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range ps {
		c.parts[p.tp] = p
	}
	c.stats.Assigned += uint64(len(ps))
	c.stats.Rebalances.Assigned++
	c.cfg.Logger.Info("ordergen/kafka: partitions assigned", "group", c.cfg.Group, "partitions", assigned)
}

// onFetched reads the committed offsets of the new partitions, and the
// finished offsets above them that the previous owner listed in the commit
// metadata.
func (c *Consumer[K, E]) onFetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	type commit struct {
		t      tp
		offset int64
		meta   *string
	}
	var commits []commit
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == 0 {
					commits = append(commits, commit{tp{t.Topic, p.Partition}, p.Offset, p.Metadata})
				}
			}
		}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				commits = append(commits, commit{tp{t.Topic, p.Partition}, p.Offset, p.Metadata})
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cm := range commits {
		p := c.parts[cm.t]
		if p == nil || p.state != active || p.trk.Known() || cm.offset < 0 {
			continue
		}
		var spans []offsets.Span
		if cm.meta != nil && *cm.meta != "" {
			var err error
			if spans, err = offsets.Decode(*cm.meta, cm.offset); err != nil {
				c.cfg.Logger.Debug("ordergen/kafka: commit metadata ignored", "topic", p.topic, "partition", p.partition, "error", err)
				spans = nil
			}
		}
		p.trk.Start(cm.offset, spans)
		p.lastOffset, p.lastMeta, p.committed = cm.offset, "", true
		if cm.meta != nil {
			p.lastMeta = *cm.meta
		}
	}
	return nil
}

// onRevoked ends the ownership of the revoked partitions: it stops feeding
// them, withdraws their events that have not started, waits (up to
// Config.RevokeTimeout) for the running ones, commits and lets them go.
func (c *Consumer[K, E]) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	ps := c.lookup(revoked)
	if len(ps) == 0 {
		return
	}
	c.mu.Lock()
	c.stats.Rebalances.Revoked++
	c.mu.Unlock()
	cause := ended("revoked", revoked)
	if c.abandon.Load() || c.leaving.Load() {
		c.release(transport.Ended(cause), nil, cl, ps, "revoked")
		return
	}
	dctx, cancel := context.WithTimeoutCause(ctx, c.cfg.RevokeTimeout, cause)
	defer cancel()
	c.release(dctx, ctx, cl, ps, "revoked")
}

// ended is the cause a handler whose partition's ownership ended sees
// (context.Cause): why, and which partitions.
func ended(why string, ps map[string][]int32) error {
	return fmt.Errorf("%w: kafka: partitions %v %s", transport.ErrOwnershipEnded, ps, why)
}

// onLost ends the ownership of the lost partitions at once and commits
// nothing: another member may own them already, so their events that have
// not started are withdrawn and the running ones cancelled without delay.
func (c *Consumer[K, E]) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	ps := c.lookup(lost)
	if len(ps) == 0 {
		return
	}
	c.mu.Lock()
	c.stats.Rebalances.Lost++
	c.mu.Unlock()
	c.cfg.Logger.Warn("ordergen/kafka: partitions lost; their records that had not started are withdrawn and the running ones cancelled",
		"group", c.cfg.Group, "partitions", lost)
	c.release(transport.Ended(ended("lost (this member was fenced: another may own them already)", lost)), nil, cl, ps, "lost")
}

// lookup returns the partitions of m the consumer holds.
func (c *Consumer[K, E]) lookup(m map[string][]int32) []*partition[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []*partition[K, E]
	for topic, ids := range m {
		for _, id := range ids {
			if p := c.parts[tp{topic, id}]; p != nil && p.state != gone {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// release ends the ownership of ps: it stops feeding them, gives up their
// records waiting for room, withdraws the events that have not started,
// waits until the running ones finish or endCtx ends (their attempts are
// then cancelled), commits them with commitCtx unless it is nil, and
// forgets them: outcomes of their records are ignored from then on.
func (c *Consumer[K, E]) release(endCtx, commitCtx context.Context, cl *kgo.Client, ps []*partition[K, E], why string) {
	var streams []*transport.Stream[K, E, record[K, E]]
	c.mu.Lock()
	for _, p := range ps {
		if p.state == active {
			p.state = revoking
			streams = append(streams, p.stream)
		}
	}
	c.mu.Unlock()
	if len(streams) == 0 {
		return
	}
	start := time.Now()
	left, err := c.in.End(endCtx, streams...)
	if left > 0 || err != nil {
		c.cfg.Logger.Warn("ordergen/kafka: records of "+why+" partitions were still running; their handlers were cancelled and they run again on the next owner",
			"group", c.cfg.Group, "records", left, "waited", time.Since(start), "error", err)
	}
	if commitCtx != nil {
		if err := c.commit(commitCtx, cl, ps); err != nil {
			c.cfg.Logger.Warn("ordergen/kafka: commit of "+why+" partitions failed", "group", c.cfg.Group, "error", err)
		}
	}
	c.forget(cl, ps)
	c.mu.Lock()
	if why == "lost" {
		c.stats.Lost += uint64(len(streams))
	} else {
		c.stats.Revoked += uint64(len(streams))
	}
	c.mu.Unlock()
	c.cfg.Logger.Info("ordergen/kafka: partitions "+why, "group", c.cfg.Group, "partitions", len(streams))
}

// forget drops the partitions' state and resumes the fetching it paused.
func (c *Consumer[K, E]) forget(cl *kgo.Client, ps []*partition[K, E]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resume := map[string][]int32{}
	for _, p := range ps {
		p.state = gone
		if c.parts[p.tp] == p {
			delete(c.parts, p.tp)
		}
		if p.pause != notPaused {
			p.pause = notPaused
			resume[p.topic] = append(resume[p.topic], p.partition)
		}
	}
	if len(resume) > 0 {
		cl.ResumeFetchPartitions(resume)
	}
}

package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// onAssigned starts the state of each new partition. franz-go calls it
// before it fetches the partitions' committed offsets and records.
func (c *Consumer[K, E]) onAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for topic, ps := range assigned {
		for _, id := range ps {
			t := tp{topic, id}
			c.parts[t] = &partition[K, E]{tp: t}
			n++
		}
	}
	c.stats.Assigned += uint64(n)
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
		if p == nil || p.state != active || p.trk.known || cm.offset < 0 {
			continue
		}
		var spans []span
		if cm.meta != nil && *cm.meta != "" {
			var err error
			if spans, err = decodeMetadata(*cm.meta, cm.offset); err != nil {
				c.cfg.Logger.Debug("ordergen/kafka: commit metadata ignored", "topic", p.topic, "partition", p.partition, "error", err)
				spans = nil
			}
		}
		p.trk.start(cm.offset, spans)
		p.lastOffset, p.lastMeta, p.committed = cm.offset, "", true
		if cm.meta != nil {
			p.lastMeta = *cm.meta
		}
	}
	return nil
}

// onRevoked stops feeding the revoked partitions, waits (up to
// Config.RevokeTimeout) for their records in flight, commits them and lets
// them go.
func (c *Consumer[K, E]) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	ps := c.detach(revoked)
	if len(ps) == 0 {
		return
	}
	if !c.abandon.Load() && !c.leaving.Load() {
		dctx, cancel := context.WithTimeout(ctx, c.cfg.RevokeTimeout)
		start := time.Now()
		left := c.drain(dctx, ps)
		cancel()
		if left > 0 {
			c.cfg.Logger.Warn("ordergen/kafka: revoked partitions still had records in flight; they run again on the next owner",
				"group", c.cfg.Group, "records", left, "waited", time.Since(start))
		}
		if err := c.commit(ctx, cl, ps); err != nil {
			c.cfg.Logger.Warn("ordergen/kafka: commit on revoke failed", "group", c.cfg.Group, "error", err)
		}
	}
	c.forget(cl, ps)
	c.mu.Lock()
	c.stats.Revoked += uint64(len(ps))
	c.mu.Unlock()
	c.cfg.Logger.Info("ordergen/kafka: partitions revoked", "group", c.cfg.Group, "partitions", revoked)
}

// onLost lets the lost partitions go without committing: another member may
// own them already.
func (c *Consumer[K, E]) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	ps := c.detach(lost)
	c.forget(cl, ps)
	c.mu.Lock()
	c.stats.Lost += uint64(len(ps))
	c.mu.Unlock()
	if len(ps) > 0 {
		c.cfg.Logger.Warn("ordergen/kafka: partitions lost; their records in flight are abandoned", "group", c.cfg.Group, "partitions", lost)
	}
}

// detach stops feeding the given partitions and gives up their stashed
// records, and returns them.
func (c *Consumer[K, E]) detach(m map[string][]int32) []*partition[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []*partition[K, E]
	for topic, ids := range m {
		for _, id := range ids {
			p := c.parts[tp{topic, id}]
			if p == nil || p.state == gone {
				continue
			}
			p.state = revoking
			c.drop(p.stash)
			p.stash = nil
			if p.blocked {
				p.blocked = false
				c.blocked--
			}
			ps = append(ps, p)
		}
	}
	return ps
}

// drain waits until the partitions have no record in flight or ctx ends,
// and returns how many records were still in flight.
func (c *Consumer[K, E]) drain(ctx context.Context, ps []*partition[K, E]) int {
	for _, p := range ps {
		c.mu.Lock()
		if p.inflight == 0 {
			c.mu.Unlock()
			continue
		}
		if p.drained == nil {
			p.drained = make(chan struct{})
		}
		ch := p.drained
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	left := 0
	c.mu.Lock()
	for _, p := range ps {
		left += p.inflight
	}
	c.mu.Unlock()
	return left
}

// forget drops the partitions' state: outcomes of their records still in
// flight are ignored from now on.
func (c *Consumer[K, E]) forget(cl *kgo.Client, ps []*partition[K, E]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resume := map[string][]int32{}
	for _, p := range ps {
		p.state = gone
		if c.parts[p.tp] == p {
			delete(c.parts, p.tp)
		}
		if p.paused {
			p.paused = false
			resume[p.topic] = append(resume[p.topic], p.partition)
		}
	}
	if len(resume) > 0 {
		cl.ResumeFetchPartitions(resume)
	}
}

package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/ordergen/ordergen/runtime/transport/offsets"
)

// commitLoop commits every Config.CommitInterval until ctx ends.
func (c *Consumer[K, E]) commitLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := c.commit(ctx, c.client(), c.all()); err != nil && ctx.Err() == nil {
				c.cfg.Logger.Warn("ordergen/kafka: commit failed", "group", c.cfg.Group, "error", err)
			}
		}
	}
}

// Commit commits every partition the consumer holds now, up to its lowest
// unfinished offset, with the finished offsets above it in the metadata.
// The consumer also commits on its own every Config.CommitInterval, when
// partitions are revoked and when it closes.
func (c *Consumer[K, E]) Commit(ctx context.Context) error {
	cl := c.client()
	if cl == nil {
		return errors.New("kafka: commit before Run")
	}
	return c.commit(ctx, cl, c.all())
}

// commitPart is one partition's commit in a request.
type commitPart[K comparable, E any] struct {
	p      *partition[K, E]
	offset int64
	meta   string
}

// commit commits ps where their commit point moved, in one OffsetCommit
// request carrying the group's generation and member ID. Commits go one at
// a time, so that a later one never lands before an earlier one.
func (c *Consumer[K, E]) commit(ctx context.Context, cl *kgo.Client, ps []*partition[K, E]) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	var parts []commitPart[K, E]
	c.mu.Lock()
	for _, p := range ps {
		if p.state == gone || !p.trk.Known() {
			continue
		}
		offset, spans := p.trk.CommitPoint()
		meta, kept := offsets.Encode(offset, spans, c.cfg.MaxMetadataBytes)
		if kept < len(spans) {
			c.stats.MetadataTruncated++
		}
		if p.committed && offset == p.lastOffset && meta == p.lastMeta {
			continue
		}
		parts = append(parts, commitPart[K, E]{p, offset, meta})
	}
	c.mu.Unlock()
	if len(parts) == 0 {
		return nil
	}
	tooLarge, err := c.send(ctx, cl, parts)
	if len(tooLarge) > 0 {
		// The brokers' offset.metadata.max.bytes is below MaxMetadataBytes:
		// commit the offsets alone (safe: the finished offsets above them
		// run again after a restart).
		c.cfg.Logger.Warn("ordergen/kafka: commit metadata too large for the brokers; committing offsets without it (lower MaxMetadataBytes)",
			"group", c.cfg.Group, "partitions", len(tooLarge), "bound", c.cfg.MaxMetadataBytes)
		for i := range tooLarge {
			tooLarge[i].meta = ""
		}
		if _, rerr := c.send(ctx, cl, tooLarge); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// send sends one OffsetCommit request for parts, carrying the group's
// generation and member ID, and returns the parts the brokers refused as
// OFFSET_METADATA_TOO_LARGE apart from the other errors.
func (c *Consumer[K, E]) send(ctx context.Context, cl *kgo.Client, parts []commitPart[K, E]) (tooLarge []commitPart[K, E], err error) {
	start := time.Now()
	defer func() { c.metrics.commitDone(time.Since(start), err) }()
	member, gen := cl.GroupMetadata()
	if gen < 0 {
		return nil, fmt.Errorf("kafka: commit: not in group %s", c.cfg.Group)
	}
	ids, err := c.topicIDsFor(ctx, cl, parts)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = c.cfg.Group, gen, member
	byTopic := map[string]int{}
	for _, pt := range parts {
		i, ok := byTopic[pt.p.topic]
		if !ok {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic, rt.TopicID = pt.p.topic, ids[pt.p.topic]
			req.Topics = append(req.Topics, rt)
			i = len(req.Topics) - 1
			byTopic[pt.p.topic] = i
		}
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = pt.p.partition, pt.offset
		rp.Metadata = kmsg.StringPtr(pt.meta)
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	resp, err := req.RequestWith(ctx, cl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.stats.CommitErrors++
		return nil, fmt.Errorf("kafka: commit: %w", err)
	}
	var errs []error
	for i, rt := range resp.Topics {
		if i >= len(req.Topics) {
			break
		}
		for _, rp := range rt.Partitions {
			pt := findPart(parts, req.Topics[i].Topic, rp.Partition)
			if pt < 0 {
				continue
			}
			err := kerr.ErrorForCode(rp.ErrorCode)
			switch {
			case errors.Is(err, kerr.OffsetMetadataTooLarge) && parts[pt].meta != "":
				tooLarge = append(tooLarge, parts[pt])
				continue
			case err != nil:
				c.stats.CommitErrors++
				errs = append(errs, fmt.Errorf("%s[%d] offset %d: %w", req.Topics[i].Topic, rp.Partition, parts[pt].offset, err))
				continue
			}
			p := parts[pt].p
			p.lastOffset, p.lastMeta, p.committed = parts[pt].offset, parts[pt].meta, true
		}
	}
	c.stats.Commits++
	if len(errs) > 0 {
		return tooLarge, fmt.Errorf("kafka: commit: %w", errors.Join(errs...))
	}
	return tooLarge, nil
}

func findPart[K comparable, E any](parts []commitPart[K, E], topic string, partition int32) int {
	for i, pt := range parts {
		if pt.p.topic == topic && pt.p.partition == partition {
			return i
		}
	}
	return -1
}

// topicIDsFor returns the IDs of the topics of parts (OffsetCommit v10 and
// later name topics by ID), asking the cluster for those it does not know.
func (c *Consumer[K, E]) topicIDsFor(ctx context.Context, cl *kgo.Client, parts []commitPart[K, E]) (map[string][16]byte, error) {
	c.mu.Lock()
	if c.topicIDs == nil {
		c.topicIDs = make(map[string][16]byte)
	}
	var missing []string
	for _, pt := range parts {
		if _, ok := c.topicIDs[pt.p.topic]; !ok && !slices.Contains(missing, pt.p.topic) {
			missing = append(missing, pt.p.topic)
		}
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		req := kmsg.NewPtrMetadataRequest()
		for _, t := range missing {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("kafka: topic IDs: %w", err)
		}
		c.mu.Lock()
		for _, t := range resp.Topics {
			if t.Topic != nil && t.ErrorCode == 0 {
				c.topicIDs[*t.Topic] = t.TopicID
			}
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make(map[string][16]byte, len(c.topicIDs))
	for t, id := range c.topicIDs {
		ids[t] = id
	}
	return ids, nil
}

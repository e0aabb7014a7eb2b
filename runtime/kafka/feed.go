package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
)

// partState is where an assigned partition is in its life.
type partState uint8

const (
	active   partState = iota // records are taken
	revoking                  // no more records; waiting for those in flight
	gone                      // revoked or lost: outcomes are ignored
)

// partition is the consumer's state of one assigned partition.
type partition[K comparable, E any] struct {
	tp
	state    partState
	trk      tracker
	inflight int           // slots of this partition
	stash    []*pending[E] // records waiting for room, in offset order
	blocked  bool          // records wait in the stash (or are being retried)
	paused   bool          // fetching paused by the consumer
	drained  chan struct{} // closed when inflight reaches 0, for a waiter
	stuck    int           // records parked in a park that does not survive

	lastOffset int64 // the last commit sent
	lastMeta   string
	committed  bool
}

// pending is a record taken, or about to be.
type pending[E any] struct {
	rec    *kgo.Record
	event  E
	reason Reason // a bad record when not ""
	err    error
	tag    uint64 // its slot, once taken
	from   int    // subscribers that hold it
}

// feed polls and submits records until Close or ctx's end, or until target
// fails.
func (c *Consumer[K, E]) feed(ctx context.Context, target Target[E]) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.closeCh:
			return nil
		default:
		}
		if err := c.retryBlocked(target); err != nil {
			return err
		}
		c.mu.Lock()
		room := c.cfg.MaxInFlight - c.inflight
		c.mu.Unlock()
		if room <= 0 {
			select {
			case <-c.wake:
			case <-ctx.Done():
			case <-c.closeCh:
			}
			continue
		}
		pctx, cancel := context.WithCancel(ctx)
		c.mu.Lock()
		c.pollCancel = cancel
		c.mu.Unlock()
		select {
		case <-c.wake:
			cancel()
		case <-c.closeCh:
			cancel()
		default:
		}
		// Rebalances wait from this poll until AllowRebalance, so the
		// records polled belong to the partitions' current assignment.
		fetches := c.client().PollRecords(pctx, min(room, c.cfg.MaxPollRecords))
		c.mu.Lock()
		c.pollCancel = nil
		c.mu.Unlock()
		cancel()
		if fetches.IsClientClosed() {
			c.client().AllowRebalance()
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				c.cfg.Logger.Warn("ordergen/kafka: fetch error", "topic", topic, "partition", partition, "error", err)
			}
		})
		var err error
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if err == nil && len(fp.Records) > 0 {
				err = c.take(tp{fp.Topic, fp.Partition}, fp.Records, target)
			}
		})
		c.client().AllowRebalance()
		if err != nil {
			return err
		}
	}
}

// take decodes the records polled from one partition and feeds them.
func (c *Consumer[K, E]) take(t tp, recs []*kgo.Record, target Target[E]) error {
	c.mu.Lock()
	p := c.parts[t]
	ok := p != nil && p.state == active
	if ok {
		c.stats.Polled += uint64(len(recs))
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	items := make([]*pending[E], len(recs))
	for i, r := range recs {
		items[i] = c.decode(r)
	}
	c.mu.Lock()
	if p.blocked {
		p.stash = append(p.stash, items...)
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return c.submit(p, items, target)
}

// decode turns a record into an event, or into a bad record with its reason.
func (c *Consumer[K, E]) decode(r *kgo.Record) *pending[E] {
	it := &pending[E]{rec: r}
	bad := func(reason Reason, err error) *pending[E] {
		it.reason, it.err = reason, err
		return it
	}
	var typ []byte
	found := false
	for _, h := range r.Headers {
		if h.Key == HeaderType {
			typ, found = h.Value, true
		}
	}
	if !found {
		return bad(ReasonMissingType, fmt.Errorf("no %s header", HeaderType))
	}
	if len(r.Key) == 0 && !c.cfg.AcceptKeyless {
		return bad(ReasonMissingKey, errors.New("the record has no key"))
	}
	ev, err := c.cfg.Codec.Decode(string(typ), r.Value)
	switch {
	case errors.Is(err, runtime.ErrUnknownEventType):
		return bad(ReasonUnknownType, err)
	case err != nil:
		return bad(ReasonUndecodable, err)
	}
	it.event = ev
	if len(r.Key) > 0 {
		key, err := runtime.DecodeKey[K](string(r.Key))
		if err != nil {
			return bad(ReasonUndecodable, err)
		}
		if key != ev.EventKey() {
			text, _ := runtime.EncodeKey(ev.EventKey())
			if !bytes.Equal([]byte(text), r.Key) {
				return bad(ReasonKeyMismatch, fmt.Errorf("record key %q, event key %q", r.Key, text))
			}
		}
	}
	return it
}

// submit takes items, in order, and hands them to target. When the lanes
// refuse one for lack of room, or taking the next would let the commit
// metadata pass its bound, the rest wait in the partition's stash and the
// partition's fetching pauses.
func (c *Consumer[K, E]) submit(p *partition[K, E], items []*pending[E], target Target[E]) error {
	c.mu.Lock()
	p.trk.measure()
	c.mu.Unlock()
	for i, it := range items {
		c.mu.Lock()
		if p.state != active {
			c.drop(items[i:])
			c.mu.Unlock()
			return nil
		}
		if it.tag == 0 {
			o := it.rec.Offset
			if p.trk.seen(o) {
				c.mu.Unlock()
				continue
			}
			if p.trk.inheritedDone(o) {
				p.trk.skip(o)
				c.stats.SkippedFinished++
				c.mu.Unlock()
				continue
			}
			if !p.trk.fits(o, c.cfg.MaxMetadataBytes) {
				c.block(p, items[i:], true)
				c.mu.Unlock()
				return nil
			}
			tag, s := c.slots.alloc()
			s.part, s.offset, s.remaining, s.handing = p, o, bias, true
			it.tag = tag
			p.trk.add(o)
			p.inflight++
			c.inflight++
		}
		c.mu.Unlock()
		if it.reason != "" {
			c.deadLetter(p, it)
			continue
		}
		n, err := target.SubmitTagged(c.nowait, it.event, it.tag, it.from)
		c.mu.Lock()
		s := c.slots.get(it.tag)
		if s == nil { // given up meanwhile (the partition was lost)
			c.mu.Unlock()
			continue
		}
		s.remaining += int32(n - it.from)
		it.from = n
		switch {
		case err == nil:
			c.stats.Submitted++
			s.remaining -= bias
			s.handing = false
			if s.remaining == 0 {
				c.release(it.tag, s)
			}
		case errors.Is(err, runtime.ErrBacklogFull) || errors.Is(err, context.Canceled):
			if p.state != active {
				c.drop(items[i:])
				c.mu.Unlock()
				return nil
			}
			c.block(p, items[i:], false)
			c.mu.Unlock()
			return nil
		case errors.Is(err, runtime.ErrInvalidEvent) && n == 0:
			it.reason, it.err = ReasonInvalidEvent, err
			c.mu.Unlock()
			c.deadLetter(p, it)
			continue
		default:
			c.mu.Unlock()
			return fmt.Errorf("kafka: submit %s[%d] offset %d: %w", p.topic, p.partition, it.rec.Offset, err)
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.unblock(p)
	c.mu.Unlock()
	return nil
}

// block keeps rest in p's stash and pauses fetching p. c.mu is held.
func (c *Consumer[K, E]) block(p *partition[K, E], rest []*pending[E], bound bool) {
	why := "the lanes are full"
	if bound {
		why = "the commit metadata could pass its bound"
	}
	if !p.blocked {
		p.blocked = true
		c.blocked++
	}
	p.stash = slices.Clone(rest)
	if !p.paused {
		p.paused = true
		c.stats.Pauses++
		c.client().PauseFetchPartitions(map[string][]int32{p.topic: {p.partition}})
		level := slog.LevelDebug
		if bound {
			level = slog.LevelWarn // it waits for records to finish, perhaps parked ones
		}
		c.cfg.Logger.Log(context.Background(), level, "ordergen/kafka: partition paused", "topic", p.topic, "partition", p.partition, "why", why)
	}
}

// unblock resumes fetching p once its stash is empty. c.mu is held.
func (c *Consumer[K, E]) unblock(p *partition[K, E]) {
	if len(p.stash) > 0 {
		return
	}
	if p.blocked {
		p.blocked = false
		c.blocked--
	}
	if p.paused {
		p.paused = false
		c.client().ResumeFetchPartitions(map[string][]int32{p.topic: {p.partition}})
	}
}

// drop gives up items that were not handed to every subscriber: they are
// never finished, so the next owner runs them again. c.mu is held.
func (c *Consumer[K, E]) drop(items []*pending[E]) {
	for _, it := range items {
		if it.tag == 0 {
			continue
		}
		s := c.slots.get(it.tag)
		if s == nil || !s.handing {
			continue
		}
		s.abandoned, s.handing = true, false
		s.remaining -= bias
		if s.remaining == 0 {
			c.release(it.tag, s)
		}
	}
}

// retryBlocked offers the stashed records of the blocked partitions again.
func (c *Consumer[K, E]) retryBlocked(target Target[E]) error {
	c.mu.Lock()
	if c.blocked == 0 {
		c.mu.Unlock()
		return nil
	}
	var ps []*partition[K, E]
	for _, p := range c.parts {
		if p.blocked && p.state == active {
			ps = append(ps, p)
		}
	}
	c.mu.Unlock()
	for _, p := range ps {
		c.mu.Lock()
		items := p.stash
		p.stash = nil
		c.mu.Unlock()
		if err := c.submit(p, items, target); err != nil {
			return err
		}
	}
	return nil
}

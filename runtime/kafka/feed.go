package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// feed polls and submits records until Close or ctx's end, or until the
// target fails.
func (c *Consumer[K, E]) feed(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.closeCh:
			return nil
		default:
		}
		if err := c.retryBlocked(); err != nil {
			return err
		}
		room := c.cfg.MaxInFlight - c.source().Unsettled()
		if room <= 0 {
			// Set before noteIntake counts the parked records: a record that
			// settles or parks in memory after that count leaves a wake-up.
			c.mu.Lock()
			c.waitRoom = true
			c.mu.Unlock()
		}
		c.noteIntake(room <= 0)
		if room <= 0 {
			if c.source().Unsettled() >= c.cfg.MaxInFlight { // looked again: a settle may have missed waitRoom
				select {
				case <-c.wake:
				case <-ctx.Done():
				case <-c.closeCh:
				}
			}
			c.mu.Lock()
			c.waitRoom = false
			c.mu.Unlock()
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
		// records polled belong to the partitions' current ownership.
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
		var taken []takenRecords[K, E]
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			c.watermark(tp{fp.Topic, fp.Partition}, fp.HighWatermark)
			if len(fp.Records) > 0 {
				if p := c.accept(tp{fp.Topic, fp.Partition}, fp.Records); p != nil {
					taken = append(taken, takenRecords[K, E]{p: p, recs: fp.Records})
				}
			}
		})
		c.decodeAll(taken)
		var err error
		for _, tr := range taken {
			if err = c.take(tr.p, tr.items); err != nil {
				break
			}
		}
		c.client().AllowRebalance()
		if err != nil {
			return err
		}
	}
}

// takenRecords are the records one poll brought of an active partition,
// and once decoded, their items.
type takenRecords[K comparable, E Keyed[K]] struct {
	p     *partition[K, E]
	recs  []*kgo.Record
	items []*pending[E]
}

// decodeMin is the number of records of one poll from which the consumer
// decodes them on several goroutines.
const decodeMin = 256

// decodeAll decodes the records of taken into their items. Decoding (a
// codec's JSON, say) is most of what the consumer does per record, and the
// rest of its feeding is one goroutine's: a poll of many records is decoded
// by up to GOMAXPROCS goroutines, each a contiguous share of the records,
// so that the order of the records of a partition is kept.
func (c *Consumer[K, E]) decodeAll(taken []takenRecords[K, E]) {
	n := 0
	for i := range taken {
		// One slab of items per partition's records rather than an
		// allocation per record; the stash of a blocked partition keeps
		// the slab until its last item is taken.
		slab := make([]pending[E], len(taken[i].recs))
		items := make([]*pending[E], len(slab))
		for j := range slab {
			items[j] = &slab[j]
		}
		taken[i].items = items
		n += len(taken[i].recs)
	}
	decodeRange := func(from, to int) {
		at := 0 // the first record of taken[i], counted over all of taken
		for i := range taken {
			tr := &taken[i]
			lo, hi := max(from-at, 0), min(to-at, len(tr.recs))
			for j := lo; j < hi; j++ {
				c.decode(tr.recs[j], tr.items[j])
			}
			at += len(tr.recs)
			if at >= to {
				return
			}
		}
	}
	g := min(goruntime.GOMAXPROCS(0), n/(decodeMin/2))
	if g <= 1 {
		decodeRange(0, n)
		return
	}
	var wg sync.WaitGroup
	for k := 1; k < g; k++ {
		wg.Go(func() { decodeRange(k*n/g, (k+1)*n/g) })
	}
	decodeRange(0, n/g)
	wg.Wait()
}

// watermark records the high watermark a fetch reported, for the lag.
func (c *Consumer[K, E]) watermark(t tp, hw int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.parts[t]; p != nil && hw >= 0 {
		p.highWatermark = hw
	}
}

// accept counts the records polled from partition t and returns the
// partition, or nil when it is not active (its records are dropped).
func (c *Consumer[K, E]) accept(t tp, recs []*kgo.Record) *partition[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.parts[t]
	if p == nil || p.state != active {
		return nil
	}
	c.stats.Polled += uint64(len(recs))
	c.consumed[t.topic] += uint64(len(recs))
	return p
}

// take feeds the decoded records polled from one partition.
func (c *Consumer[K, E]) take(p *partition[K, E], items []*pending[E]) error {
	c.mu.Lock()
	if p.blocked {
		p.stash = append(p.stash, items...)
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return c.submit(p, items)
}

// decode turns a record into it: an event, or a bad record with its
// reason.
func (c *Consumer[K, E]) decode(r *kgo.Record, it *pending[E]) {
	it.rec = r
	bad := func(reason Reason, err error) {
		it.reason, it.err = reason, err
	}
	var typ []byte
	found := false
	for _, h := range r.Headers {
		if h.Key == HeaderType {
			typ, found = h.Value, true
		}
	}
	if !found {
		bad(ReasonMissingType, fmt.Errorf("no %s header", HeaderType))
		return
	}
	if len(r.Key) == 0 && !c.cfg.AcceptKeyless {
		bad(ReasonMissingKey, errors.New("the record has no key"))
		return
	}
	ev, err := c.cfg.Codec.Decode(string(typ), r.Value)
	switch {
	case errors.Is(err, durable.ErrUnknownEventType):
		bad(ReasonUnknownType, err)
		return
	case err != nil:
		bad(ReasonUndecodable, err)
		return
	}
	it.event = ev
	if len(r.Key) > 0 {
		if err := checkRecordKey(r.Key, ev.EventKey()); err != nil {
			bad(err.reason, err.err)
		}
	}
}

// keyMismatch is why a record's key does not go with its event.
type keyMismatch struct {
	reason Reason
	err    error
}

// checkRecordKey checks that a record's key is the text form of its
// event's key. A string key is compared as it is, without decoding it
// (which, through reflection, costs two allocations per record).
func checkRecordKey[K comparable](raw []byte, key K) *keyMismatch {
	if s, ok := any(key).(string); ok {
		if string(raw) != s {
			return &keyMismatch{ReasonKeyMismatch, fmt.Errorf("record key %q, event key %q", raw, s)}
		}
		return nil
	}
	got, err := durable.DecodeKey[K](string(raw))
	if err != nil {
		return &keyMismatch{ReasonUndecodable, err}
	}
	if got != key {
		text, _ := durable.EncodeKey(key)
		if !bytes.Equal([]byte(text), raw) {
			return &keyMismatch{ReasonKeyMismatch, fmt.Errorf("record key %q, event key %q", raw, text)}
		}
	}
	return nil
}

// submit takes items, in order, and offers them to the target. When the
// lanes refuse one for lack of room, or taking the next would let the
// commit metadata pass its bound, the rest wait in the partition's stash
// and the partition's fetching pauses. The source is never called with
// c.mu held (its lock comes first).
func (c *Consumer[K, E]) submit(p *partition[K, E], items []*pending[E]) error {
	c.mu.Lock()
	p.trk.measure()
	c.mu.Unlock()
	// Submitted is counted here and added to the stats once, at the end,
	// rather than under c.mu once more per record.
	submitted := uint64(0)
	// The records of one call are taken at one time: the clock is read
	// once, not per record.
	var at int64
	defer func() {
		if submitted > 0 {
			c.mu.Lock()
			c.stats.Submitted += submitted
			c.mu.Unlock()
		}
	}()
	for i, it := range items {
		if it.tag == 0 {
			c.mu.Lock()
			if p.state != active {
				c.mu.Unlock()
				return nil
			}
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
				c.block(p, items[i:], PausedMetadata)
				c.mu.Unlock()
				return nil
			}
			if at == 0 {
				at = now()
			}
			p.trk.add(o, at)
			c.mu.Unlock()
			tag, err := c.source().Take(p.own, record[K, E]{p, o})
			if err != nil { // the ownership ended meanwhile
				return nil
			}
			it.tag = tag
		}
		if it.reason != "" {
			c.deadLetter(p, it)
			continue
		}
		err := c.source().Offer(c.nowait, it.tag, it.event)
		switch {
		case err == nil:
			submitted++
		case errors.Is(err, transport.ErrOwnershipEnded):
			return nil
		case errors.Is(err, runtime.ErrBacklogFull) || errors.Is(err, context.Canceled):
			c.mu.Lock()
			if p.state == active {
				c.block(p, items[i:], PausedBacklog)
			}
			c.mu.Unlock()
			return nil
		case errors.Is(err, runtime.ErrInvalidEvent):
			it.reason, it.err = ReasonInvalidEvent, err
			c.deadLetter(p, it)
		default:
			return fmt.Errorf("kafka: submit %s[%d] offset %d: %w", p.topic, p.partition, it.rec.Offset, err)
		}
	}
	c.mu.Lock()
	if p.state == active {
		c.unblock(p)
	}
	c.mu.Unlock()
	return nil
}

// retryBlocked offers the stashed records of the blocked partitions again.
func (c *Consumer[K, E]) retryBlocked() error {
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
		if err := c.submit(p, items); err != nil {
			return err
		}
	}
	return nil
}

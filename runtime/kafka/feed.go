package kafka

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime/transport"
)

// feed polls records and gives them to their partitions' streams until
// Close or ctx's end, or until the target fails.
func (c *Consumer[K, E]) feed(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.life.Closing():
			return nil
		default:
		}
		if err := c.retry(); err != nil {
			return err
		}
		parks := c.in.Parks() // before the look: WaitRoom returns if one parks after it
		unsettled := c.in.Unsettled()
		c.noteIntake(unsettled)
		if unsettled >= c.cfg.MaxInFlight {
			c.in.WaitRoom(ctx, c.life.Closing(), c.cfg.MaxInFlight, parks)
			continue
		}
		pctx, cancel := context.WithCancel(ctx)
		c.mu.Lock()
		c.pollCancel = cancel
		c.mu.Unlock()
		select {
		case <-c.wake:
			cancel()
		case <-c.life.Closing():
			cancel()
		default:
		}
		// Rebalances wait from this poll until AllowRebalance, so the
		// records polled belong to the partitions' current ownership.
		fetches := c.client().PollRecords(pctx, min(c.cfg.MaxInFlight-unsettled, c.cfg.MaxPollRecords))
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
		var taken []polled[K, E]
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if p := c.accept(tp{fp.Topic, fp.Partition}, fp.HighWatermark, len(fp.Records)); p != nil && len(fp.Records) > 0 {
				taken = append(taken, polled[K, E]{p: p, recs: fp.Records})
			}
		})
		c.decodeAll(taken)
		var err error
		for _, pr := range taken {
			if err = c.take(pr.p, pr.ms, false); err != nil {
				break
			}
		}
		// The streams copied what they keep: the messages' buffer is the
		// next poll's, holding none of this one's events and records.
		clear(c.msgs)
		c.client().AllowRebalance()
		if err != nil {
			return err
		}
	}
}

// noteIntake records whether the consumer's MaxInFlight is full, and
// whether parked records fill it.
func (c *Consumer[K, E]) noteIntake(unsettled int) {
	c.watch.Look(unsettled, c.cfg.MaxInFlight, c.in.Parked, nil)
}

// retry offers the waiting records of the paused partitions again.
func (c *Consumer[K, E]) retry() error {
	for _, p := range c.all() {
		if p.stream.Waiting() {
			if err := c.take(p, nil, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// take gives ms, polled from p, to p's stream (retry: its waiting records
// again), with the size of p's commit metadata measured for the bound
// Admit checks.
func (c *Consumer[K, E]) take(p *partition[K, E], ms []transport.Message[E, record[K, E]], retry bool) error {
	c.mu.Lock()
	p.trk.Measure()
	c.takenAt = now()
	c.mu.Unlock()
	if retry {
		return p.stream.Retry()
	}
	return p.stream.Receive(ms)
}

// polled are the records one poll brought of an active partition, and
// once decoded, their messages.
type polled[K comparable, E any] struct {
	p    *partition[K, E]
	recs []*kgo.Record
	ms   []transport.Message[E, record[K, E]]
}

// decodeMin is the number of records of one poll from which the consumer
// decodes them on several goroutines.
const decodeMin = 256

// decodeChunk is how many records a decoding goroutine claims at a time.
const decodeChunk = 32

// decodeAll decodes the records of taken into their messages, in the
// feeder's buffer of messages (c.msgs), which every poll reuses. Decoding (a
// codec's JSON, say) is most of what the consumer does per record, and the
// rest of its feeding is one goroutine's: a poll of many records is decoded
// by up to GOMAXPROCS goroutines, the feeder among them, each claiming
// chunks of decodeChunk records until none is left. Each record is decoded
// into its own message, so the order of a partition's records is kept
// whoever decodes them; and the feeder, which waits for the last chunk,
// does not wait for a share given to a goroutine that the workers keep
// from running (fixed shares made it wait for most of a share).
func (c *Consumer[K, E]) decodeAll(taken []polled[K, E]) {
	n := 0
	for i := range taken {
		n += len(taken[i].recs)
	}
	if cap(c.msgs) < n {
		c.msgs = make([]transport.Message[E, record[K, E]], n)
	}
	c.msgs = c.msgs[:n]
	at := 0
	for i := range taken {
		taken[i].ms = c.msgs[at : at+len(taken[i].recs) : at+len(taken[i].recs)]
		at += len(taken[i].recs)
	}
	decodeRange := func(from, to int) {
		var typ string // the last event type: records of one type share its string
		at := 0        // the first record of taken[i], counted over all of taken
		for i := range taken {
			pr := &taken[i]
			lo, hi := max(from-at, 0), min(to-at, len(pr.recs))
			for j := lo; j < hi; j++ {
				c.decode(pr.p, pr.recs[j], &pr.ms[j], &typ)
			}
			at += len(pr.recs)
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
	var claimed atomic.Int64
	decodeChunks := func() {
		for {
			from := int(claimed.Add(decodeChunk)) - decodeChunk
			if from >= n {
				return
			}
			decodeRange(from, min(from+decodeChunk, n))
		}
	}
	var wg sync.WaitGroup
	for range g - 1 {
		wg.Go(decodeChunks)
	}
	decodeChunks()
	wg.Wait()
}

// accept counts the records polled from partition t, records its high
// watermark, and returns the partition, or nil when it is not active (its
// records are dropped).
func (c *Consumer[K, E]) accept(t tp, hw int64, n int) *partition[K, E] {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.parts[t]
	if p == nil || p.state != active {
		return nil
	}
	if hw >= 0 {
		p.highWatermark = hw
	}
	c.stats.Polled += uint64(n)
	c.consumed[t.topic] += uint64(n)
	return p
}

// decode turns record r of p into m: an event, or a bad record with its
// reason. lastType is the event type of the record decoded before, whose
// string a record of the same type reuses instead of allocating its own.
func (c *Consumer[K, E]) decode(p *partition[K, E], r *kgo.Record, m *transport.Message[E, record[K, E]], lastType *string) {
	// Raw is kept while the record waits to be offered, for a dead letter;
	// once offered, nothing of the fetch's buffers stays in the lanes.
	m.Handle, m.Raw = record[K, E]{p, r.Offset}, r
	var typ string
	for _, h := range r.Headers { // one pass for the type and the trace context
		switch h.Key {
		case transport.HeaderType:
			if string(h.Value) != *lastType { // compared without a copy
				*lastType = string(h.Value)
			}
			typ = *lastType
		case transport.HeaderTraceParent:
			m.Trace.Parent = string(h.Value)
		case transport.HeaderTraceState:
			m.Trace.State = string(h.Value)
		}
	}
	if m.Trace.Parent == "" {
		m.Trace = transport.Trace{} // a state without a parent is no context
	}
	m.Event, m.Bad = c.dec.DecodeBytes(typ, r.Key, r.Value)
	if m.Bad != nil {
		m.Key, m.ID = string(r.Key), fmt.Sprintf("%s[%d]@%d", r.Topic, r.Partition, r.Offset)
	}
}

package kafka

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// deadLetter writes a bad record to the dead-letter topic. The record is
// finished when the write is acknowledged; if the write fails, it stays
// unfinished in this process (the next owner or a restart offers it
// again) and the partition goes on.
func (c *Consumer[K, E]) deadLetter(p *partition[K, E], it *pending[E]) {
	r := it.rec
	headers := make([]kgo.RecordHeader, 0, len(r.Headers)+6)
	headers = append(headers, r.Headers...)
	errText := ""
	if it.err != nil {
		errText = it.err.Error()
	}
	headers = append(headers,
		kgo.RecordHeader{Key: HeaderReason, Value: []byte(it.reason)},
		kgo.RecordHeader{Key: HeaderError, Value: []byte(errText)},
		kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderPartition, Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
		kgo.RecordHeader{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		kgo.RecordHeader{Key: HeaderGroup, Value: []byte(c.cfg.Group)},
	)
	dl := &kgo.Record{Topic: c.cfg.DeadLetterTopic, Key: r.Key, Value: r.Value, Headers: headers}
	tag, reason, offset := it.tag, it.reason, r.Offset
	c.mu.Lock()
	p.deadLetters++
	c.mu.Unlock()
	c.client().Produce(context.Background(), dl, func(_ *kgo.Record, err error) {
		st := transport.Finished
		c.mu.Lock()
		if err != nil {
			st = transport.Unfinished
			c.stats.DeadLetterErrors++
			c.cfg.Logger.Error("ordergen/kafka: dead-letter write failed; the record stays unfinished",
				"topic", p.topic, "partition", p.partition, "offset", offset, "reason", reason, "error", err)
		} else {
			c.stats.DeadLettered++
			c.deadByWhy[reason]++
			c.cfg.Logger.Warn("ordergen/kafka: record dead-lettered",
				"topic", p.topic, "partition", p.partition, "offset", offset, "reason", reason, "to", c.cfg.DeadLetterTopic)
		}
		c.mu.Unlock()
		if err := c.source().Resolve(tag, st); err != nil {
			c.cfg.Logger.Error("ordergen/kafka: dead-lettered record not settled", "topic", p.topic, "partition", p.partition, "offset", offset, "error", err)
		}
		c.mu.Lock()
		p.deadLetters--
		if p.deadLetters == 0 && p.written != nil {
			close(p.written)
			p.written = nil
		}
		c.mu.Unlock()
	})
}

// awaitDeadLetters waits until the dead-letter writes of ps in flight were
// answered, or ctx ends, so that the records they wrote are finished before
// their ownership ends.
func (c *Consumer[K, E]) awaitDeadLetters(ctx context.Context, ps []*partition[K, E]) {
	for _, p := range ps {
		c.mu.Lock()
		if p.deadLetters == 0 {
			c.mu.Unlock()
			continue
		}
		if p.written == nil {
			p.written = make(chan struct{})
		}
		ch, n := p.written, p.deadLetters
		c.mu.Unlock()
		c.cfg.Logger.Debug("ordergen/kafka: waiting for dead-letter writes before the partition's ownership ends",
			"topic", p.topic, "partition", p.partition, "writes", n)
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// DeadLetters returns a runtime.DeadLetterSink, for the runtime.SendToDeadLetter
// exhaustion policy, that writes each event a handler gave up on to topic
// through cl: keyed by its key, encoded by codec, with the HeaderType,
// HeaderReason (ReasonHandlerFailed), HeaderError and HeaderAttempts
// headers. It returns once the write is acknowledged; when the write fails
// the runtime parks the event instead, so nothing is lost.
func DeadLetters[K comparable, E any](cl *kgo.Client, topic string, codec durable.Codec[E]) runtime.DeadLetterSink[K, E] {
	w := &writer[K, E]{cl: cl, topic: topic, codec: codec}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		r := new(kgo.Record)
		if err := w.fill(r, dl.Key, dl.Event); err != nil { // the record a producer would write
			return fmt.Errorf("kafka: dead letter: %w", err)
		}
		errText := ""
		if dl.Err != nil {
			errText = dl.Err.Error()
		}
		r.Headers = append(r.Headers,
			kgo.RecordHeader{Key: HeaderReason, Value: []byte(ReasonHandlerFailed)},
			kgo.RecordHeader{Key: HeaderError, Value: []byte(errText)},
			kgo.RecordHeader{Key: HeaderAttempts, Value: []byte(strconv.Itoa(dl.Attempts))},
		)
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return fmt.Errorf("kafka: dead letter of key %s to %s: %w", r.Key, topic, err)
		}
		return nil
	}
}

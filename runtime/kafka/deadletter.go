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

// deadLetter writes a bad record to the dead-letter topic: its key, value
// and headers, and the headers that say why and where it came from. The
// intake settles the record on the answer: finished once written; if the
// write fails, it stays unfinished in this process (the next owner or a
// restart offers it again) and the partition goes on.
func (c *Consumer[K, E]) deadLetter(m transport.Message[E, record[K, E]], done func(error)) {
	r, _ := m.Raw.(*kgo.Record)
	if r == nil {
		done(fmt.Errorf("kafka: dead letter of offset %d: the record is gone", m.Handle.offset))
		return
	}
	dl := &kgo.Record{Topic: c.cfg.DeadLetterTopic, Key: r.Key, Value: r.Value,
		Headers: append(append(make([]kgo.RecordHeader, 0, len(r.Headers)+6), r.Headers...), headers(transport.DeadLetterHeaders(m.Bad.Reason, m.Bad.Err, 0))...)}
	dl.Headers = append(dl.Headers,
		kgo.RecordHeader{Key: HeaderTopic, Value: []byte(r.Topic)},
		kgo.RecordHeader{Key: HeaderPartition, Value: []byte(strconv.FormatInt(int64(r.Partition), 10))},
		kgo.RecordHeader{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		kgo.RecordHeader{Key: HeaderGroup, Value: []byte(c.cfg.Group)},
	)
	c.client().Produce(context.Background(), dl, func(_ *kgo.Record, err error) { done(err) })
}

// headers converts the kit's headers to a record's.
func headers(hs []transport.Header) []kgo.RecordHeader {
	out := make([]kgo.RecordHeader, len(hs))
	for i, h := range hs {
		out[i] = kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)}
	}
	return out
}

// DeadLetters returns a runtime.DeadLetterSink, for the
// runtime.SendToDeadLetter exhaustion policy, that writes each event a
// handler gave up on to topic through cl: keyed by its key, encoded by
// codec, with the transport.HeaderType header and the transport's
// dead-letter headers (reason transport.ReasonHandlerFailed, the error,
// the attempts). It returns once the write is acknowledged; when the write
// fails the runtime parks the event instead, so nothing is lost.
func DeadLetters[K comparable, E any](cl *kgo.Client, topic string, codec durable.Codec[E]) runtime.DeadLetterSink[K, E] {
	w := &writer[K, E]{cl: cl, topic: topic, codec: codec}
	return func(ctx context.Context, dl runtime.DeadLetterEvent[K, E]) error {
		r := new(kgo.Record)
		if err := w.fill(r, dl.Key, dl.Event); err != nil { // the record a producer would write
			return fmt.Errorf("kafka: dead letter: %w", err)
		}
		r.Headers = append(r.Headers, headers(transport.DeadLetterHeaders(transport.ReasonHandlerFailed, dl.Err, dl.Attempts))...)
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			return fmt.Errorf("kafka: dead letter of key %s to %s: %w", r.Key, topic, err)
		}
		return nil
	}
}

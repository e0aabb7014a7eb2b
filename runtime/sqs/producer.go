package sqs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
	"github.com/ordergen/ordergen/runtime/transport"
)

// Versioned is an event that knows its version: generated events of an
// entity with a version are. The producer makes their deduplication ID
// from the key and the version.
type Versioned interface {
	EventVersion() uint64
}

// Producer sends the events of one entity to a FIFO queue: one message per
// event, with the event's key as its message group ID (MessageGroupID),
// the codec's encoding as its body and the event type in the
// transport.HeaderType attribute. The deduplication ID is the group ID and
// the event's version (events that are Versioned), so that a send retried
// within SQS's five-minute window is not queued twice; events without a
// version get a random one. It is a transport.AsyncSink, so a generated
// AccountProducer publishes through it.
//
// Sends go out in batches of up to ten (SendMessageBatch), one batch at a
// time per shard of keys, with at most one message of a key per batch, so
// a key's events reach the queue in the order of the calls. Once a send of
// a key fails, its later sends fail at once with an error wrapping
// transport.ErrKeyPaused until Resume(key); those of the key already
// handed over fail with it.
//
// Its methods (Send, SendAsync, Resume, Paused, Flush, Close) are its
// transport.OrderedSink's. SendAsync's done runs on the producer's
// goroutine: it must be fast and must not block. Close stops accepting
// sends (they fail with runtime.ErrClosed), waits for those in flight (or
// its context) and stops the producer's goroutines.
type Producer[K comparable, E any] struct {
	*transport.OrderedSink[K, E]
}

// senders is the number of shards of keys that send at once.
const senders = 4

// ProducerConfig configures a Producer of the events E of one entity.
type ProducerConfig[E any] struct {
	// Client is the SQS client, as the consumer's Config.Client. Required.
	Client *sqs.Client
	// QueueURL is the FIFO queue's URL, as the consumer's. Required.
	QueueURL string
	// Codec encodes the events. Required; ordergen generates one per
	// entity (AccountCodec).
	Codec durable.Codec[E]
}

// NewProducer returns a producer for cfg. It refuses, with an error
// wrapping runtime.ErrInvalidConfig, a queue URL that is not a FIFO
// queue's and a key type that is neither a string nor an integer.
func NewProducer[K comparable, E any](cfg ProducerConfig[E]) (*Producer[K, E], error) {
	switch {
	case cfg.Client == nil:
		return nil, fmt.Errorf("sqs: %w: no Client", runtime.ErrInvalidConfig)
	case cfg.Codec == nil:
		return nil, fmt.Errorf("sqs: %w: no Codec", runtime.ErrInvalidConfig)
	case !strings.HasSuffix(cfg.QueueURL, ".fifo"):
		return nil, fmt.Errorf("sqs: %w: queue %q is not a FIFO queue: a standard queue does not order", runtime.ErrInvalidConfig, cfg.QueueURL)
	}
	if _, err := MessageGroupID(*new(K)); err != nil {
		return nil, fmt.Errorf("sqs: %w", err)
	}
	w := &writer[K, E]{client: cfg.Client, url: cfg.QueueURL, codec: cfg.Codec, seed: maphash.MakeSeed()}
	for i := range w.shards {
		sh := &w.shards[i]
		sh.wake = make(chan struct{}, 1)
		sh.stop = make(chan struct{})
		sh.done = make(chan struct{})
		sh.failed = map[string]uint64{}
		go w.run(sh)
	}
	sink, err := transport.NewOrderedSink[K, E](w)
	if err != nil {
		_ = w.Close(context.Background())
		return nil, err
	}
	return &Producer[K, E]{sink}, nil
}

// writer is the SQS send an OrderedSink drives.
type writer[K comparable, E any] struct {
	client *sqs.Client
	url    string
	codec  durable.Codec[E]
	seed   maphash.Seed
	shards [senders]shard
}

// Close stops the senders: what is queued then fails.
func (w *writer[K, E]) Close(context.Context) error {
	for i := range w.shards {
		close(w.shards[i].stop)
		<-w.shards[i].done
	}
	return nil
}

// shard sends the messages of its keys, a batch at a time.
type shard struct {
	mu     sync.Mutex // guards queue, seq and failed
	queue  []*outgoing
	seq    uint64
	failed map[string]uint64 // group -> the last seq queued when a send of it failed
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// outgoing is one message handed to a shard.
type outgoing struct {
	entry types.SendMessageBatchRequestEntry
	group string
	seq   uint64
	done  func(error)
}

func (w *writer[K, E]) Write(ctx context.Context, key K, event E, done func(error)) {
	entry, group, err := w.entry(key, event)
	if err != nil {
		done(err)
		return
	}
	addTrace(entry.MessageAttributes, transport.TraceOf(ctx))
	sh := &w.shards[maphash.Comparable(w.seed, key)%senders]
	sh.mu.Lock()
	sh.seq++
	sh.queue = append(sh.queue, &outgoing{entry: entry, group: group, seq: sh.seq, done: done})
	sh.mu.Unlock()
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

// run sends sh's queue until stop: what is queued when stop comes is
// answered with an error.
func (w *writer[K, E]) run(sh *shard) {
	defer close(sh.done)
	for {
		batch := w.next(sh)
		if batch == nil {
			select {
			case <-sh.wake:
				continue
			case <-sh.stop:
				sh.mu.Lock()
				rest := sh.queue
				sh.queue = nil
				sh.mu.Unlock()
				for _, o := range rest {
					o.done(fmt.Errorf("sqs: send of group %s: the producer closed", o.group))
				}
				return
			}
		}
		w.send(sh, batch)
	}
}

// next takes the next batch from sh's queue: up to ten messages, at most
// one of a group. Messages of a group whose earlier send failed after they
// were queued fail at once.
func (w *writer[K, E]) next(sh *shard) []*outgoing {
	sh.mu.Lock()
	var batch []*outgoing
	var failed []*outgoing
	groups := map[string]bool{}
	i := 0
	for ; i < len(sh.queue) && len(batch) < 10; i++ {
		o := sh.queue[i]
		if upTo, ok := sh.failed[o.group]; ok && o.seq <= upTo {
			failed = append(failed, o)
			continue
		}
		if groups[o.group] {
			break
		}
		groups[o.group] = true
		batch = append(batch, o)
	}
	sh.queue = sh.queue[i:]
	for g, upTo := range sh.failed {
		if len(sh.queue) == 0 || sh.queue[0].seq > upTo {
			delete(sh.failed, g)
		}
	}
	sh.mu.Unlock()
	for _, o := range failed {
		o.done(fmt.Errorf("sqs: send of group %s: %w: an earlier send of the group failed", o.group, transport.ErrKeyPaused))
	}
	return batch
}

// send sends one batch and answers each of its messages.
func (w *writer[K, E]) send(sh *shard, batch []*outgoing) {
	entries := make([]types.SendMessageBatchRequestEntry, len(batch))
	for i, o := range batch {
		entries[i] = o.entry
		entries[i].Id = aws.String(strconv.Itoa(i))
	}
	out, err := w.client.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: &w.url, Entries: entries})
	errs := make([]error, len(batch))
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("sqs: send of group %s: %w", batch[i].group, err)
		}
	} else {
		answered := make([]bool, len(batch))
		for _, s := range out.Successful {
			if i, err := strconv.Atoi(aws.ToString(s.Id)); err == nil && i < len(batch) {
				answered[i] = true
			}
		}
		for _, f := range out.Failed {
			if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i < len(batch) {
				answered[i] = true
				errs[i] = fmt.Errorf("sqs: send of group %s: %s: %s", batch[i].group, aws.ToString(f.Code), aws.ToString(f.Message))
			}
		}
		for i := range batch {
			if !answered[i] {
				errs[i] = fmt.Errorf("sqs: send of group %s: no answer for the message", batch[i].group)
			}
		}
	}
	for i, o := range batch {
		if errs[i] != nil {
			sh.mu.Lock()
			sh.failed[o.group] = sh.seq
			sh.mu.Unlock()
		}
		o.done(errs[i])
	}
}

// entry returns the batch entry of event.
func (w *writer[K, E]) entry(key K, event E) (types.SendMessageBatchRequestEntry, string, error) {
	group, err := MessageGroupID(key)
	if err != nil {
		return types.SendMessageBatchRequestEntry{}, "", err
	}
	name, data, err := w.codec.Encode(event)
	if err != nil {
		return types.SendMessageBatchRequestEntry{}, "", fmt.Errorf("sqs: encode an event of group %s: %w", group, err)
	}
	var dedup string
	if v, ok := any(event).(Versioned); ok {
		dedup = deduplicationID(group, v.EventVersion())
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		dedup = hex.EncodeToString(b[:])
	}
	body, attrs := encodeBody(data)
	attrs[transport.HeaderType] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(name)}
	return types.SendMessageBatchRequestEntry{
		MessageBody:            aws.String(body),
		MessageGroupId:         aws.String(group),
		MessageDeduplicationId: aws.String(dedup),
		MessageAttributes:      attrs,
	}, group, nil
}

// encodeBody returns the body of data: data itself when SQS takes it as
// text, its base64 otherwise (with AttrEncoding).
func encodeBody(data []byte) (string, map[string]types.MessageAttributeValue) {
	attrs := map[string]types.MessageAttributeValue{}
	if len(data) > 0 && utf8.Valid(data) && sqsText(string(data)) {
		return string(data), attrs
	}
	attrs[AttrEncoding] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("base64")}
	return base64.StdEncoding.EncodeToString(data), attrs
}

// sqsText reports whether s has only the characters SQS allows in a body:
// #x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF.
func sqsText(s string) bool {
	for _, r := range s {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

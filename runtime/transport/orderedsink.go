package transport

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/internal/notify"
)

// The producing half of the transport contract: typed producers (a
// generated AccountProducer) send through an AsyncSink without waiting for
// the broker, and an OrderedSink gives any broker's asynchronous write the
// same per-key order and failure rule.

// ErrKeyPaused is wrapped by the error of a send that an AsyncSink refused
// without handing it over because an earlier send of its key failed: the
// key stays paused until Resume, so that a later event never lands after a
// gap the caller has not dealt with.
var ErrKeyPaused = errors.New("ordergen: key paused after a failed send")

// AsyncSink is a Sink that also hands events over without waiting for the
// broker's answer.
//
// Order: events sent (SendAsync or Send) by one goroutine for one key reach
// the broker in that order. Failure rule: once a send of a key fails, every
// later send of that key fails at once with an error wrapping
// ErrKeyPaused, without being handed over, until Resume(key); sends of the
// key handed over before the failure reach their own outcome. This is the
// rule of Google Pub/Sub's clients for ordering keys (ResumePublish).
type AsyncSink[K comparable, E any] interface {
	Sink[K, E]
	// SendAsync hands event, keyed by key, over and calls done once with
	// the broker's answer (nil once it durably took the event), perhaps
	// before SendAsync returns. done is called from the transport's
	// goroutine: it must be fast and must not block.
	SendAsync(ctx context.Context, key K, event E, done func(error))
	// Resume lets key's sends through again after a failure paused it.
	Resume(key K)
	// Flush waits until every send handed over has been answered, or ctx
	// ends.
	Flush(ctx context.Context) error
}

// Writer is one broker's asynchronous write, which an OrderedSink drives.
type Writer[K comparable, E any] interface {
	// Write hands event, keyed by key, to the broker and calls done exactly
	// once with its answer, perhaps before Write returns. Writes of one key
	// must reach the broker in the order of the calls (Kafka: the key picks
	// the partition and idempotent writes keep retries in order).
	Write(ctx context.Context, key K, event E, done func(error))
}

// SyncWriter is a Writer that also writes one event and waits for the
// broker's answer itself, faster than waiting for Write's callback (a
// Kafka client lingers to batch asynchronous records; a synchronous one
// goes at once).
type SyncWriter[K comparable, E any] interface {
	Writer[K, E]
	// WriteSync hands event, keyed by key, to the broker and returns its
	// answer.
	WriteSync(ctx context.Context, key K, event E) error
}

// BufferingWriter is a Writer that holds writes back to batch them (a
// Kafka client lingers): Flush sends what it holds at once and waits for
// the answers.
type BufferingWriter[K comparable, E any] interface {
	Writer[K, E]
	// Flush sends every write held back and returns once all writes handed
	// to it were answered, or ctx ended.
	Flush(ctx context.Context) error
}

// ClosingWriter is a Writer with resources of its own (a channel, a client
// it made, goroutines): OrderedSink.Close closes it, once, after the sends
// in flight were answered or Close's context ended.
type ClosingWriter[K comparable, E any] interface {
	Writer[K, E]
	// Close releases what the writer holds; writes after it fail.
	Close(ctx context.Context) error
}

// ResumingWriter is a Writer whose broker client pauses a key itself after
// a failed write (Google Pub/Sub's publisher): OrderedSink.Resume resumes
// the key there first, so that a send it lets through never meets a
// paused client.
type ResumingWriter[K comparable, E any] interface {
	Writer[K, E]
	// Resume lets key's writes through the client again.
	Resume(key K)
}

// OrderedSink is an AsyncSink over a broker's Writer: it adds the failure
// rule (a failed send pauses its key until Resume) and Flush. Only a paused
// key holds memory, and while no key is paused a send takes no lock. It is
// safe for concurrent use.
type OrderedSink[K comparable, E any] struct {
	w      Writer[K, E]
	seed   maphash.Seed
	shards [sinkShards]sinkShard[K]
	paused atomic.Int64 // keys paused, over the shards

	pending atomic.Int64 // sends handed over and not answered
	closed  atomic.Bool
	drained notify.Notifier // signalled when pending reaches zero (Flush)
	closing sync.Once       // the writer's Close, once
	inject  Injector        // writes each send's trace context (Trace)
	wclose  error           // its result, set in closing
}

// sinkShards spreads the keys' state over locks.
const sinkShards = 64

type sinkShard[K comparable] struct {
	// mu guards paused.
	mu     sync.Mutex
	paused map[K]error // the keys paused, with the failure that paused each
}

var _ AsyncSink[string, any] = (*OrderedSink[string, any])(nil)

// NewOrderedSink returns an AsyncSink that writes through w.
func NewOrderedSink[K comparable, E any](w Writer[K, E]) (*OrderedSink[K, E], error) {
	if w == nil {
		return nil, fmt.Errorf("%w: an ordered sink needs a writer", runtime.ErrInvalidConfig)
	}
	s := &OrderedSink[K, E]{w: w, seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].paused = make(map[K]error)
	}
	return s, nil
}

func (s *OrderedSink[K, E]) shard(key K) *sinkShard[K] {
	return &s.shards[maphash.Comparable(s.seed, key)%sinkShards]
}

// SendAsync hands event over and calls done with the answer; see
// AsyncSink. After Close it fails with an error wrapping ErrClosed.
func (s *OrderedSink[K, E]) SendAsync(ctx context.Context, key K, event E, done func(error)) {
	if err := s.admit(key); err != nil {
		done(err)
		s.answered()
		return
	}
	s.w.Write(s.traced(ctx), key, event, func(err error) {
		if err != nil {
			s.pause(key, err)
		}
		done(err)
		s.answered()
	})
}

// Send hands event over and waits for the answer; see AsyncSink. It waits
// for the writer's answer even when ctx ends (the writer gives up on the
// event if it still can), so that its error tells whether the event was
// written. A writer that is also a SyncWriter writes it itself.
func (s *OrderedSink[K, E]) Send(ctx context.Context, key K, event E) error {
	sw, ok := s.w.(SyncWriter[K, E])
	if !ok {
		ch := make(chan error, 1)
		s.SendAsync(ctx, key, event, func(err error) { ch <- err })
		return <-ch
	}
	err := s.admit(key)
	if err == nil {
		if err = sw.WriteSync(s.traced(ctx), key, event); err != nil {
			s.pause(key, err)
		}
	}
	s.answered()
	return err
}

// admit counts a send in flight for Flush, or refuses it: after Close, or
// while its key is paused. Either way answered must follow.
func (s *OrderedSink[K, E]) admit(key K) error {
	s.pending.Add(1) // before the closed check: Close's Flush sees this send
	if s.closed.Load() {
		return fmt.Errorf("send of key %v: %w", key, runtime.ErrClosed)
	}
	if s.paused.Load() == 0 {
		return nil // the common case: no lock
	}
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if failed, ok := sh.paused[key]; ok {
		return fmt.Errorf("send of key %v: %w until Resume: %w", key, ErrKeyPaused, failed)
	}
	return nil
}

// pause pauses key after its send failed with err, unless it is paused
// already.
func (s *OrderedSink[K, E]) pause(key K, err error) {
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.paused[key]; !ok {
		sh.paused[key] = err
		s.paused.Add(1)
	}
}

// Resume lets key's sends through again after a failure paused it (in the
// writer first, when it is a ResumingWriter). It does nothing for a key
// that is not paused.
func (s *OrderedSink[K, E]) Resume(key K) {
	if rw, ok := s.w.(ResumingWriter[K, E]); ok {
		rw.Resume(key)
	}
	sh := s.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.paused[key]; ok {
		delete(sh.paused, key)
		s.paused.Add(-1)
	}
}

// Paused returns the keys paused by a failed send, each with the failure
// that paused it.
func (s *OrderedSink[K, E]) Paused() map[K]error {
	out := make(map[K]error)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for k, err := range sh.paused {
			out[k] = err
		}
		sh.mu.Unlock()
	}
	return out
}

// Flush waits until every send handed over has been answered (its done
// called), or until ctx ends. A BufferingWriter is told to send what it
// holds back first.
func (s *OrderedSink[K, E]) Flush(ctx context.Context) error {
	if bw, ok := s.w.(BufferingWriter[K, E]); ok {
		if err := bw.Flush(ctx); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
	ch := s.drained.Register() // before looking: an answer that empties pending sees it
	defer s.drained.Unregister()
	if s.pending.Load() == 0 {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("flush: %w", ctx.Err())
	}
}

// Close stops accepting sends (they fail with an error wrapping ErrClosed)
// and waits for those in flight, as Flush does; then it closes the writer
// when it is a ClosingWriter (once: a later Close returns its result
// again).
func (s *OrderedSink[K, E]) Close(ctx context.Context) error {
	s.closed.Store(true)
	err := s.Flush(ctx)
	if cw, ok := s.w.(ClosingWriter[K, E]); ok {
		s.closing.Do(func() { s.wclose = cw.Close(ctx) })
		err = errors.Join(err, s.wclose)
	}
	return err
}

// answered counts one send answered and wakes the Flush calls when none is
// left in flight.
func (s *OrderedSink[K, E]) answered() {
	if s.pending.Add(-1) == 0 {
		s.drained.BroadcastIfWaiting()
	}
}

// SendKeyed is what generated producers' PublishAsync does: it sends event
// through sink without waiting for the broker when sink is an AsyncSink,
// and otherwise sends it synchronously, then calls done once with the
// answer (perhaps before SendKeyed returns). A non-nil invalid is the
// producer's refusal of event: done gets it and nothing is sent. A nil
// done means the answer is not wanted.
func SendKeyed[K comparable, E Keyed[K]](ctx context.Context, sink Sink[K, E], event E, invalid error, done func(error)) {
	if done == nil {
		done = func(error) {}
	}
	switch {
	case invalid != nil:
		done(invalid)
	case sink == nil:
		done(fmt.Errorf("%w: no sink", runtime.ErrInvalidConfig))
	default:
		if a, ok := sink.(AsyncSink[K, E]); ok {
			a.SendAsync(ctx, event.EventKey(), event, done)
			return
		}
		done(sink.Send(ctx, event.EventKey(), event))
	}
}

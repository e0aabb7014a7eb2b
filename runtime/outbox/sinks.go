package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/transport"
)

// DispatchSink is the sink that delivers to an in-process dispatcher (any
// transport.Target: a generated dispatcher, transport.EngineTarget,
// transport.TopicTarget) and returns from Send only once every subscriber
// reached a final outcome for the event: handled, skipped, dead-lettered,
// or parked in a park store. So the relay marks an event sent once it was
// handled, and a crash before that sends it again (the subscribers'
// version guards skip what they had applied). Give every subscriber a park
// store (Config.Store of the generated config): an event parked in memory
// is not final, so its Send waits until SendTimeout, fails, and is retried.
//
// On SQLite a relay's round holds the database's write lock while it
// sends, so subscribers that write to the relay's own database
// (transactional handlers, a park store there) would wait for the round
// that waits for them: on SQLite use a DispatchSink only with subscribers
// that store elsewhere, or use PostgreSQL, where a round locks only its
// keys' rows.
//
// Wire it before the dispatcher exists, as a broker's consumer:
//
//	sink := outbox.NewDispatchSink[string, ledger.AccountEvent]()
//	d, err := ledger.NewAccountTxDispatcher(store, h, func(c *ledger.AccountConfig) {
//		c.OnOutcome = sink.OnOutcome
//	})
//	if err := sink.Attach(d); err != nil { ... }
type DispatchSink[K comparable, E transport.Keyed[K]] struct {
	// mu guards the fields below.
	mu     sync.Mutex
	source *transport.Source[K, E, chan transport.Settlement]
	own    *transport.Ownership
}

var _ transport.Sink[string, transport.Keyed[string]] = (*DispatchSink[string, transport.Keyed[string]])(nil)

// NewDispatchSink returns a sink to Attach to a dispatcher whose
// subscribers report to its OnOutcome.
func NewDispatchSink[K comparable, E transport.Keyed[K]]() *DispatchSink[K, E] {
	return &DispatchSink[K, E]{}
}

// Attach makes target the sink's destination. It refuses, with an error
// wrapping runtime.ErrInvalidConfig, a target whose subscribers cannot tell
// it when an event is finished (transport.CheckSubscriptions: one without
// OnOutcome, one under a drop backlog policy, ...), and a second Attach.
func (s *DispatchSink[K, E]) Attach(target transport.Target[E]) error {
	if target == nil {
		return fmt.Errorf("%w: outbox dispatch sink: nil target", runtime.ErrInvalidConfig)
	}
	src, err := transport.NewSource[K, E](target, func(done chan transport.Settlement, st transport.Settlement) { done <- st })
	if err != nil {
		return fmt.Errorf("outbox dispatch sink: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.source != nil {
		return fmt.Errorf("%w: outbox dispatch sink: attached twice", runtime.ErrInvalidConfig)
	}
	s.source, s.own = src, src.Own()
	return nil
}

// OnOutcome is told the outcome of each event the sink delivered: give it
// to every subscriber of the target (the OnOutcome field of a generated
// config).
func (s *DispatchSink[K, E]) OnOutcome(key K, tag uint64, o runtime.Outcome) {
	s.mu.Lock()
	src := s.source
	s.mu.Unlock()
	if src != nil {
		src.OnOutcome(key, tag, o)
	}
}

// ErrNotFinished is wrapped by the error of a DispatchSink's Send whose
// event did not finish in the dispatcher (a subscriber withdrew it, or it
// was closed): the relay sends it again.
var ErrNotFinished = errors.New("outbox: the dispatcher did not finish the event")

// Send hands event to the dispatcher and waits until every subscriber
// reached a final outcome for it, or ctx ends (the event then stays in the
// dispatcher: the relay sends it again later, and the version guards skip
// the copy). A refusal of the dispatcher (runtime.ErrBacklogFull,
// runtime.ErrClosed) is returned as it is.
func (s *DispatchSink[K, E]) Send(ctx context.Context, _ K, event E) error {
	s.mu.Lock()
	src, own := s.source, s.own
	s.mu.Unlock()
	if src == nil {
		return fmt.Errorf("%w: outbox dispatch sink: Send before Attach", runtime.ErrInvalidConfig)
	}
	done := make(chan transport.Settlement, 1)
	tag, err := src.Take(own, done)
	if err != nil {
		return err
	}
	if err := src.Offer(ctx, tag, event); err != nil {
		_ = src.Resolve(tag, transport.Unfinished) // held by no subscriber: refused by the first
		return err
	}
	select {
	case st := <-done:
		if st != transport.Finished {
			return fmt.Errorf("%w: %s", ErrNotFinished, st)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("outbox dispatch sink: waiting for the event's outcome: %w", ctx.Err())
	}
}

// PublisherSink is the sink of anything with a Publish method for the
// entity's events: a generated dispatcher or producer. Send returns once
// Publish did: for a dispatcher, once its lanes accepted the event, before
// it was handled, so that a crash then loses it from memory after the
// relay marked it sent. For crash safety into a dispatcher use
// DispatchSink; PublisherSink suits a producer, or a dispatcher whose
// events may be lost with the process.
func PublisherSink[K comparable, E any](p interface {
	Publish(ctx context.Context, e E) error
}) transport.Sink[K, E] {
	return publisherSink[K, E]{p}
}

type publisherSink[K comparable, E any] struct {
	p interface {
		Publish(ctx context.Context, e E) error
	}
}

func (s publisherSink[K, E]) Send(ctx context.Context, _ K, e E) error { return s.p.Publish(ctx, e) }
